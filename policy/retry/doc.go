// Package retry is the retry policy's pure core, beneath package policy's
// Controller: the retry settings and their JSON form, the settings
// compiled once into a read-only Policy, the named profiles, the events
// with their exact JSON, and the retry machine: each variant's transition
// table (Rule, Guard, Step), its pure Decide giving a Decision (the next
// Snapshot and the Effects to perform, in order) and the one loop over the
// effects (Decision.Apply with an Applier). It owns no goroutine, no clock
// and no I/O.
//
// An agent embeds policy.Controller, which names the embedder's part of this
// package (Settings, Policy, profiles, events, Reason, State, Variant) as
// aliases; the machinery here is for the shells that step the machine
// themselves: the session core, the simulator, the explorer, the trace and
// retrysim graph.
package retry
