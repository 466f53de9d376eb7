// Package fleet is the fleet what-if simulator (SPEC.md §15): many agent
// sessions sharing one simulated provider, each session stepping the
// session core (package session) with its profile's retry settings, in one
// discrete-event simulation deterministic from a seed.
//
// A fleetspec.Config (package fleet/fleetspec, below this one and the
// proxy) describes the fleet: how sessions arrive, what a prompt is (a
// number of model calls, each with a latency), the shared provider (its
// capacity, its over-capacity answer, its outage windows, its background
// errors) and the profiles the sessions run, optionally under an SDK layer
// that retries each call with another profile's settings. A Plan is the
// runs to make (PlanOf: configurations; PlanOfSpecs: fleet files over their
// mixes and seeds); Run, the one way to run fleets, runs a plan (or one
// shard of it) on every core and merges their Results in a fixed order. A Result holds only counters, maxima and
// fixed-bucket histograms, so results merge exactly (Result.Merge).
//
// The simulation owns one piece of time machinery, its event queue
// (ordered by time and sequence number: FIFO lanes per delay beside a
// binary heap); everything a session decides comes from the session core.
// Sessions meet only at the provider's capacity and outages: a fleet with
// neither runs its sessions one at a time, each to its end, with the same
// events and the same result (SPEC.md §15.1, "Sessions apart").
// fleetspec.Load reads fleet files (YAML), and fleetspec.Provider is the
// shared provider, which the proxy runs on the real clock too.
package fleet
