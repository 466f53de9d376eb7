package retry

import (
	"fmt"
	"time"
)

// Delay is DelayMs as a time.Duration (the Go side's unit; the JSON keeps
// the original's milliseconds).
func (e AutoRetryStart) Delay() time.Duration {
	return time.Duration(e.DelayMs * float64(time.Millisecond))
}

// String is the event in words, for logs and %v:
// "auto_retry_start 1/3 in 2s: 529 overloaded_error".
func (e AutoRetryStart) String() string {
	return fmt.Sprintf("auto_retry_start %d/%d in %v: %s", e.Attempt, e.MaxAttempts, e.Delay(), e.ErrorMessage)
}

// String is the event in words: "auto_retry_end success after 2" or
// "auto_retry_end failed after 3: 529 overloaded_error".
func (e AutoRetryEnd) String() string {
	if e.Success {
		return fmt.Sprintf("auto_retry_end success after %d", e.Attempt)
	}
	return fmt.Sprintf("auto_retry_end failed after %d: %s", e.Attempt, e.FinalError)
}

// String is the event in words: "retry_fallback a -> b".
func (e RetryFallback) String() string {
	return fmt.Sprintf("retry_fallback %s -> %s", e.From, e.To)
}
