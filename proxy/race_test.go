//go:build race

package proxy

// raceEnabled: the race detector is on, and sync.Pool drops some of what
// it is given (an allocation count is not the program's).
const raceEnabled = true
