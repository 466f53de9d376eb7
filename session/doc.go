// Package session is the agent session's rules as a pure core: a prompt's
// acceptance and resolution, the run and its model calls, the retry
// machine's effects, the compaction hand-off, and the variant's session
// rules, written once. Step(state, settings, event) returns the next state
// and the effects as data (emit a trace record, answer a command, resolve
// a prompt, start a model call, arm or cancel a timer); it holds no clock,
// does no I/O, starts no goroutine and draws no random number: whatever it
// needs from outside (the time, the classified reply, auth storage's
// answer) arrives in the event.
//
// The shells step it: package sim (a discrete-event scheduler and a
// scripted provider), package explore (an abstract timer queue, every
// input in every reachable state) and the fleet simulator.
package session
