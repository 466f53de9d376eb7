package fsm

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error returned by New wraps ErrInvalidDefinition and
// exactly one of the more specific sentinels; every error returned by Fire
// wraps ErrUnknownEvent or ErrEventNotAllowed together with looplab's own
// error value.
var (
	// ErrInvalidDefinition is wrapped by every *DefinitionError.
	ErrInvalidDefinition = errors.New("invalid machine definition")

	// ErrEmptyName: a state or event name is the empty string.
	ErrEmptyName = errors.New("empty name")
	// ErrDuplicateState: a state is listed twice in Definition.States.
	ErrDuplicateState = errors.New("duplicate state")
	// ErrUndeclaredState: Initial, a Src or a Dst is not in Definition.States.
	ErrUndeclaredState = errors.New("undeclared state")
	// ErrNoSource: a transition has an empty Src list.
	ErrNoSource = errors.New("transition has no source state")
	// ErrNondeterministic: the same (src, event) leads to two different Dst.
	ErrNondeterministic = errors.New("nondeterministic transition")
	// ErrUnknownCallback: a callback key names no declared state or event,
	// so looplab would silently ignore it.
	ErrUnknownCallback = errors.New("unknown callback key")
	// ErrAmbiguousCallback: a callback key could mean two different hooks, or
	// two keys name the same hook (looplab would keep one of them at random).
	ErrAmbiguousCallback = errors.New("ambiguous callback key")
	// ErrNilCallback: a callback key maps to a nil function.
	ErrNilCallback = errors.New("nil callback")

	// ErrUnknownEvent: Fire was given an event no transition declares.
	ErrUnknownEvent = errors.New("unknown event")
	// ErrEventNotAllowed: Fire was given a declared event that cannot fire
	// in the current state.
	ErrEventNotAllowed = errors.New("event not allowed in current state")
	// ErrUnknownState: SetState was given a state the machine does not declare.
	ErrUnknownState = errors.New("unknown state")
)

// DefinitionError reports the first problem New found in a Definition.
// errors.Is(err, ErrInvalidDefinition) holds for every DefinitionError, and
// errors.Is(err, Err) for its specific sentinel.
type DefinitionError struct {
	Machine string // Definition.Name
	Field   string // where: "states[2]", "initial", "transitions[1].src", "callbacks", ...
	Name    string // the offending state, event or callback key
	Err     error  // the specific sentinel (ErrDuplicateState, ErrUnknownCallback, ...)
	Detail  string // what is wrong and what is allowed, in words
}

// Error implements error.
func (e *DefinitionError) Error() string {
	var b strings.Builder
	b.WriteString("fsm")
	if e.Machine != "" {
		fmt.Fprintf(&b, " %q", e.Machine)
	}
	fmt.Fprintf(&b, ": %s: %v %q", e.Field, e.Err, e.Name)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the specific sentinel.
func (e *DefinitionError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalidDefinition (the specific sentinel
// is matched through Unwrap).
func (e *DefinitionError) Is(target error) bool { return target == ErrInvalidDefinition }

// FireError reports an event that could not fire. It wraps both a sentinel
// (ErrUnknownEvent or ErrEventNotAllowed) and looplab's error, so both
// errors.Is(err, fsm.ErrEventNotAllowed) and
// errors.As(err, &looplab.InvalidEventError{}) work.
type FireError struct {
	Machine string   // Machine.Name
	State   string   // the state the instance was in
	Event   string   // the event that was fired
	Allowed []string // the events that can fire in State, sorted
	Err     error    // looplab's error (InvalidEventError, UnknownEventError, ...)

	kind error // ErrUnknownEvent, ErrEventNotAllowed or nil
}

// Error implements error.
func (e *FireError) Error() string {
	what := "event %q not allowed"
	if e.kind == ErrUnknownEvent {
		what = "unknown event %q"
	}
	return fmt.Sprintf("fsm %q: "+what+" in state %q (allowed: %s): %v",
		e.Machine, e.Event, e.State, list(e.Allowed), e.Err)
}

// Unwrap returns the sentinel and looplab's error.
func (e *FireError) Unwrap() []error {
	if e.kind == nil {
		return []error{e.Err}
	}
	return []error{e.kind, e.Err}
}

// list renders names for error messages: "a, b, c" or "none".
func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
