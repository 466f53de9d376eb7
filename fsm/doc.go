// Package fsm is a small typed engine over github.com/looplab/fsm. It knows
// nothing about retries: a Definition declares states, transitions and
// callbacks once; New validates it into an immutable Machine, from which
// everything else is derived (the transition table for Lookup, the sorted
// Edges and Events, Reachable for explorers, DOT and Mermaid diagrams); and
// NewInstance starts a live looplab.FSM that fires events and records the
// edges it takes.
//
// The package closes looplab's known traps:
//
//   - Callback keys are validated: a key that names no declared state or
//     event (a typo such as "enter_bakoff"), an ambiguous key, or two keys
//     for one hook is an error instead of being silently ignored.
//   - Fire always passes context.Background() and callbacks cannot cancel,
//     so a machine can never be frozen by a cancelled context.
//   - A declared self-loop is a success, not a NoTransitionError.
//   - Lists (Events, Edges, Available, ...) are sorted; diagrams are rendered
//     from the table in a fixed order, never from looplab's map iteration or
//     its unlocked visualizer.
//
// Still true: callbacks run while the Instance is locked, so a Callback or
// OnTransition function must not call Fire or SetState on the same Instance
// (it deadlocks); fire follow-up events after Fire returns.
package fsm
