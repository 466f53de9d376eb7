//go:build !unix

package testkit

import "time"

// CPUTime is the CPU time the process has used so far: not read here (ok
// false).
func CPUTime() (d time.Duration, ok bool) { return 0, false }
