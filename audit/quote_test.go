package audit_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
)

// TestAuditQuotesNumbersAsWritten: an attempt out of range is quoted as
// the line writes it, not as the float64 it rounds to (issue 19 §5:
// 9223372036854775807 was said 9223372036854776000).
func TestAuditQuotesNumbersAsWritten(t *testing.T) {
	a, err := audit.New(audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{`{"type":"auto_retry_start","attempt":9223372036854775807,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`,
			"auto_retry_start: attempt = 9223372036854775807 is not a whole number from 0"},
		{`{"type":"auto_retry_start","attempt":1.50e0,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`,
			"auto_retry_start: attempt = 1.50e0 is not a whole number from 0"},
		{`{"type":"auto_retry_end","success":false,"attempt":-0.5,"finalError":"x"}`,
			"auto_retry_end: attempt = -0.5 is not a whole number from 0"},
	} {
		var got []string
		if _, err := a.Audit(strings.NewReader(c.line+"\n"), func(f audit.Finding) { got = append(got, f.Reason) }); err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || !strings.Contains(got[0], c.want) {
			t.Errorf("%s: findings %q, want %q", c.line, got, c.want)
		}
	}
}
