package provider

import (
	"fmt"
	"testing"
)

// TestRequestID: requestID is fmt's "retrysim%06d" for every width.
func TestRequestID(t *testing.T) {
	for _, seq := range []int{0, 1, 7, 42, 999, 123456, 999999, 1000000, 1234567890, -1, -42} {
		if got, want := requestID(seq), fmt.Sprintf("retrysim%06d", seq); got != want {
			t.Errorf("requestID(%d) = %q, want %q", seq, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = requestID(123456) }); n > 1 {
		t.Errorf("requestID allocates %v times, want 1", n)
	}
}
