// Package explore is an exhaustive explorer of the retry policy inside its
// session: it steps the session core (package session) breadth-first over
// every enabled input of a fixed alphabet, on an abstract timer queue, and
// checks the invariants of SPEC.md §12.3 at every step and at quiescence.
//
// It holds no session rule: prompts, runs, continues, compaction and the
// retry machine's decisions all come from session.Core's effects. The
// explorer is only a shell around the core, as package sim is: it turns
// its inputs into session events, keeps the timers the core arms (with an
// abstract notion of time, SPEC.md §12.1), reads the trace records the
// invariants need, and packs the core's state into a small key.
package explore
