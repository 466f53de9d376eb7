package fleet

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// forever529 is a fleet of n sessions whose provider answers 529 to every
// call.
func forever529(n int, profile, sdk string) Config {
	c := Default(n)
	c.PromptErrors = PromptErrors{}
	c.Outages = []Outage{{Start: 0, Duration: MaxDuration, Kind: Kind529}}
	c.Profiles = Mix{{Profile: profile, Percent: 100}}
	c.SDK = sdk
	return c
}

// TestSDKLayerAmplification is the exact check: a provider that
// answers 529 forever, agent omp-2026-02 over anthropic-sdk: 4 agent calls
// of 3 wire calls each, 12 wire calls per prompt.
func TestSDKLayerAmplification(t *testing.T) {
	res, err := Run(forever529(10, "omp-2026-02", "anthropic-sdk"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Groups[0].Profiles[0]
	if s.Prompts != 10 || s.Failed != 10 || s.Calls != 40 || s.WireCalls != 120 || s.ChainsExhausted != 10 {
		t.Fatalf("prompts %d failed %d calls %d wire %d exhausted %d; want 10, 10, 40, 120, 10", s.Prompts, s.Failed, s.Calls, s.WireCalls, s.ChainsExhausted)
	}
	sum := s.Summarize(0)
	if sum.CallsPerPrompt != 4 || sum.WireCallsPerPrompt != 12 {
		t.Fatalf("per prompt: %v calls, %v wire calls; want 4 and 12", sum.CallsPerPrompt, sum.WireCallsPerPrompt)
	}
	// Without the SDK layer, every call is a wire call.
	res, err = Run(forever529(10, "omp-2026-02", ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Groups[0].Profiles[0]; s.Calls != 40 || s.WireCalls != 40 {
		t.Fatalf("no SDK: calls %d wire %d, want 40 and 40", s.Calls, s.WireCalls)
	}
}

// TestDefaultFleet: three 529s then a success per prompt, under the
// default profile: 4 calls, every prompt succeeds after 2+4+8 s of
// backoff, 3 × 100 ms of errors and 1 s of success.
func TestDefaultFleet(t *testing.T) {
	res, err := Run(Default(1000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Groups[0].Profiles[0]
	if s.Sessions != 1000 || s.Prompts != 1000 || s.Succeeded != 1000 || s.Calls != 4000 || s.WireCalls != 4000 || s.ChainsSucceeded != 1000 {
		t.Fatalf("%+v", s)
	}
	want := 14*time.Second + 300*time.Millisecond + time.Second
	if s.TimeToSuccess.Max != want || s.LongestWait != 8*time.Second {
		t.Fatalf("time to success max %v, longest wait %v; want %v, 8s", s.TimeToSuccess.Max, s.LongestWait, want)
	}
	if q := s.TimeToSuccess.Quantile(0.5); q != float64(want.Milliseconds()) {
		t.Fatalf("p50 %v", q)
	}
}

// TestLiveSessionsBound: a fleet keeps at most maxLive sessions alive at
// once. Arrivals that outrun the sessions' ends stop the run with a
// *LiveSessionsError; all at t=0 over MaxLiveSessions is refused by
// Validate; within the bound the run is as before.
func TestLiveSessionsBound(t *testing.T) {
	c := Default(100) // each session lives about 15 s; 1000 arrive per second
	c.Rate = 1000
	r, err := newRunner(c.normalized(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.maxLive = 10
	r.run()
	var live *LiveSessionsError
	if !errors.As(r.err, &live) || live.Limit != 10 || len(r.sessions) != 10 {
		t.Fatalf("err %v with %d sessions, want a LiveSessionsError at 10", r.err, len(r.sessions))
	}
	r, _ = newRunner(c.normalized(), Options{})
	r.maxLive = 100
	if r.run(); r.err != nil {
		t.Fatalf("within the bound: %v", r.err)
	}
	c = Default(MaxLiveSessions + 1)
	c.Rate = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "more than the 1000000 a fleet keeps alive at once") {
		t.Fatalf("all at t=0 over the bound: %v", err)
	}
	c.Sessions = MaxLiveSessions
	if err := c.Validate(); err != nil {
		t.Fatalf("all at t=0 at the bound: %v", err)
	}
}
