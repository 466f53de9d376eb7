package trace_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/trace"
)

// TestDecodeTypeErrors: a field of the wrong type is reported by its
// trace key and what it takes, never by the reader's Go type names.
func TestDecodeTypeErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{`{"t":0,"type":"prompt_resolved","prompt":"x"}`, `field "prompt": expected an integer, got a JSON string`},
		{`{"t":"a","type":"final"}`, `field "t": expected a number, got a JSON string`},
		{`{"t":0,"type":"auto_retry_start","attempt":true}`, `field "attempt": expected an integer, got a JSON bool`},
		{`{"t":0,"type":"auto_retry_end","success":1}`, `field "success": expected true or false, got a JSON number`},
	} {
		_, err := trace.Parse([]byte(tc.line + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "wire") {
			t.Errorf("%s: %v, want %q", tc.line, err, tc.want)
		}
	}
}
