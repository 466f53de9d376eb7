//go:build unix

package testkit

import "testing"

// TestCPUTimeCountsWork: the CPU time is read, and work the process does
// advances it.
func TestCPUTimeCountsWork(t *testing.T) {
	t0, ok := CPUTime()
	if !ok || t0 <= 0 {
		t.Fatalf("CPUTime() = %v, %t", t0, ok)
	}
	x := uint64(1)
	for round := 0; ; round++ {
		for range 1 << 20 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if t1, _ := CPUTime(); t1 > t0 {
			break
		}
		if round == 1<<12 { // 4 G steps: seconds of work
			t.Fatalf("CPUTime stayed at %v over 4 G steps (x=%d)", t0, x)
		}
	}
}
