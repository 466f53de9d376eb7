package retry_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/retry"
)

func TestProfiles(t *testing.T) {
	ps := retry.Profiles()
	if len(ps) == 0 || ps[0].Name != retry.DefaultProfile {
		t.Fatalf("%d profiles, first %q; want the default first", len(ps), ps[0].Name)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Name] {
			t.Errorf("profile %q twice", p.Name)
		}
		seen[p.Name] = true
		if err := p.Settings.Validate(); err != nil {
			t.Errorf("profile %s: invalid settings: %v", p.Name, err)
		}
		if p.Summary == "" || p.Source == "" {
			t.Errorf("profile %s: no summary or source", p.Name)
		}
		q, err := retry.ProfileByName(p.Name)
		if err != nil || !q.Settings.Equal(p.Settings) {
			t.Errorf("ProfileByName(%q) = %+v, %v", p.Name, q, err)
		}
	}
	if def, _ := retry.ProfileByName(""); !def.Settings.Equal(retry.DefaultSettings()) || def.Name != retry.DefaultProfile {
		t.Errorf("the default profile is %+v, want the default settings", def)
	}
	if _, err := retry.ProfileByName("nope"); err == nil || !strings.Contains(err.Error(), "omp-2026-06") {
		t.Errorf("unknown profile: %v (want an error listing the allowed names)", err)
	}
	// Profiles returns copies.
	ps[1].Settings.Fallback = append(ps[1].Settings.Fallback, "x")
	if q, _ := retry.ProfileByName(ps[1].Name); len(q.Settings.Fallback) != 0 {
		t.Error("Profiles shares its settings with the table")
	}
}

// TestProfileParameters pins each profile's parameters to the reference
// (/work/shared/reference/profiles.md; SPEC.md §14 gives each value's
// origin and the choices made where upstream is uncertain or cannot be
// expressed). Pattern lists are pinned by their vectors
// (profile_vectors_test.go); here only whether a profile has them.
func TestProfileParameters(t *testing.T) {
	type params struct {
		maxRetries           int
		base, cap            time.Duration
		jitter               retry.Jitter
		retryAfter           retry.RetryAfter
		classify             string
		retryable, nonRetry  bool
		persistent, fallback bool
	}
	none := retry.Jitter{Mode: retry.JitterNone}
	ignore := retry.RetryAfter{Use: retry.HintIgnore}
	want := map[string]params{
		// §3.1: retry.maxRetries 3, retry.baseDelayMs 2000; no cap, no
		// jitter, hints only for the credential switch.
		"omp-2026-02": {3, 2 * time.Second, 0, none, ignore, retry.ClassifyMessage, false, false, false, false},
		// §3.2: maxRetries 10, baseDelayMs 500, RETRY_BACKOFF_MAX_DELAY_MS
		// 8000, RETRY_BACKOFF_JITTER_RATIO 0.25 (downward), hints a floor,
		// maxDelayMs 300000 (fail-fast); fallbackChains {} (no fallback).
		"omp-2026-06": {10, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintFloor, MaxWait: 300 * time.Second}, retry.ClassifyMessage, false, false, false, false},
		// §4.1-4.2: maxRetries 3, baseDelayMs 2000, no agent cap (the
		// later maxAgentDelayMs is uncertain), no jitter, no hint; the
		// classifier of retry.ts@0cfc73e4.
		"pi": {3, 2 * time.Second, 0, none, ignore, retry.ClassifyMessage, true, true, false, false},
		// §5 (c): stream_max_retries 5, 200*2^(retries-1)*U(0.9,1.1), no
		// cap, the in-stream hint replaces the backoff without a cap.
		"codex": {5, 200 * time.Millisecond, 0, retry.Jitter{Mode: retry.JitterUpDown, Ratio: 0.1},
			retry.RetryAfter{Use: retry.HintReplace}, retry.ClassifyMessage, true, true, false, false},
		// §7: DEFAULT_MAX_ATTEMPTS 10 (9 retries), initialDelayMs 5000,
		// maxDelayMs 30000, ±30 %, hint a floor, over
		// MAX_RETRYABLE_DELAY_SECONDS 300 terminal; 429/5xx by status.
		"gemini-cli": {9, 5 * time.Second, 30 * time.Second, retry.Jitter{Mode: retry.JitterUpDown, Ratio: 0.3},
			retry.RetryAfter{Use: retry.HintFloor, MaxWait: 300 * time.Second}, retry.ClassifyStatus, true, true, false, false},
		// §6: RETRY_INITIAL_DELAY 2000, factor 2, RETRY_MAX_DELAY_NO_HEADERS
		// 30000, hints replace (bounded only by 2^31-1 ms), no jitter,
		// RETRY_MAX_RETRIES 5 (v1.18.x); APIError.isRetryable by status.
		"opencode": {5, 2 * time.Second, 30 * time.Second, none, retry.RetryAfter{Use: retry.HintReplace},
			retry.ClassifyStatus, true, false, false, false},
		// §8: retry_delay 0.125 s doubled before each sleep, stop above
		// RETRY_TIMEOUT 60 s: 0.25 ... 32 s, 8 retries; Retry-After ignored.
		"aider": {8, 250 * time.Millisecond, 0, none, ignore, retry.ClassifyMessage, true, true, false, false},
		// §9.1: maxRetries 2, min(0.5*2^n, 8) s*(1-0.25u), hints used
		// whenever present (no bound since v0.79.0), x-should-retry or
		// 408/409/429/>=500.
		"anthropic-sdk": {2, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintReplace}, retry.ClassifyStatus, true, false, false, false},
		// §10: as anthropic-sdk, hints only if 0 <= t <= 60000.
		"openai-sdk": {2, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintReplace}, retry.ClassifyStatus, true, false, false, false},
		// anthropics/anthropic-sdk-go@v2.15.0 retryDelay: any hint, max(0, hint).
		"anthropic-sdk-go": {2, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintReplace}, retry.ClassifyStatus, true, false, false, false},
		// openai/openai-go@v3.98.0 retryDelay: a hint over 2 minutes is not retried.
		"openai-sdk-go": {2, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintReplace, MaxWait: 120 * time.Second}, retry.ClassifyStatus, true, false, false, false},
		// issue 24: oh-my-pi 18.3.4's session layer is omp-2026-06's
		// (auto_retry_start delayMs 445.5 and 926.2 observed, in its
		// ranges) ...
		"omp-18": {10, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintFloor, MaxWait: 300 * time.Second}, retry.ClassifyMessage, false, false, false, false},
		// ... over pi-ai's Anthropic provider: up to 10 retries (11
		// requests), 500*2^k ms capped at 8 s, downward jitter,
		// max(hint, backoff), a wait over the agent's retry.maxDelayMs
		// (300 s) not waited (measured: a 90 s hint waited in full);
		// Anthropic's statuses.
		"pi-ai-anthropic": {10, 500 * time.Millisecond, 8 * time.Second, retry.Jitter{Mode: retry.JitterDown, Ratio: 0.25},
			retry.RetryAfter{Use: retry.HintFloor, MaxWait: 300 * time.Second}, retry.ClassifyStatus, true, false, false, false},
	}
	// Every transcription names a profile of the table. A profile added
	// later need not be transcribed here: its vectors folder
	// (scenarios/profiles/NAME, which the CLI's TestProfileScenarioFiles requires) checks
	// its parameters by their effect.
	ps := retry.Profiles()
	for name := range want {
		if _, err := retry.ProfileByName(name); err != nil {
			t.Errorf("transcribed profile %q: %v", name, err)
		}
	}
	for _, p := range ps {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		s := p.Settings.Normalized()
		got := params{s.MaxRetries, s.BaseDelay, s.MaxBackoff, s.Jitter, s.RetryAfter, s.Classify,
			len(s.RetryablePatterns) > 0, len(s.NonRetryablePatterns) > 0, s.Persistent, len(s.Fallback) > 0}
		if got != w {
			t.Errorf("profile %s:\n got %+v\nwant %+v", p.Name, got, w)
		}
		layer := map[string]string{"omp-18": "pi-ai-anthropic"}[p.Name]
		if p.Layer != layer {
			t.Errorf("profile %s: provider layer %q, want %q", p.Name, p.Layer, layer)
		}
		if !s.Enabled || s.BackoffFactor != 2 {
			t.Errorf("profile %s: enabled %v, factor %v; want true, 2", p.Name, s.Enabled, s.BackoffFactor)
		}
	}
}

// TestResolve: the one pairing of variant and profile. "" is sound and the
// default profile; the original takes the default profile only (a
// *PairError naming both); an unknown name is the lookup's error.
func TestResolve(t *testing.T) {
	v, p, err := retry.Resolve("", "")
	if err != nil || v != retry.Sound() || p.Name != retry.DefaultProfile {
		t.Errorf(`Resolve("", "") = %v, %q, %v`, v, p.Name, err)
	}
	if v, p, err := retry.Resolve("sound", "codex"); err != nil || v != retry.Sound() || p.Name != "codex" {
		t.Errorf(`Resolve("sound", "codex") = %v, %q, %v`, v, p.Name, err)
	}
	if v, _, err := retry.Resolve("original", retry.DefaultProfile); err != nil || v != retry.Original() {
		t.Errorf("original with the default profile: %v, %v", v, err)
	}
	var pair *retry.PairError
	_, _, err = retry.Resolve("original", "codex")
	if !errors.As(err, &pair) || pair.Variant != "original" || pair.Profile != "codex" ||
		!strings.Contains(err.Error(), "variant original allows only profile "+retry.DefaultProfile+", not codex") {
		t.Errorf(`Resolve("original", "codex") = %v, want a *PairError`, err)
	}
	for _, tt := range [][2]string{{"nope", ""}, {"", "nope"}} {
		if _, _, err := retry.Resolve(tt[0], tt[1]); err == nil || errors.As(err, &pair) || !strings.Contains(err.Error(), `"nope"`) {
			t.Errorf("Resolve(%q, %q) = %v, want the unknown name's error", tt[0], tt[1], err)
		}
	}
	if names := retry.ProfileNames(); len(names) != len(retry.Profiles()) || names[0] != retry.DefaultProfile {
		t.Errorf("ProfileNames() = %v", names)
	}
}
