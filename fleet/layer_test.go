package fleet

import (
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"strings"
	"testing"
	"time"
)

// TestProviderLayerProfile: omp-18 runs over its own provider layer
// (pi-ai-anthropic, 10 retries: 11 requests per model call) without an
// sdk key, as issue 24 observed the real agent: a permanent 529 makes 11
// session calls of 11 wire calls each; 529, 529, OK and a 429 with
// retry-after 3 s are absorbed by the provider layer (one session call,
// no chain of the session layer).
func TestProviderLayerProfile(t *testing.T) {
	res, err := runConfig(forever529(5, "omp-18", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	s := g.Profiles[0]
	if g.SDK != "pi-ai-anthropic" {
		t.Errorf("group's SDK layer %q, want pi-ai-anthropic (the profile's own)", g.SDK)
	}
	if s.Prompts != 5 || s.Failed != 5 || s.Calls != 5*11 || s.WireCalls != 5*11*11 || s.ChainsExhausted != 5 {
		t.Fatalf("prompts %d failed %d calls %d wire %d exhausted %d; want 5, 5, 55, 605, 5", s.Prompts, s.Failed, s.Calls, s.WireCalls, s.ChainsExhausted)
	}
	// The same session layer alone: every call is a wire call.
	res, err = runConfig(forever529(5, "omp-2026-06", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Groups[0].Profiles[0]; s.Calls != 55 || s.WireCalls != 55 || res.Groups[0].SDK != "" {
		t.Fatalf("omp-2026-06 alone: calls %d wire %d sdk %q; want 55, 55, none", s.Calls, s.WireCalls, res.Groups[0].SDK)
	}

	for _, tc := range []struct {
		name       string
		errors     fleetspec.PromptErrors
		retryAfter time.Duration
		wire       int64
		minTime    time.Duration
	}{
		{"529, 529, OK", fleetspec.PromptErrors{Count: 2, Kind: fleetspec.Kind529}, 0, 3, 0},
		{"429 with retry-after 3", fleetspec.PromptErrors{Count: 1, Kind: fleetspec.Kind429}, 3 * time.Second, 2, 3 * time.Second},
	} {
		c := fleetspec.Default(4)
		c.Profiles = fleetspec.Mix{{Profile: "omp-18", Percent: 100}}
		c.PromptErrors = tc.errors
		c.OverCapacity.RetryAfter = tc.retryAfter
		res, err := runConfig(c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Groups[0].Profiles[0]
		if s.Succeeded != 4 || s.Calls != 4 || s.WireCalls != 4*tc.wire {
			t.Errorf("%s: succeeded %d calls %d wire %d; want 4, 4, %d", tc.name, s.Succeeded, s.Calls, s.WireCalls, 4*tc.wire)
		}
		if n := s.ChainsSucceeded + s.ChainsExhausted + s.ChainsFailFast + s.ChainsOther; n != 0 {
			t.Errorf("%s: %d chains of the session layer; want none (no auto_retry_* events)", tc.name, n)
		}
		if min := time.Duration(s.TimeToSuccess.Quantile(0)) * time.Millisecond; min < tc.minTime {
			t.Errorf("%s: fastest success after %v; the provider layer waits at least %v", tc.name, min, tc.minTime)
		}
	}
}

// TestProviderLayerMixRefused: the SDK layer is the fleet's, so a
// profile with a provider layer of its own cannot run over another one,
// nor share a fleet with profiles without it.
func TestProviderLayerMixRefused(t *testing.T) {
	for _, tc := range []struct {
		mix, sdk, want string
	}{
		{"omp-18", "anthropic-sdk", `profile omp-18 runs over provider layer "pi-ai-anthropic", but the fleet's SDK layer is "anthropic-sdk"`},
		{"omp-18=50%,pi=50%", "", `profile pi runs over provider layer "", but the fleet's SDK layer is "pi-ai-anthropic"`},
	} {
		m, err := fleetspec.ParseMix(tc.mix)
		if err != nil {
			t.Fatal(err)
		}
		c := fleetspec.Default(2)
		c.Profiles, c.SDK = m, tc.sdk
		err = c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s over %q: %v; want %q", tc.mix, tc.sdk, err, tc.want)
		}
	}
	c := fleetspec.Default(2)
	c.Profiles, c.SDK = fleetspec.Mix{{Profile: "omp-18", Percent: 100}}, "pi-ai-anthropic"
	if err := c.Validate(); err != nil {
		t.Errorf("omp-18 over its own layer named: %v", err)
	}
}
