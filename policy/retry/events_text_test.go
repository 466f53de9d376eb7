package retry_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestEventsPrint: an event prints in words with %v (it printed as a Go
// struct, {1 3 2000 529 overloaded_error}), and AutoRetryStart's Delay is
// DelayMs as a Duration, fractions of a millisecond kept.
func TestEventsPrint(t *testing.T) {
	for _, c := range []struct {
		e    retry.Event
		want string
	}{
		{retry.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded_error"}, "auto_retry_start 1/3 in 2s: 529 overloaded_error"},
		{retry.AutoRetryStart{Attempt: 2, MaxAttempts: 3, DelayMs: 0.999, ErrorMessage: "x"}, "auto_retry_start 2/3 in 999µs: x"},
		{retry.AutoRetryEnd{Success: true, Attempt: 2}, "auto_retry_end success after 2"},
		{retry.AutoRetryEnd{Attempt: 3, FinalError: "529 overloaded_error"}, "auto_retry_end failed after 3: 529 overloaded_error"},
		{retry.RetryFallback{From: "a", To: "b"}, "retry_fallback a -> b"},
	} {
		if got := fmt.Sprintf("%v", c.e); got != c.want {
			t.Errorf("%%v of %#v = %q, want %q", c.e, got, c.want)
		}
	}
	if d := (retry.AutoRetryStart{DelayMs: 1500.5}).Delay(); d != 1500500*time.Microsecond {
		t.Errorf("Delay = %v, want 1.5005s", d)
	}
}

// ExampleAutoRetryStart_String: events print in words.
func ExampleAutoRetryStart_String() {
	fmt.Println(retry.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded_error: Overloaded"})
	// Output: auto_retry_start 1/3 in 2s: 529 overloaded_error: Overloaded
}
