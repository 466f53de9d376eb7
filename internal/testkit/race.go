//go:build race

package testkit

// Race reports whether the race detector is on: then sync.Pool drops
// some of what it is given, so a count of allocations or bytes is not
// the program's.
const Race = true
