// Package fleetspec is what a fleet is, apart from running it (SPEC.md
// §15): a fleet's description (Config: sessions, prompts, latencies, the
// provider, the profile mix, the settings), fleet files (Spec, Load,
// Parse: one key table, keys.go, read by the file and the flags) and the
// provider's model (Provider: its capacity, outage windows, background
// and scripted errors, and the Answer it gives one request, time an
// argument).
//
// It sits below both of its users: package fleet runs fleets of
// simulated sessions over a Provider on a virtual clock, and package
// proxy answers real HTTP requests with one on the real clock, so that
// the proxy links no simulator and the provider's rules are written once.
package fleetspec
