package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// TestCheckSoundTraceFailFastInAChain: a fail-fast inside a chain ends it
// with attempt k, one above the chain's last auto_retry_start (SPEC §1.1
// step 6); CheckSoundTrace accepts it, and still rejects an end two above,
// or one above that is not a fail-fast.
func TestCheckSoundTraceFailFastInAChain(t *testing.T) {
	src := "turns:\n" + strings.Repeat("  - {stopReason: error, errorMessage: \"503 service unavailable\"}\n", 3)
	got, _ := optRun(t, src, func(s *policy.Settings) {
		s.BaseDelay = time.Second
		s.RetryAfter = policy.RetryAfter{MaxWait: 3 * time.Second} // the third wait, 4 s, is too long
	}, trace.AutoRetryStart, trace.AutoRetryEnd)
	optWant(t, got,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":1000,"errorMessage":"503 service unavailable"}`,
		`"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 service unavailable"}`,
		`"type":"auto_retry_end","success":false,"attempt":3,"finalError":"Provider requested 4000ms wait, exceeds retry.maxDelayMs (3000ms). Original error: 503 service unavailable"}`)
	start := trace.Record{Type: trace.AutoRetryStart, Start: policy.AutoRetryStart{Attempt: 1}}
	end := func(a int, final string) trace.Record {
		return trace.Record{Type: trace.AutoRetryEnd, End: policy.AutoRetryEnd{Attempt: a, FinalError: final}}
	}
	ff := "Provider requested 4000ms wait, exceeds retry.maxDelayMs (3000ms). Original error: x"
	for _, tt := range []struct {
		rs []trace.Record
		ok bool
	}{
		{[]trace.Record{start, end(2, ff)}, true},
		{[]trace.Record{start, end(3, ff)}, false},
		{[]trace.Record{start, end(2, "x")}, false},
	} {
		if err := sim.CheckSoundTrace(tt.rs); (err == nil) != tt.ok {
			t.Errorf("%q: %v, want ok %v", optLines(tt.rs), err, tt.ok)
		}
	}
}
