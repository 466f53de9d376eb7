//go:build unix

package testkit

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system, every thread) the process has
// used so far; ok is false where it cannot be read.
func CPUTime() (d time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
