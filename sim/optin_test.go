package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// optRun runs the scenario src with its settings changed by set, and
// returns the records of the types listed (all when none is).
func optRun(t *testing.T, src string, set func(*policy.Settings), types ...trace.Type) ([]trace.Record, sim.Final) {
	t.Helper()
	sc, err := scenario.Parse("opt.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if set != nil {
		set(&sc.Settings)
	}
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RunErr != nil {
		t.Fatal(res.RunErr)
	}
	if err := sim.CheckSoundTrace(res.Records); err != nil {
		t.Errorf("sound guarantees: %v", err)
	}
	if len(types) == 0 {
		return res.Records, res.Final
	}
	var out []trace.Record
	for _, r := range res.Records {
		for _, ty := range types {
			if r.Type == ty {
				out = append(out, r)
			}
		}
	}
	return out, res.Final
}

// optLines writes records as trace lines without their time.
func optLines(rs []trace.Record) []string {
	out := make([]string, len(rs))
	for i := range rs {
		out[i] = string(trace.AppendFields(nil, &rs[i]))
	}
	return out
}

func optWant(t *testing.T, got []trace.Record, want ...string) {
	t.Helper()
	lines := optLines(got)
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

var retryEvents = []trace.Type{trace.AutoRetryStart, trace.AutoRetryEnd, trace.RetryFallback, trace.PromptResolved}

// TestFailFast: a hint used as a floor makes the wait too long: the chain
// ends at its first error with no auto_retry_start, in the newer
// original's words (the oh-my-pi test "bails immediately when retry-after
// exceeds retry.maxDelayMs").
func TestFailFast(t *testing.T) {
	src := "turns:\n  - {stopReason: error, errorMessage: \"429 rate limit exceeded, retry-after-ms=11180000\"}\n"
	got, f := optRun(t, src, func(s *policy.Settings) {
		s.BaseDelay = 5 * time.Millisecond
		s.RetryAfter = policy.RetryAfter{Use: policy.HintFloor, MaxWait: 100 * time.Millisecond}
	}, retryEvents...)
	optWant(t, got,
		`"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Provider requested 11180000ms wait, exceeds retry.maxDelayMs (100ms). Original error: 429 rate limit exceeded, retry-after-ms=11180000"}`,
		`"type":"prompt_resolved","prompt":1}`)
	if f.State != policy.StateExhausted || f.Attempt != 0 || f.IsRetrying {
		t.Errorf("final %+v, want exhausted at rest", f)
	}
	// Under the ceiling, the hint is waited (and without the floor the
	// backoff stands).
	src = "turns:\n  - {stopReason: error, errorMessage: \"503 service unavailable: overloaded_error retry-after-ms=50\"}\n"
	got, _ = optRun(t, src, func(s *policy.Settings) {
		s.BaseDelay = 5 * time.Millisecond
		s.RetryAfter = policy.RetryAfter{Use: policy.HintFloor, MaxWait: 5 * time.Second}
	}, trace.AutoRetryStart)
	optWant(t, got, `"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":50,"errorMessage":"503 service unavailable: overloaded_error retry-after-ms=50"}`)
}

// TestFailFastSwitch: a usage limit whose wait is too long is put to auth
// storage first; a switch makes the wait 0, so the retry is made.
func TestFailFastSwitch(t *testing.T) {
	src := "turns:\n  - {stopReason: error, errorMessage: \"usage limit reached, retry-after-ms=11180000\", switchModel: true}\n"
	set := func(s *policy.Settings) {
		s.RetryAfter = policy.RetryAfter{Use: policy.HintFloor, MaxWait: 100 * time.Millisecond}
	}
	got, _ := optRun(t, src, set, trace.MarkUsageLimitReached, trace.AutoRetryStart, trace.AutoRetryEnd)
	optWant(t, got,
		`"type":"mark_usage_limit_reached","provider":"anthropic","sessionId":"session-1","retryAfterMs":11180000,"baseUrl":"https://api.anthropic.com","returns":true}`,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0,"errorMessage":"usage limit reached, retry-after-ms=11180000"}`,
		`"type":"auto_retry_end","success":true,"attempt":1}`)
	// Without a switch it fails fast, after asking.
	got, _ = optRun(t, strings.Replace(src, "true", "false", 1), set, trace.MarkUsageLimitReached, trace.AutoRetryStart, trace.AutoRetryEnd)
	if len(got) != 2 || got[0].Type != trace.MarkUsageLimitReached || got[1].Type != trace.AutoRetryEnd || got[1].End.Success {
		t.Errorf("no switch: %q", optLines(got))
	}
}

// TestFallback: a chain that would end exhausted goes on with the next
// model, as attempt 1 with no wait (the counter restarts at 1, so with
// maxRetries 1 each model's next failure falls back again); each call's
// model is in the trace.
func TestFallback(t *testing.T) {
	src := `turns:
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: stop}
`
	got, f := optRun(t, src, func(s *policy.Settings) {
		s.MaxRetries = 1
		s.Fallback = []string{"model-b", "model-c"}
	}, append(retryEvents, trace.AgentRun)...)
	optWant(t, got,
		`"type":"agent_run","kind":"prompt","model":"claude-sonnet-4-5"}`,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":1,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
		`"type":"agent_run","kind":"continue","model":"claude-sonnet-4-5"}`,
		`"type":"retry_fallback","from":"claude-sonnet-4-5","to":"model-b"}`,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":1,"delayMs":0,"errorMessage":"529 overloaded_error"}`,
		`"type":"agent_run","kind":"continue","model":"model-b"}`,
		`"type":"retry_fallback","from":"model-b","to":"model-c"}`,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":1,"delayMs":0,"errorMessage":"529 overloaded_error"}`,
		`"type":"agent_run","kind":"continue","model":"model-c"}`,
		`"type":"auto_retry_end","success":true,"attempt":1}`,
		`"type":"prompt_resolved","prompt":1}`)
	if f.State != policy.StateIdle {
		t.Errorf("final %+v", f)
	}
	// With no model left the chain ends as it would have.
	src = strings.Repeat("  - {stopReason: error, errorMessage: 529 overloaded_error}\n", 4)
	got, _ = optRun(t, "turns:\n"+src, func(s *policy.Settings) {
		s.MaxRetries = 0
		s.Fallback = []string{"model-b"}
	}, retryEvents...)
	optWant(t, got,
		`"type":"retry_fallback","from":"claude-sonnet-4-5","to":"model-b"}`,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":0,"delayMs":0,"errorMessage":"529 overloaded_error"}`,
		`"type":"auto_retry_end","success":false,"attempt":1,"finalError":"529 overloaded_error"}`,
		`"type":"prompt_resolved","prompt":1}`)
}

// TestPersistent: retryable errors are retried with no count limit, the
// wait capped; maxAttempts is 0.
func TestPersistent(t *testing.T) {
	src := "turns:\n" + strings.Repeat("  - {stopReason: error, errorMessage: 503 service unavailable}\n", 6) + "  - {stopReason: stop}\n"
	got, _ := optRun(t, src, func(s *policy.Settings) {
		s.MaxRetries = 1
		s.Persistent = true
		s.MaxBackoff = 5 * time.Second
	}, trace.AutoRetryStart, trace.AutoRetryEnd)
	var delays []float64
	for _, r := range got {
		if r.Type == trace.AutoRetryStart {
			delays = append(delays, r.Start.DelayMs)
			if r.Start.MaxAttempts != 0 {
				t.Errorf("maxAttempts %d, want 0", r.Start.MaxAttempts)
			}
		}
	}
	if want := []float64{2000, 4000, 5000, 5000, 5000, 5000}; !equalFloats(delays, want) {
		t.Errorf("delays %v, want %v", delays, want)
	}
	if last := got[len(got)-1]; last.Type != trace.AutoRetryEnd || !last.End.Success || last.End.Attempt != 6 {
		t.Errorf("end %q", optLines(got[len(got)-1:]))
	}
	// Usage limits stay bounded by maxRetries.
	src = "turns:\n" + strings.Repeat("  - {stopReason: error, errorMessage: usage limit reached}\n", 4)
	got, _ = optRun(t, src, func(s *policy.Settings) {
		s.MaxRetries = 1
		s.Persistent = true
		s.MaxBackoff = 5 * time.Second
	}, trace.AutoRetryEnd)
	optWant(t, got, `"type":"auto_retry_end","success":false,"attempt":1,"finalError":"usage limit reached"}`)
}

// TestHintReplaceAndCap: a hint replaces the capped backoff; without one
// the cap holds; a hint above maxHintMs is not used.
func TestHintReplaceAndCap(t *testing.T) {
	src := `turns:
  - {stopReason: error, errorMessage: "429 too many requests. Please try again in 1.5s"}
  - {stopReason: error, errorMessage: 503 service unavailable}
  - {stopReason: error, errorMessage: "429 too many requests, try again in 2 minutes"}
  - {stopReason: stop}
`
	got, _ := optRun(t, src, func(s *policy.Settings) {
		s.BaseDelay = 3 * time.Second
		s.MaxBackoff = 5 * time.Second
		s.RetryAfter = policy.RetryAfter{Use: policy.HintReplace, MaxHint: 60 * time.Second}
	}, trace.AutoRetryStart)
	var delays []float64
	for _, r := range got {
		delays = append(delays, r.Start.DelayMs)
	}
	if want := []float64{1500, 5000, 5000}; !equalFloats(delays, want) {
		t.Errorf("delays %v, want %v", delays, want)
	}
}

// TestJitterBounds: downward jitter keeps each wait in (b*(1-ratio), b],
// and the same scenario gives the same waits.
func TestJitterBounds(t *testing.T) {
	src := "turns:\n" + strings.Repeat("  - {stopReason: error, errorMessage: 503 service unavailable}\n", 3) + "  - {stopReason: stop}\n"
	set := func(s *policy.Settings) { s.Jitter = policy.Jitter{Mode: policy.JitterDown, Ratio: 0.25} }
	got, _ := optRun(t, src, set, trace.AutoRetryStart)
	again, _ := optRun(t, src, set, trace.AutoRetryStart)
	if strings.Join(optLines(got), "") != strings.Join(optLines(again), "") {
		t.Error("the same scenario gave different waits")
	}
	jittered := false
	for i, r := range got {
		b := float64(int(2000) << i)
		if d := r.Start.DelayMs; d <= b*0.75 || d > b {
			t.Errorf("retry %d: delay %v outside (%v, %v]", i+1, d, b*0.75, b)
		} else if d != b {
			jittered = true
		}
	}
	if !jittered {
		t.Error("no wait was jittered")
	}
}

// TestNextRetryAt: get_state says when the wait running ends.
func TestNextRetryAt(t *testing.T) {
	src := `turns:
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: stop}
actions:
  - {at: 500, do: get_state, id: a}
  - {at: 2500, do: get_state, id: b}
`
	got, _ := optRun(t, src, nil, trace.Response)
	if len(got) != 2 {
		t.Fatalf("responses %q", optLines(got))
	}
	if s := got[0].Response.State; !s.HasNextRetryAt || s.NextRetryAt != 2000 || s.Profile != policy.DefaultProfile {
		t.Errorf("in the wait: %+v", s)
	}
	if s := got[1].Response.State; s.HasNextRetryAt {
		t.Errorf("after the wait: %+v", s)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCheckSoundTraceOptIn: the checker accepts the opt-in ends and
// restarts, and still rejects an end outside a chain.
func TestCheckSoundTraceOptIn(t *testing.T) {
	start := func(a int) trace.Record {
		return trace.Record{Type: trace.AutoRetryStart, Start: policy.AutoRetryStart{Attempt: a}}
	}
	end := func(a int, ok bool, final string) trace.Record {
		return trace.Record{Type: trace.AutoRetryEnd, End: policy.AutoRetryEnd{Attempt: a, Success: ok, FinalError: final}}
	}
	fb := trace.Record{Type: trace.RetryFallback}
	tests := []struct {
		name string
		rs   []trace.Record
		ok   bool
	}{
		{"fail-fast at the first error", []trace.Record{end(1, false, "Provider requested 9ms wait, exceeds retry.maxDelayMs (1ms). Original error: x")}, true},
		{"an end at attempt 1 outside a chain", []trace.Record{end(1, false, "x")}, false},
		{"fallback restarts the count", []trace.Record{start(1), start(2), fb, start(1), end(1, true, "")}, true},
		{"fallback at rest then its start", []trace.Record{fb, start(1), end(1, true, "")}, true},
		{"fallback at rest without a start", []trace.Record{fb, end(0, false, "x")}, false},
		{"no restart without fallback", []trace.Record{start(1), start(1)}, false},
	}
	for _, tt := range tests {
		if err := sim.CheckSoundTrace(tt.rs); (err == nil) != tt.ok {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

// TestSeedAndFixedDraws: random.fixed makes every draw U (2000*(1-0.25*0.4)
// = 1800); the seed makes the waits reproducible, and another seed gives
// other waits.
func TestSeedAndFixedDraws(t *testing.T) {
	body := "settings: {jitter: {mode: down, ratio: 0.25}}\nturns:\n" +
		strings.Repeat("  - {stopReason: error, errorMessage: 503 service unavailable}\n", 3) + "  - {stopReason: stop}\n"
	got, _ := optRun(t, "random: {fixed: 0.4}\n"+body, nil, trace.AutoRetryStart)
	var delays []float64
	for _, r := range got {
		delays = append(delays, r.Start.DelayMs)
	}
	if want := []float64{1800, 3600, 7200}; !equalFloats(delays, want) {
		t.Errorf("fixed draws: delays %v, want %v", delays, want)
	}
	a, _ := optRun(t, "seed: 7\n"+body, nil, trace.AutoRetryStart)
	b, _ := optRun(t, "seed: 7\n"+body, nil, trace.AutoRetryStart)
	c, _ := optRun(t, "seed: 8\n"+body, nil, trace.AutoRetryStart)
	if strings.Join(optLines(a), "") != strings.Join(optLines(b), "") {
		t.Error("the same seed gave different waits")
	}
	if strings.Join(optLines(a), "") == strings.Join(optLines(c), "") {
		t.Error("seeds 7 and 8 gave the same waits")
	}
}

// TestStatusAndHeaders: in status mode a 409 with x-should-retry false is
// final, and a 429's retry-after header replaces the backoff.
func TestStatusAndHeaders(t *testing.T) {
	src := `settings: {classify: status, retryAfter: {use: replace}}
turns:
  - {stopReason: error, errorMessage: rate limited, status: 429, headers: {retry-after: "7"}}
  - {stopReason: error, errorMessage: conflict, status: 409, headers: {x-should-retry: "false"}}
`
	got, _ := optRun(t, src, nil, trace.AutoRetryStart, trace.AutoRetryEnd)
	optWant(t, got,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":7000,"errorMessage":"rate limited"}`,
		`"type":"auto_retry_end","success":false,"attempt":1,"finalError":"conflict"}`)
}

// TestOriginalRefusesOptInSettings: the original variant's table has no
// rule for the opt-in settings, so a session refuses them.
func TestOriginalRefusesOptInSettings(t *testing.T) {
	sc, err := scenario.Parse("o.yaml", []byte("turns: [{stopReason: stop}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	sc.Settings.Fallback = []string{"m2"}
	if _, err := sim.NewSession(sc, sim.Options{Variant: "original"}); err == nil || !strings.Contains(err.Error(), "variant original takes only") {
		t.Errorf("NewSession = %v", err)
	}
	if _, err := sim.NewSession(sc, sim.Options{}); err != nil {
		t.Errorf("sound: %v", err)
	}
}
