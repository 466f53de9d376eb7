// Package sim is the deterministic simulation shell around the session
// core (package session): a discrete-event Scheduler behind clock.Clock
// (virtual time jumps to the next event, so a chain with 14 s of backoff
// runs in microseconds, in the same order every time), a scripted provider
// (a scenario's turns) and scripted auth storage, the JSON Lines trace
// (package trace), RunScenario with its expectations, and RealTime, which
// maps the scheduler onto a wall clock for the RPC server and the terminal
// player. It holds no session or policy rule of its own.
package sim
