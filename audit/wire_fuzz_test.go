package audit_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/policy"
)

// FuzzAuditWire: any input is audited without a panic, every finding has a
// wire rule and a line of the log, and the summary counts every line.
func FuzzAuditWire(f *testing.F) {
	f.Add(`{"type":"request","seq":1,"timestamp":1,"status":529,"answerMs":1,"client":{"x-stainless-retry-count":"0"}}` + "\n" +
		`{"type":"request","seq":2,"timestamp":400,"status":200,"client":{"x-stainless-retry-count":"1"}}`)
	f.Add(`{"type":"request","status":429,"headers":{"retry-after":"Mon, 16 Feb 2026 00:00:05 GMT"},"faults":["drop"]}` + "\n{}\nnot json")
	f.Add(`{"type":"request","status":0,"stream":true,"faults":["stream-cut after 3 events"],"error":"client gone"}`)
	rules := audit.WireRules()
	f.Fuzz(func(t *testing.T, log string) {
		a, err := audit.New(audit.Options{Profile: "openai-sdk-go"})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(log, "\n") + 1
		sum, err := a.AuditWire(strings.NewReader(log), audit.WireOptions{}, func(f audit.Finding) {
			if !slices.Contains(rules, f.Rule) || f.Line < 1 || f.Line > lines {
				t.Errorf("finding %+v", f)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Lines > lines || len(sum.Fits) != len(policy.Profiles()) {
			t.Errorf("summary %+v for %d lines", sum, lines)
		}
	})
}
