// Package scenario reads, validates and discovers scenario files: the
// scripted provider's turns, the client's actions, the settings and the
// expectations of one simulated session (SPEC.md §7). It does not run them
// (package sim does).
package scenario
