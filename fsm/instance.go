package fsm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	looplab "github.com/looplab/fsm"
)

// Instance is a running machine backed by a looplab.FSM. Safe for concurrent
// use: Fire and SetState are serialized, so callbacks and OnTransition
// functions run one transition at a time, in firing order.
//
// Fire always calls looplab with context.Background() and a Callback cannot
// cancel or defer a transition, so the instance can never be left frozen in
// looplab's "in transition" state.
type Instance struct {
	m *Machine
	f *looplab.FSM

	// fireMu serializes Fire and SetState, callbacks and observers included.
	// It is not held by Current, Can, Available, History or OnTransition, so
	// those may be called from a Callback or an OnTransition function.
	fireMu sync.Mutex

	// recMu guards history and observers. Observers are only ever appended,
	// so Fire can call a snapshot of the slice without holding recMu.
	recMu     sync.Mutex
	history   []int32 // indices into m.edges: 4 bytes and no pointers per Fire
	observers []func(Edge)
}

// NewInstance returns a live looplab.FSM in m.Initial(), with m's callbacks.
func (m *Machine) NewInstance() *Instance {
	return &Instance{m: m, f: looplab.NewFSM(m.initial, m.llEvents, m.llCallbacks)}
}

// Machine returns the definition i runs.
func (i *Instance) Machine() *Machine { return i.m }

// Current returns the current state.
func (i *Instance) Current() string { return i.f.Current() }

// Can reports whether event can fire in the current state (a declared
// self-loop can). It reads the Machine's table, not looplab, so it is safe
// inside any Callback.
func (i *Instance) Can(event string) bool {
	_, ok := i.m.Lookup(i.f.Current(), event)
	return ok
}

// Available returns the events that can fire in the current state, sorted.
func (i *Instance) Available() []string { return i.m.Available(i.f.Current()) }

// Fire fires event on looplab and returns the edge taken. A declared
// self-loop (Src contains Dst) succeeds: looplab runs only its before_ and
// after_ callbacks and reports NoTransitionError, which Fire maps to nil. An
// event that cannot fire in the current state returns a *FireError naming
// the state, the event and the allowed events; it wraps ErrEventNotAllowed or
// ErrUnknownEvent and looplab's error (errors.As with
// looplab.InvalidEventError or looplab.UnknownEventError), and the state is
// unchanged. On success the edge is appended to History and passed to every
// OnTransition function, in registration order, before Fire returns.
//
// Fire must not be called from a Callback or an OnTransition function of the
// same Instance: it deadlocks.
func (i *Instance) Fire(event string) (Edge, error) {
	i.fireMu.Lock()
	defer i.fireMu.Unlock()

	from := i.f.Current()
	err := i.f.Event(context.Background(), event)
	id, declared := i.m.edgeID(from, event)
	if err != nil {
		// looplab returns NoTransitionError by value, unwrapped, for Src == Dst.
		noTransition, selfLoop := err.(looplab.NoTransitionError)
		if !(declared && i.m.edges[id].To == from && selfLoop && noTransition.Err == nil) {
			return Edge{}, i.fireError(from, event, err)
		}
	}
	if !declared {
		// Unreachable: looplab and the table are built from the same
		// transitions, and nothing else changes the state while fireMu is held.
		panic(fmt.Sprintf("fsm %q: internal error: looplab fired %q from %q, which the table does not declare", i.m.name, event, from))
	}
	e := i.m.edges[id]

	i.recMu.Lock()
	i.history = append(i.history, id)
	observers := i.observers
	i.recMu.Unlock()
	for _, f := range observers {
		f(e)
	}
	return e, nil
}

func (i *Instance) fireError(from, event string, err error) error {
	fe := &FireError{Machine: i.m.name, State: from, Event: event, Allowed: i.m.Available(from), Err: err}
	var unknown looplab.UnknownEventError
	var invalid looplab.InvalidEventError
	switch {
	case errors.As(err, &unknown):
		fe.kind = ErrUnknownEvent
	case errors.As(err, &invalid):
		fe.kind = ErrEventNotAllowed
	}
	return fe
}

// SetState moves the instance to s without firing an event: no callback
// runs, nothing is recorded in History and no OnTransition function is
// called. An undeclared s returns an error wrapping ErrUnknownState and
// leaves the state unchanged. Like Fire, it must not be called from a
// Callback or an OnTransition function of the same Instance.
func (i *Instance) SetState(s string) error {
	if !i.m.HasState(s) {
		return fmt.Errorf("fsm %q: cannot set state %q: %w; declared states: %s", i.m.name, s, ErrUnknownState, list(i.m.states))
	}
	i.fireMu.Lock()
	defer i.fireMu.Unlock()
	i.f.SetState(s)
	return nil
}

// OnTransition registers f to be called after every successful Fire
// (self-loops included), in firing order, on the goroutine that called Fire
// and before Fire returns. f must not call Fire or SetState on i.
func (i *Instance) OnTransition(f func(Edge)) {
	if f == nil {
		return
	}
	i.recMu.Lock()
	defer i.recMu.Unlock()
	i.observers = append(i.observers, f)
}

// History returns a copy of every edge fired since the instance was created
// or ResetHistory was last called, oldest first; nil if there is none. The
// history is unbounded: it costs 4 bytes per Fire (an edge index, which the
// garbage collector need not scan), so a long-lived instance should call
// ResetHistory now and then, or use OnTransition to keep what it needs.
func (i *Instance) History() []Edge {
	i.recMu.Lock()
	defer i.recMu.Unlock()
	if len(i.history) == 0 {
		return nil
	}
	out := make([]Edge, len(i.history))
	for k, id := range i.history {
		out[k] = i.m.edges[id]
	}
	return out
}

// ResetHistory discards the recorded edges and releases their memory.
func (i *Instance) ResetHistory() {
	i.recMu.Lock()
	defer i.recMu.Unlock()
	i.history = nil
}
