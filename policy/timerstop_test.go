package policy_test

import (
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/policy"
)

// countingClock passes the mock's own timers through (so Stop works) and
// reports every timer function that runs.
type countingClock struct {
	*clock.Mock
	fired chan struct{}
	wg    sync.WaitGroup
}

func (c *countingClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	c.wg.Add(1)
	t := c.Mock.AfterFunc(d, func() {
		defer c.wg.Done()
		c.fired <- struct{}{}
		f()
	})
	return t
}

// TestCancelledWaitTimerIsStopped: cancelling a backoff stops its timer, so
// a real clock frees it at once instead of keeping it until its due time.
func TestCancelledWaitTimerIsStopped(t *testing.T) {
	for _, cancel := range []string{"abort_retry", "abort"} {
		t.Run(cancel, func(t *testing.T) {
			clk := &countingClock{Mock: clock.NewMock(), fired: make(chan struct{}, 8)}
			ag := newCtlAgent()
			c, err := policy.NewController(policy.Config{Clock: clk, Agent: ag})
			if err != nil {
				t.Fatal(err)
			}
			if !c.OnAgentEnd(&policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error"}) {
				t.Fatal("no retry scheduled")
			}
			if cancel == "abort" {
				c.Abort()
			} else {
				c.AbortRetry()
			}
			clk.Add(time.Minute) // Mock.Add yields 1 ms per fired timer, so a live timer would run here
			select {
			case <-clk.fired:
				t.Fatal("the cancelled wait's timer still fired: it was not stopped")
			default:
			}
			clk.wg.Add(-1) // the stopped timer's function never runs
			clk.wg.Wait()
			if ag.continues.Load() != 0 {
				t.Fatal("continued after a cancel")
			}
		})
	}
}
