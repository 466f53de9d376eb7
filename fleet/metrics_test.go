package fleet

import (
	"bytes"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"math"
	"testing"
	"time"
)

// TestHistogramBuckets: every value falls in a bucket whose bounds hold
// it, at most 1/32 of its value wide; quantiles are exact below 64 ms.
func TestHistogramBuckets(t *testing.T) {
	prevUpper := int64(-1)
	for i := 0; i < histBuckets; i++ {
		up := bucketUpper(i)
		if up <= prevUpper {
			t.Fatalf("bucket %d: upper %d after %d", i, up, prevUpper)
		}
		lo := prevUpper + 1
		if i >= histExact && float64(up-lo+1) > float64(lo)/histSub {
			t.Fatalf("bucket %d [%d, %d] wider than 1/%d", i, lo, up, histSub)
		}
		for _, v := range []int64{lo, up} {
			if b := bucketOf(time.Duration(v) * time.Millisecond); b != i {
				t.Fatalf("%d ms: bucket %d, want %d", v, b, i)
			}
		}
		prevUpper = up
		if up > math.MaxInt64/int64(time.Millisecond)/2 {
			break
		}
	}
	var h Histogram
	for v := 1; v <= 10; v++ {
		h.Add(time.Duration(v) * time.Millisecond)
	}
	for _, c := range []struct{ p, want float64 }{{0.5, 5}, {0.9, 9}, {0.99, 10}, {1, 10}, {0.01, 1}} {
		if got := h.Quantile(c.p); got != c.want {
			t.Errorf("quantile %v = %v, want %v", c.p, got, c.want)
		}
	}
	h.Add(1000 * time.Millisecond)
	if got := h.Quantile(1); got != 1000 {
		t.Errorf("max quantile %v, want the maximum 1000", got)
	}
	var empty Histogram
	if empty.Quantile(0.5) != 0 {
		t.Error("empty histogram")
	}
}

// outageFleet: n sessions at t=0 under profile, a 529 outage over the
// first 20 s, capacity 100 rps.
func outageFleet(n int, profile string) fleetspec.Config {
	c := fleetspec.Default(n)
	c.Rate = 0
	c.PromptErrors = fleetspec.PromptErrors{}
	c.Capacity = fleetspec.Capacity{RPS: 100, Burst: 1000}
	c.Outages = []fleetspec.Outage{{Start: 0, Duration: 20 * time.Second, Kind: fleetspec.Kind529}}
	c.Profiles = fleetspec.Mix{{Profile: profile, Percent: 100}}
	return c
}

// TestPeaks: 100 sessions failing together with no jitter retry together:
// every 100 ms bin of a retry wave holds all of them (10 × the capacity
// per 100 ms); nothing is sent after the outage, as every chain has ended.
func TestPeaks(t *testing.T) {
	res, err := runConfig(outageFleet(100, "omp-2026-02"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	s := g.Profiles[0]
	if g.CapacityPer100ms != 10 || s.PeakDuring != 100 || s.PeakAfter != 0 || s.ChainsExhausted != 100 || s.Failed != 100 {
		t.Fatalf("capacity %v, peaks %d/%d, exhausted %d, failed %d", g.CapacityPer100ms, s.PeakDuring, s.PeakAfter, s.ChainsExhausted, s.Failed)
	}
	if r := s.Summarize(g.CapacityPer100ms).PeakDuringRatio; r != 10 {
		t.Fatalf("ratio %v, want 10", r)
	}
	// The jittered profile spreads its retries: its peak is its first
	// wave's, then lower.
	res, err = runConfig(outageFleet(100, "omp-2026-06"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Groups[0].Profiles[0]; s.PeakDuring != 100 || s.PeakAfter == 0 || s.Succeeded != 100 {
		t.Fatalf("omp-2026-06: peaks %d/%d, succeeded %d", s.PeakDuring, s.PeakAfter, s.Succeeded)
	}
}

// TestRetryAfterWindows: a 429 window with a 10 s retry-after; the profile
// that ignores hints retries inside the window, the one that takes a hint
// as a floor never does.
func TestRetryAfterWindows(t *testing.T) {
	for _, c := range []struct {
		profile string
		inside  bool
	}{{"omp-2026-02", true}, {"omp-2026-06", false}} {
		cfg := fleetspec.Default(1)
		cfg.PromptErrors = fleetspec.PromptErrors{}
		cfg.Outages = []fleetspec.Outage{{Start: 0, Duration: 30 * time.Second, Kind: fleetspec.Kind429, RetryAfter: 10 * time.Second}}
		cfg.Profiles = fleetspec.Mix{{Profile: c.profile, Percent: 100}}
		res, err := runConfig(cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Groups[0].Profiles[0]
		if (s.InRetryAfter > 0) != c.inside || s.WireCalls < 2 {
			t.Errorf("%s: %d of %d calls inside the window", c.profile, s.InRetryAfter, s.WireCalls)
		}
	}
}

// TestFailFastAndHorizon: a usage limit over three hours; omp-2026-06's
// ceiling ends the chain at once, omp-2026-02 retries until exhausted.
// With a horizon, prompts still in their chain are waiting.
func TestFailFastAndHorizon(t *testing.T) {
	cfg := fleetspec.Default(10)
	cfg.PromptErrors = fleetspec.PromptErrors{}
	cfg.Outages = []fleetspec.Outage{{Start: 0, Duration: 3 * time.Hour, Kind: fleetspec.KindUsageLimit}}
	cfg.Profiles = fleetspec.Mix{{Profile: "omp-2026-02", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}
	res, err := runConfig(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	old, nw, all := g.Profiles[0], g.Profiles[1], g.Profiles[2]
	if old.Sessions != 5 || old.ChainsExhausted != 5 || old.ChainsFailFast != 0 || old.Calls != 20 ||
		nw.Sessions != 5 || nw.ChainsFailFast != 5 || nw.Calls != 5 || all.Profile != AllProfiles || all.Calls != 25 || all.Failed != 10 {
		t.Fatalf("omp-2026-02 %+v\nomp-2026-06 %+v", old, nw)
	}
	cfg.Horizon = 5 * time.Second
	res, err = runConfig(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Groups[0].Profiles[0]; s.Waiting != 5 || s.Failed != 0 {
		t.Fatalf("at the horizon: %+v", s)
	}
}

// TestRejected: a bucket of one token a second: of ten calls at once, one
// is admitted and nine are answered 429.
func TestRejected(t *testing.T) {
	cfg := fleetspec.Default(10)
	cfg.Rate = 0
	cfg.PromptErrors = fleetspec.PromptErrors{}
	cfg.Capacity = fleetspec.Capacity{RPS: 1, Burst: 1}
	cfg.Horizon = 50 * time.Millisecond
	res, err := runConfig(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Groups[0].Profiles[0]; s.WireCalls != 10 || s.Rejected != 9 {
		t.Fatalf("wire %d rejected %d", s.WireCalls, s.Rejected)
	}
}

func seedSweep(from, to int64) []fleetspec.Config {
	var cfgs []fleetspec.Config
	for seed := from; seed <= to; seed++ {
		c := outageFleet(200, "omp-2026-02")
		c.Rate = 50
		c.Profiles = fleetspec.Mix{{Profile: "omp-2026-02", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}
		c.Outages[0].Start = 2 * time.Second
		c.Errors = []fleetspec.Rate{{Kind: fleetspec.Kind503, P: 0.05}}
		c.Calls = fleetspec.Dist{Kind: fleetspec.DistUniform, A: 1, B: 4}
		c.Latency = fleetspec.Dist{Kind: fleetspec.DistLogNormal, A: float64(time.Second), B: 0.5}
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	return cfgs
}

// TestMergeHalves: merging the results of two halves of a seed sweep gives
// exactly the whole sweep's result.
func TestMergeHalves(t *testing.T) {
	whole, err := sweepConfigs(seedSweep(1, 6), Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := sweepConfigs(seedSweep(1, 3), Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := sweepConfigs(seedSweep(4, 6), Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	wj, _ := whole.JSON()
	aj, _ := a.JSON()
	if !bytes.Equal(wj, aj) {
		t.Fatalf("merged halves differ from the whole:\n%s\n---\n%s", aj, wj)
	}
	if g := whole.Groups; len(g) != 1 || len(g[0].Seeds) != 6 || g[0].Profiles[0].Prompts == 0 {
		t.Fatalf("%+v", g)
	}
}
