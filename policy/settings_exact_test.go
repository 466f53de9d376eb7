package policy_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestSettingsJSONKeysExact: keys are matched exactly (encoding/json's
// case-insensitive match took {"MAXRETRIES":7} as 7) and an unknown key is an
// error that names it, lists the allowed keys and the closest ones.
func TestSettingsJSONKeysExact(t *testing.T) {
	for _, tc := range []struct{ in, key, hint string }{
		{`{"MAXRETRIES":7}`, "MAXRETRIES", "; did you mean maxRetries?"},
		{`{"Enabled":false}`, "Enabled", "; did you mean enabled?"},
		{`{"basedelayms":5}`, "basedelayms", "; did you mean baseDelayMs?"},
		{`{"maxRetries":2,"retries":3}`, "retries", "; did you mean maxRetries?"},
		{`{"maxRetries":2,"MaxRetries":3}`, "MaxRetries", "; did you mean maxRetries?"},
		{`{"":1}`, "", ""},
		{`{"zeta":1,"alpha":2}`, "alpha", ""}, // the first unknown key in sorted order
	} {
		var got policy.Settings
		err := json.Unmarshal([]byte(tc.in), &got)
		want := `retry settings: unknown key "` + tc.key + `" (allowed: enabled, maxRetries, baseDelayMs, backoffFactor, maxBackoffMs, jitter, retryAfter, classify, retryablePatterns, nonRetryablePatterns, persistent, fallback)` + tc.hint
		if err == nil || err.Error() != want {
			t.Errorf("Unmarshal(%s) = %+v, %v; want the error %q", tc.in, got, err, want)
		}
		if !got.Equal(policy.Settings{}) {
			t.Errorf("Unmarshal(%s) wrote %+v despite the error", tc.in, got)
		}
	}
}

// TestSettingsJSONTypeErrors: a value of the wrong type is an error naming
// the key, the value and what is allowed.
func TestSettingsJSONTypeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"maxRetries":"3"}`, `retry settings: maxRetries = "3" is not an integer (allowed: an integer from 0 to 1000)`},
		{`{"maxRetries":1.5}`, `retry settings: maxRetries = 1.5 is not an integer (allowed: an integer from 0 to 1000)`},
		{`{"enabled":1}`, `retry settings: enabled = 1 is not a boolean (allowed: true or false)`},
		{`{"baseDelayMs":"2s"}`, `retry settings: baseDelayMs = "2s" is not a number (allowed: 0 to 86400000 ms)`},
		{`{"baseDelayMs":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]}`,
			`retry settings: baseDelayMs = [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,… is not a number (allowed: 0 to 86400000 ms)`},
		{`{"baseDelayMs":"1.5"}`, `retry settings: baseDelayMs = "1.5" is not a number (allowed: 0 to 86400000 ms)`},
		{`{"enabled":"ééééééééééééééééééééééééééééééééééééééééééé"}`, `retry settings: enabled = "ééééééééééééééééééééééééééééééééééééééé… is not a boolean (allowed: true or false)`},
		{`[1]`, `retry settings: want a JSON object with keys enabled, maxRetries, baseDelayMs, backoffFactor, maxBackoffMs, jitter, retryAfter, classify, retryablePatterns, nonRetryablePatterns, persistent, fallback, got an array`},
		{`"x"`, `retry settings: want a JSON object with keys enabled, maxRetries, baseDelayMs, backoffFactor, maxBackoffMs, jitter, retryAfter, classify, retryablePatterns, nonRetryablePatterns, persistent, fallback, got a string`},
		{`7`, `retry settings: want a JSON object with keys enabled, maxRetries, baseDelayMs, backoffFactor, maxBackoffMs, jitter, retryAfter, classify, retryablePatterns, nonRetryablePatterns, persistent, fallback, got a number`},
	} {
		var got policy.Settings
		if err := json.Unmarshal([]byte(tc.in), &got); err == nil || err.Error() != tc.want {
			t.Errorf("Unmarshal(%s) = %v\nwant %q", tc.in, err, tc.want)
		}
	}
}

// TestSettingsJSONFractionalDelay: baseDelayMs keeps a fraction of a
// millisecond both ways (it was written as whole milliseconds, so 999 µs
// became 0), whole milliseconds are written as before, and a value too
// large for a Duration saturates.
func TestSettingsJSONFractionalDelay(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		json string
	}{
		{999 * time.Microsecond, `{"enabled":true,"maxRetries":3,"baseDelayMs":0.999}`},
		{1500 * time.Microsecond, `{"enabled":true,"maxRetries":3,"baseDelayMs":1.5}`},
		{time.Nanosecond, `{"enabled":true,"maxRetries":3,"baseDelayMs":0.000001}`},
		{2*time.Second + time.Nanosecond, `{"enabled":true,"maxRetries":3,"baseDelayMs":2000.000001}`},
		{2 * time.Second, `{"enabled":true,"maxRetries":3,"baseDelayMs":2000}`},
		{policy.MaxBaseDelay - time.Nanosecond, `{"enabled":true,"maxRetries":3,"baseDelayMs":86399999.999999}`},
		{0, `{"enabled":true,"maxRetries":3,"baseDelayMs":0}`},
	} {
		s := policy.Settings{Enabled: true, MaxRetries: 3, BaseDelay: tc.d}
		b, err := json.Marshal(s)
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.d, b, err, tc.json)
		}
		var got policy.Settings
		if err := json.Unmarshal([]byte(tc.json), &got); err != nil || !got.Equal(s) {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", tc.json, got, err, s)
		}
	}
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{`{"baseDelayMs":1e3}`, time.Second},
		{`{"baseDelayMs":0.0000004}`, 0}, // rounded to the nanosecond
		{`{"baseDelayMs":-0}`, 0},
		{`{"baseDelayMs":-0.5}`, -500 * time.Microsecond},
	} {
		var got policy.Settings
		if err := json.Unmarshal([]byte(tc.in), &got); err != nil || got.BaseDelay != tc.want {
			t.Errorf("Unmarshal(%s).BaseDelay = %v, %v; want %v", tc.in, got.BaseDelay, err, tc.want)
		}
	}
	// Beyond any Duration: an error quoting the number as written (issue 19
	// §5: it said 9223372036854.775, the saturated value).
	for _, tc := range []struct{ in, want string }{
		{`{"baseDelayMs":9223372036854775807}`, "retry settings: baseDelayMs = 9223372036854775807 is out of range (allowed: 0 to 86400000 ms)"},
		{`{"baseDelayMs":1e300}`, "retry settings: baseDelayMs = 1e300 is out of range (allowed: 0 to 86400000 ms)"},
		{`{"baseDelayMs":1e400}`, "retry settings: baseDelayMs = 1e400 is out of range"},
		{`{"baseDelayMs":-1e400}`, "retry settings: baseDelayMs = -1e400 is out of range"},
		{`{"maxBackoffMs":9.3e12}`, "retry settings: maxBackoffMs = 9.3e12 is out of range (allowed: 0 (no cap) or 0 to 86400000 ms)"},
		{`{"retryAfter":{"maxWaitMs":-9.3e12}}`, "retry settings: retryAfter.maxWaitMs = -9.3e12 is out of range (allowed: 0 (none) or 0 to 86400000 ms)"},
	} {
		var got policy.Settings
		var se *policy.SettingsError
		err := json.Unmarshal([]byte(tc.in), &got)
		if err == nil || !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Unmarshal(%s): %v; want a *SettingsError %q", tc.in, err, tc.want)
		}
	}
}

// TestSubMillisecondDelayMs: a base delay under (or not a whole number of)
// milliseconds set through the Go API is reported exactly in
// auto_retry_start: delayMs keeps the fraction and is written as JavaScript
// writes the number (999 µs gave 0). Whole milliseconds are written as
// before.
func TestSubMillisecondDelayMs(t *testing.T) {
	for _, tc := range []struct {
		base time.Duration
		want []string // delayMs of attempts 1, 2, 3
	}{
		{999 * time.Microsecond, []string{"0.999", "1.998", "3.996"}},
		{250 * time.Microsecond, []string{"0.25", "0.5", "1"}},
		{time.Nanosecond, []string{"0.000001", "0.000002", "0.000004"}},
		{1500 * time.Microsecond, []string{"1.5", "3", "6"}},
		{2 * time.Second, []string{"2000", "4000", "8000"}},
	} {
		h := newCtlHarness(t, policy.Settings{Enabled: true, MaxRetries: 3, BaseDelay: tc.base}, nil)
		for i, want := range tc.want {
			if i == 0 {
				h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
			} else {
				h.clk.Add(h.ctl.Settings().Delay(i))
				h.waitContinue()
				h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
			}
			evs := h.eventList()
			start, ok := evs[len(evs)-1].(policy.AutoRetryStart)
			wantJSON := `{"type":"auto_retry_start","attempt":` + string(rune('1'+i)) + `,"maxAttempts":3,"delayMs":` + want + `,"errorMessage":"529 overloaded_error"}`
			if got := h.eventJSON(); !ok || got[len(got)-1] != wantJSON {
				t.Errorf("base %v, attempt %d: %q, want %s", tc.base, i+1, got, wantJSON)
			}
			if wantMs := float64(tc.base<<i) / float64(time.Millisecond); start.DelayMs != wantMs {
				t.Errorf("base %v, attempt %d: DelayMs = %v, want %v", tc.base, i+1, start.DelayMs, wantMs)
			}
		}
		h.ctl.AbortRetry()
	}
}

// TestSaturatedDelayMs: the saturated delay (the largest Duration) is
// reported with its fraction, as the Duration it is.
func TestSaturatedDelayMs(t *testing.T) {
	set := policy.Settings{Enabled: true, MaxRetries: 1000, BaseDelay: policy.MaxBaseDelay}
	var d retry.Decision
	policy.Sound().Decide(&d, retry.Snapshot{State: policy.StateContinuing, Attempt: 100, Open: true}, retry.InputRetryable,
		&classify.Outcome{Message: "529 overloaded_error", Class: classify.ClassRetryable}, policy.MustCompile(set))
	var start policy.AutoRetryStart
	fx := d.Effects()
	for i := range fx {
		if fx[i].Kind == retry.StepEmitStart {
			start = d.Start(&fx[i])
		}
	}
	if start.DelayMs != 9223372036854.775807 {
		t.Errorf("DelayMs = %v, want 9223372036854.775807 (the largest Duration in ms)", start.DelayMs)
	}
	if b, _ := start.MarshalJSON(); !strings.Contains(string(b), `"delayMs":9223372036854.775,`) {
		t.Errorf("JSON %s", b)
	}
}

// TestControllerSettingsInUse: Settings and AutoRetryEnabled report the
// settings the Controller decides with: the last policy when a custom
// source gives none.
func TestControllerSettingsInUse(t *testing.T) {
	src := &badLaterSource{}
	c, err := policy.NewController(policy.Config{Clock: newCtlClock(t), Agent: newCtlAgent(), Settings: src})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Settings(); !got.Equal(policy.DefaultSettings()) {
		t.Errorf("Settings() = %+v while the source gives no policy; want the last one's %+v", got, policy.DefaultSettings())
	}
	if !c.AutoRetryEnabled() {
		t.Error("AutoRetryEnabled() = false, want the last policy's true")
	}
	if src.calls < 3 {
		t.Fatalf("the source was read %d times: Settings did not read it fresh", src.calls)
	}
	// A valid value from the source is reported (and used) as it is.
	st := policy.NewSettingsStore(policy.DefaultPolicy())
	c2, err := policy.NewController(policy.Config{Clock: newCtlClock(t), Agent: newCtlAgent(), Settings: st})
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Settings{Enabled: false, MaxRetries: 7, BaseDelay: 999 * time.Microsecond}
	st.Set(policy.MustCompile(want))
	if got := c2.Settings(); !got.Equal(want) {
		t.Errorf("Settings() = %+v, want %+v", got, want)
	}
}
