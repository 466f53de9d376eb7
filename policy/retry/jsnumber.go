package retry

import (
	"time"
)

// durationMs is d in milliseconds with its fraction kept: whole
// milliseconds exactly, and the sub-millisecond part to the nanosecond as far
// as a float64 carries it (2500 µs is 2.5, 999 µs is 0.999).
func durationMs(d time.Duration) float64 {
	return float64(d/time.Millisecond) + float64(d%time.Millisecond)/float64(time.Millisecond)
}
