package retryfsm_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ohmypi/retryfsm"
	"github.com/ohmypi/retryfsm/policy"
)

// Example_synctest shows how to test code that retries, with no mock clock:
// inside a testing/synctest bubble the real clock's 2 s and 4 s waits pass
// at once (time jumps when every goroutine of the bubble is blocked), so
// the test below takes microseconds, and time.Since still reads 6 s. Call
// it from a test: func TestRetries(t *testing.T) { retriesInABubble(t) }.
func Example_synctest() {}

// retriesInABubble is a test: a call that fails twice with a 529, then
// succeeds, retried by Do with the default policy on the real clock.
func retriesInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		flaky := func(context.Context) (string, error) {
			calls++
			if calls < 3 {
				return "", errors.New("529 overloaded_error: Overloaded")
			}
			return "hello", nil
		}
		start := time.Now()
		got, err := retryfsm.Do(context.Background(), policy.DefaultPolicy(), flaky)
		if err != nil || got != "hello" || calls != 3 {
			t.Fatalf("Do = %q, %v after %d calls", got, err, calls)
		}
		if waited := time.Since(start); waited != 6*time.Second {
			t.Errorf("waited %v, want 6s (2 s + 4 s)", waited)
		}
	})
}
