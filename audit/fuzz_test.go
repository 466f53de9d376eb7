package audit_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
)

// FuzzAudit: whatever the log, the audit never panics, reads every line
// (the summary counts them), and each finding is on a line of the log with
// one of the rules and a one-line reason.
func FuzzAudit(f *testing.F) {
	for _, seed := range []string{
		`{"id":"p1","type":"response","command":"prompt","success":true}
{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"}}
{"type":"agent_end"}
{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
{"type":"agent_start"}
{"type":"auto_retry_end","success":true,"attempt":1}`,
		`{"t":0,"type":"auto_retry_start","attempt":2,"delayMs":-1}` + "\n" + `{"t":"x","type":"auto_retry_end","success":"no"}`,
		"not json\n{}\n[1,2]\n\r\n",
		`{"timestamp":1771200000000,"type":"auto_retry_start","attempt":1,"delayMs":1e309,"errorMessage":"retry-after-ms=5"}`,
	} {
		f.Add(seed)
	}
	rules := map[audit.Rule]bool{}
	for _, r := range audit.Rules() {
		rules[r] = true
	}
	f.Fuzz(func(t *testing.T, log string) {
		for _, profile := range []string{"omp-2026-02", "omp-2026-06"} {
			a, err := audit.New(audit.Options{Profile: profile})
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Count(log, "\n")
			if log != "" && !strings.HasSuffix(log, "\n") {
				lines++
			}
			_, err = a.Audit(strings.NewReader(log), func(fd audit.Finding) {
				if fd.Line < 1 || fd.Line > lines || !rules[fd.Rule] || fd.Reason == "" || strings.ContainsAny(fd.Reason, "\n\r") {
					t.Errorf("%s: finding %+v of a %d-line log", profile, fd, lines)
				}
			})
			if err != nil {
				t.Fatalf("%s: %v", profile, err)
			}
		}
	})
}
