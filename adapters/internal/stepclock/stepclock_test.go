package stepclock

import (
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestChainedWaitsAllFire arms each wait from the callback of the one
// before, as a retry chain does (2 s, 4 s, 8 s), many chains in turn: every
// wait fires, at the time the waits before it add up to. A clock that moved
// the mock from a new goroutine per wait lost a wait now and then (issue
// CI stop 26: TestDoSDK hung for 600 s).
func TestChainedWaitsAllFire(t *testing.T) {
	waits := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second}
	for range 100 {
		c := New()
		start := c.Now()
		var (
			mu    sync.Mutex
			fired []time.Duration
		)
		done := make(chan struct{})
		var arm func(i int)
		arm = func(i int) {
			c.AfterFunc(waits[i], func() {
				mu.Lock()
				fired = append(fired, c.Now().Sub(start))
				mu.Unlock()
				if i+1 < len(waits) {
					arm(i + 1)
					return
				}
				close(done)
			})
		}
		arm(0)
		<-done // a lost wait hangs here until the test's timeout
		c.Stop()
		if want := []time.Duration{2 * time.Second, 6 * time.Second, 14 * time.Second}; !slices.Equal(fired, want) {
			t.Fatalf("fired at %v, want %v", fired, want)
		}
		if got := c.Waits(); !slices.Equal(got, waits) {
			t.Fatalf("waits %v, want %v", got, waits)
		}
	}
}
