package fsm

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	looplab "github.com/looplab/fsm"
)

// Transition declares that Event moves a machine from any state in Src to Dst.
type Transition struct {
	Event string
	Src   []string
	Dst   string
}

// Edge is one concrete (From, Event, To) step. From == To is a self-loop.
type Edge struct{ From, Event, To string }

// String renders the edge as "from --event--> to".
func (e Edge) String() string { return e.From + " --" + e.Event + "--> " + e.To }

// Callback is run by looplab for a callback key; e carries the edge being
// taken. It runs on the goroutine that called Instance.Fire, while that
// Instance is locked: it may call Current, Can, Available and History on the
// same Instance, but calling Fire or SetState on it deadlocks (queue the
// event and fire it after Fire returns). A Callback cannot cancel a
// transition; guards belong in the caller, before Fire. Callbacks of one
// Definition are shared by all its instances, so they may run concurrently
// for different instances.
type Callback func(e Edge)

// Definition declares a machine once.
type Definition struct {
	Name        string
	Initial     string
	States      []string // every state, in display order
	Transitions []Transition
	// Callbacks uses looplab's keys: "before_<event>", "leave_<state>",
	// "enter_<state>", "after_<event>", the generic "before_event",
	// "leave_state", "enter_state", "after_event", and the bare "<state>"
	// (= enter_<state>) and "<event>" (= after_<event>). For a transition
	// they run in that order: before_<event>, before_event, leave_<old>,
	// leave_state, enter_<new>, enter_state, after_<event>, after_event. A
	// self-loop runs only the before_ and after_ ones (looplab's rule).
	Callbacks map[string]Callback
}

// edgeKey indexes the transition table.
type edgeKey struct{ from, event string }

// Machine is a validated, immutable definition. Safe for concurrent use.
// Every method returns fresh slices the caller may modify.
type Machine struct {
	name    string
	initial string
	states  []string       // display order
	index   map[string]int // state -> display index
	events  []string       // sorted
	isEvent map[string]bool
	edges   []Edge              // sorted by From, Event, To
	table   map[edgeKey]int32   // (from, event) -> index in edges
	avail   map[string][]string // from -> sorted events
	succ    [][]int             // display index -> successor display indices

	// Built once and shared by every Instance: looplab.NewFSM only reads them.
	llEvents    looplab.Events
	llCallbacks looplab.Callbacks
}

// New validates def and builds a Machine. It returns a *DefinitionError
// (errors.Is(err, ErrInvalidDefinition)) naming the first problem found, in
// declaration order (callback keys in sorted order): an empty or duplicate
// state name, an Initial that is not declared, a transition with an empty
// event name, no source, or an undeclared Src/Dst, the same (src, event)
// declared with two different Dst, and a callback key that names no declared
// state or event, is ambiguous, or maps to nil. New copies def; later changes
// to def do not affect the Machine.
func New(def Definition) (*Machine, error) {
	m := &Machine{
		name:    def.Name,
		initial: def.Initial,
		states:  slices.Clone(def.States),
		index:   make(map[string]int, len(def.States)),
		isEvent: make(map[string]bool),
		avail:   make(map[string][]string),
	}
	fail := func(field, name string, err error, detail string) (*Machine, error) {
		return nil, &DefinitionError{Machine: def.Name, Field: field, Name: name, Err: err, Detail: detail}
	}

	for i, s := range m.states {
		field := "states[" + strconv.Itoa(i) + "]"
		if s == "" {
			return fail(field, s, ErrEmptyName, "every state needs a non-empty name")
		}
		if j, dup := m.index[s]; dup {
			return fail(field, s, ErrDuplicateState, "already declared at states["+strconv.Itoa(j)+"]")
		}
		m.index[s] = i
	}
	declared := "declared states: " + list(m.states)
	if _, ok := m.index[def.Initial]; !ok {
		return fail("initial", def.Initial, ErrUndeclaredState, declared)
	}

	dst := make(map[edgeKey]string)    // (src, event) -> Dst
	firstDecl := make(map[edgeKey]int) // (src, event) -> transition index
	for ti, t := range def.Transitions {
		field := "transitions[" + strconv.Itoa(ti) + "]"
		if t.Event == "" {
			return fail(field+".event", t.Event, ErrEmptyName, "every transition needs a non-empty event name")
		}
		if len(t.Src) == 0 {
			return fail(field+".src", t.Event, ErrNoSource, "list at least one of the "+declared)
		}
		if _, ok := m.index[t.Dst]; !ok {
			return fail(field+".dst", t.Dst, ErrUndeclaredState, declared)
		}
		for si, src := range t.Src {
			if _, ok := m.index[src]; !ok {
				return fail(field+".src["+strconv.Itoa(si)+"]", src, ErrUndeclaredState, declared)
			}
			k := edgeKey{src, t.Event}
			if prev, dup := dst[k]; dup {
				if prev != t.Dst {
					return fail(field, t.Event, ErrNondeterministic,
						"from state "+strconv.Quote(src)+" it leads to "+strconv.Quote(t.Dst)+" but transitions["+
							strconv.Itoa(firstDecl[k])+"] already leads to "+strconv.Quote(prev)+"; give each (src, event) one Dst")
				}
				continue // the same edge declared twice is harmless
			}
			firstDecl[k] = ti
			dst[k] = t.Dst
			m.edges = append(m.edges, Edge{From: src, Event: t.Event, To: t.Dst})
			m.avail[src] = append(m.avail[src], t.Event)
		}
		m.isEvent[t.Event] = true
		m.llEvents = append(m.llEvents, looplab.EventDesc{Name: t.Event, Src: slices.Clone(t.Src), Dst: t.Dst})
	}

	for e := range m.isEvent {
		m.events = append(m.events, e)
	}
	slices.Sort(m.events)
	slices.SortFunc(m.edges, compareEdges)
	// The table maps to an edge index so that History can record 4 bytes
	// per Fire instead of an Edge.
	m.table = make(map[edgeKey]int32, len(m.edges))
	for id, e := range m.edges {
		m.table[edgeKey{e.From, e.Event}] = int32(id)
	}
	for _, evs := range m.avail {
		slices.Sort(evs)
	}
	m.succ = make([][]int, len(m.states))
	for _, e := range m.edges {
		from, to := m.index[e.From], m.index[e.To]
		if !slices.Contains(m.succ[from], to) {
			m.succ[from] = append(m.succ[from], to)
		}
	}

	if err := m.bindCallbacks(def.Callbacks); err != nil {
		return nil, err
	}
	return m, nil
}

// MustNew is New for package-level declarations: it panics on an invalid
// definition.
func MustNew(def Definition) *Machine {
	m, err := New(def)
	if err != nil {
		panic(err)
	}
	return m
}

// Callback kinds, as looplab parses keys.
const (
	hookBefore = "before_"
	hookLeave  = "leave_"
	hookEnter  = "enter_"
	hookAfter  = "after_"
)

// bindCallbacks validates the callback keys exactly as looplab.NewFSM parses
// them, so that no key is silently ignored or silently overridden, and wraps
// each Callback as a looplab.Callback.
func (m *Machine) bindCallbacks(cbs map[string]Callback) error {
	if len(cbs) == 0 {
		return nil
	}
	keys := make([]string, 0, len(cbs))
	for k := range cbs {
		keys = append(keys, k)
	}
	slices.Sort(keys)

	fail := func(key string, err error, detail string) error {
		return &DefinitionError{Machine: m.name, Field: "callbacks", Name: key, Err: err, Detail: detail}
	}
	events := "declared events: " + list(m.events)
	states := "declared states: " + list(m.states)
	slot := make(map[string]string) // canonical hook -> the key that claimed it
	m.llCallbacks = make(looplab.Callbacks, len(cbs))
	for _, key := range keys {
		if cbs[key] == nil {
			return fail(key, ErrNilCallback, "give every callback key a function")
		}
		var hook string // canonical "kind:target"; target "" is the generic hook
		switch {
		case strings.HasPrefix(key, hookBefore), strings.HasPrefix(key, hookAfter):
			kind, target, _ := strings.Cut(key, "_")
			switch {
			case target == "event":
				if m.isEvent["event"] {
					return fail(key, ErrAmbiguousCallback, "looplab reads it as the generic "+kind+"_event hook, not the hook of the event named \"event\"; rename that event")
				}
				hook = kind + ":"
			case m.isEvent[target]:
				hook = kind + ":" + target
			default:
				return fail(key, ErrUnknownCallback, strconv.Quote(target)+" is not a declared event; use "+kind+"_<event> or "+kind+"_event; "+events)
			}
		case strings.HasPrefix(key, hookLeave), strings.HasPrefix(key, hookEnter):
			kind, target, _ := strings.Cut(key, "_")
			_, isState := m.index[target]
			switch {
			case target == "state":
				if isState {
					return fail(key, ErrAmbiguousCallback, "looplab reads it as the generic "+kind+"_state hook, not the hook of the state named \"state\"; rename that state")
				}
				hook = kind + ":"
			case isState:
				hook = kind + ":" + target
			default:
				return fail(key, ErrUnknownCallback, strconv.Quote(target)+" is not a declared state; use "+kind+"_<state> or "+kind+"_state; "+states)
			}
		default:
			_, isState := m.index[key]
			switch {
			case isState && m.isEvent[key]:
				return fail(key, ErrAmbiguousCallback, "it names both a state and an event; use enter_"+key+" or after_"+key)
			case isState:
				hook = "enter:" + key
			case m.isEvent[key]:
				hook = "after:" + key
			default:
				return fail(key, ErrUnknownCallback, "it names no declared state or event; use before_<event>, leave_<state>, enter_<state>, after_<event>, "+
					"before_event, leave_state, enter_state, after_event, <state> or <event>; "+states+"; "+events)
			}
		}
		if other, dup := slot[hook]; dup {
			return fail(key, ErrAmbiguousCallback, "it names the same hook as "+strconv.Quote(other)+"; looplab would keep only one of them; keep one key")
		}
		slot[hook] = key
		cb := cbs[key]
		m.llCallbacks[key] = func(_ context.Context, e *looplab.Event) {
			cb(Edge{From: e.Src, Event: e.Event, To: e.Dst})
		}
	}
	return nil
}

func compareEdges(a, b Edge) int {
	return cmp.Or(strings.Compare(a.From, b.From), strings.Compare(a.Event, b.Event), strings.Compare(a.To, b.To))
}

// Name returns Definition.Name.
func (m *Machine) Name() string { return m.name }

// Initial returns the state every new Instance starts in.
func (m *Machine) Initial() string { return m.initial }

// States returns every state, in display order.
func (m *Machine) States() []string { return slices.Clone(m.states) }

// Events returns every declared event, sorted.
func (m *Machine) Events() []string { return slices.Clone(m.events) }

// HasState reports whether s is a declared state.
func (m *Machine) HasState(s string) bool { _, ok := m.index[s]; return ok }

// HasEvent reports whether some transition declares event.
func (m *Machine) HasEvent(event string) bool { return m.isEvent[event] }

// Edges returns every (src, event, dst), sorted by From, Event, To. A
// transition with n sources contributes n edges.
func (m *Machine) Edges() []Edge { return slices.Clone(m.edges) }

// Lookup returns the state event leads to from state from. It is a pure
// table lookup (no looplab, no lock, no allocation), for policies and
// explorers that step the machine without an Instance.
func (m *Machine) Lookup(from, event string) (to string, ok bool) {
	id, ok := m.table[edgeKey{from, event}]
	if !ok {
		return "", false
	}
	return m.edges[id].To, true
}

// edgeID returns the index in m.edges of the edge event takes from from.
func (m *Machine) edgeID(from, event string) (int32, bool) {
	id, ok := m.table[edgeKey{from, event}]
	return id, ok
}

// Available returns the events that can fire in state from, sorted; nil
// for an undeclared state or a state with no outgoing edge.
func (m *Machine) Available(from string) []string { return slices.Clone(m.avail[from]) }

// Reachable returns the states reachable from state from by following zero
// or more edges (so from itself is included), in display order; nil for an
// undeclared state.
func (m *Machine) Reachable(from string) []string {
	start, ok := m.index[from]
	if !ok {
		return nil
	}
	seen := make([]bool, len(m.states))
	seen[start] = true
	queue := []int{start}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, n := range m.succ[s] {
			if !seen[n] {
				seen[n] = true
				queue = append(queue, n)
			}
		}
	}
	var out []string
	for i, ok := range seen {
		if ok {
			out = append(out, m.states[i])
		}
	}
	return out
}
