package fleet_test

import (
	"time"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

// cpuTime is the CPU time (user and system) the process has used so far;
// 0 where it is not read.
func cpuTime() time.Duration {
	d, _ := testkit.CPUTime()
	return d
}
