package retry_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/retry"
)

func TestSettingsDefaults(t *testing.T) {
	d := retry.DefaultSettings()
	if !d.Equal(retry.Settings{Enabled: true, MaxRetries: 3, BaseDelay: 2 * time.Second}) {
		t.Errorf("DefaultSettings() = %+v", d)
	}
	if err := d.Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

// TestSettingsValidate: each out-of-range field is reported by its JSON
// name, with a *SettingsError; the bounds themselves are valid.
func TestSettingsValidate(t *testing.T) {
	base := retry.DefaultSettings()
	with := func(f func(*retry.Settings)) retry.Settings { s := base; f(&s); return s }
	bad := []struct {
		name  string
		s     retry.Settings
		field string
		value string
	}{
		{"negative maxRetries", with(func(s *retry.Settings) { s.MaxRetries = -1 }), "maxRetries", "-1"},
		{"maxRetries above the limit", with(func(s *retry.Settings) { s.MaxRetries = retry.MaxRetriesLimit + 1 }), "maxRetries", "1001"},
		{"huge maxRetries", with(func(s *retry.Settings) { s.MaxRetries = math.MaxInt }), "maxRetries", ""},
		{"negative delay", with(func(s *retry.Settings) { s.BaseDelay = -time.Millisecond }), "baseDelayMs", "-1"},
		{"delay above the limit", with(func(s *retry.Settings) { s.BaseDelay = retry.MaxBaseDelay + time.Millisecond }), "baseDelayMs", "86400001"},
		{"both: maxRetries first", retry.Settings{MaxRetries: -5, BaseDelay: -time.Second}, "maxRetries", "-5"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s.Validate()
			if err == nil {
				t.Fatalf("Validate(%+v) = nil", tc.s)
			}
			if !strings.Contains(err.Error(), tc.field) || (tc.value != "" && !strings.Contains(err.Error(), tc.value)) {
				t.Errorf("error %q does not name %s = %s", err, tc.field, tc.value)
			}
			if !strings.Contains(err.Error(), "allowed") {
				t.Errorf("error %q does not say what is allowed", err)
			}
			var se *retry.SettingsError
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Errorf("error %#v is not a *SettingsError for %s", err, tc.field)
			}
		})
	}
	good := []retry.Settings{
		{MaxRetries: 0, BaseDelay: 0},
		{Enabled: true, MaxRetries: retry.MaxRetriesLimit, BaseDelay: retry.MaxBaseDelay},
		{Enabled: false, MaxRetries: 3, BaseDelay: time.Millisecond},
	}
	for _, s := range good {
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", s, err)
		}
	}
}

// TestSettingsDelay: the backoff doubles from the base delay, is 0 before
// the first retry, and saturates at the largest Duration instead of
// wrapping negative.
func TestSettingsDelay(t *testing.T) {
	d := retry.DefaultSettings()
	cases := []struct {
		attempt int
		want    time.Duration
	}{
		{-1, 0}, {0, 0}, {1, 2 * time.Second}, {2, 4 * time.Second}, {3, 8 * time.Second}, {4, 16 * time.Second},
		{63, math.MaxInt64}, {64, math.MaxInt64}, {1000, math.MaxInt64}, {math.MaxInt, math.MaxInt64},
	}
	for _, tc := range cases {
		if got := d.Delay(tc.attempt); got != tc.want {
			t.Errorf("Delay(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
	for _, base := range []time.Duration{1, time.Millisecond, 2 * time.Second, retry.MaxBaseDelay, math.MaxInt64} {
		s := retry.Settings{Enabled: true, MaxRetries: 3, BaseDelay: base}
		prev := time.Duration(0)
		for k := 1; k <= 200; k++ {
			got := s.Delay(k)
			if got < prev || got <= 0 {
				t.Fatalf("base %v: Delay(%d) = %v after %v: not positive and non-decreasing", base, k, got, prev)
			}
			if k <= 63 && got != math.MaxInt64 && got != base<<(k-1) {
				t.Fatalf("base %v: Delay(%d) = %v, want %v", base, k, got, base<<(k-1))
			}
			prev = got
		}
	}
	if got := (retry.Settings{BaseDelay: 0}).Delay(5); got != 0 {
		t.Errorf("zero base: Delay(5) = %v", got)
	}
	if got := (retry.Settings{BaseDelay: -time.Second}).Delay(1); got != 0 {
		t.Errorf("negative base: Delay(1) = %v, want 0", got)
	}
}

// TestSettingsJSON: keys enabled/maxRetries/baseDelayMs, a round trip, and
// defaults for missing keys.
func TestSettingsJSON(t *testing.T) {
	b, err := json.Marshal(retry.DefaultSettings())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"enabled":true,"maxRetries":3,"baseDelayMs":2000}` {
		t.Errorf("json.Marshal(defaults) = %s", b)
	}
	for _, s := range []retry.Settings{
		retry.DefaultSettings(),
		{Enabled: false, MaxRetries: 0, BaseDelay: 0},
		{Enabled: true, MaxRetries: 7, BaseDelay: 1500 * time.Millisecond},
		{Enabled: false, MaxRetries: retry.MaxRetriesLimit, BaseDelay: retry.MaxBaseDelay},
	} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var got retry.Settings
		if err := json.Unmarshal(b, &got); err != nil || !got.Equal(s) {
			t.Errorf("round trip of %+v via %s = %+v, %v", s, b, got, err)
		}
	}
	missing := []struct {
		in   string
		want retry.Settings
	}{
		{`{}`, retry.DefaultSettings()},
		{`{"enabled":false}`, retry.Settings{Enabled: false, MaxRetries: 3, BaseDelay: 2 * time.Second}},
		{`{"maxRetries":0}`, retry.Settings{Enabled: true, MaxRetries: 0, BaseDelay: 2 * time.Second}},
		{`{"baseDelayMs":500}`, retry.Settings{Enabled: true, MaxRetries: 3, BaseDelay: 500 * time.Millisecond}},
		{`{"enabled":true,"maxRetries":5,"baseDelayMs":100}`, retry.Settings{Enabled: true, MaxRetries: 5, BaseDelay: 100 * time.Millisecond}},
		{`{"maxRetries":null}`, retry.DefaultSettings()},
	}
	for _, tc := range missing {
		var got retry.Settings
		if err := json.Unmarshal([]byte(tc.in), &got); err != nil || !got.Equal(tc.want) {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	// Inside a settings file: the retry group is a nested object.
	var file struct {
		Retry retry.Settings `json:"retry"`
	}
	if err := json.Unmarshal([]byte(`{"retry":{"maxRetries":1}}`), &file); err != nil || !file.Retry.Equal(retry.Settings{Enabled: true, MaxRetries: 1, BaseDelay: 2 * time.Second}) {
		t.Errorf("nested: %+v, %v", file.Retry, err)
	}
	for _, in := range []string{`{"maxRetries":"3"}`, `{"enabled":1}`, `{"baseDelayMs":"1.5"}`, `{"unknown":1}`, `[`} {
		var got retry.Settings
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, want an error", in, got)
		}
	}
	// Out-of-range values decode, and Validate names them.
	var neg retry.Settings
	if err := json.Unmarshal([]byte(`{"maxRetries":-1,"baseDelayMs":2000}`), &neg); err != nil {
		t.Fatal(err)
	}
	if err := neg.Validate(); err == nil || !strings.Contains(err.Error(), "maxRetries") {
		t.Errorf("Validate of decoded maxRetries -1 = %v", err)
	}
}
