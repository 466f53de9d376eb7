package fleet

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
)

// forever529 is a fleet of n sessions whose provider answers 529 to every
// call.
func forever529(n int, profile, sdk string) fleetspec.Config {
	c := fleetspec.Default(n)
	c.PromptErrors = fleetspec.PromptErrors{}
	c.Outages = []fleetspec.Outage{{Start: 0, Duration: fleetspec.MaxDuration, Kind: fleetspec.Kind529}}
	c.Profiles = fleetspec.Mix{{Profile: profile, Percent: 100}}
	c.SDK = sdk
	return c
}

// TestSDKLayerAmplification is the exact check: a provider that
// answers 529 forever, agent omp-2026-02 over anthropic-sdk: 4 agent calls
// of 3 wire calls each, 12 wire calls per prompt.
func TestSDKLayerAmplification(t *testing.T) {
	res, err := runConfig(forever529(10, "omp-2026-02", "anthropic-sdk"), Options{})
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
	res, err = runConfig(forever529(10, "omp-2026-02", ""), Options{})
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
	res, err := runConfig(fleetspec.Default(1000), Options{})
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
	c := fleetspec.Default(100) // each session lives about 15 s; 1000 arrive per second
	c.Rate = 1000
	r, err := newRunner(c.Normalized(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.maxLive = 10
	r.run()
	var live *LiveSessionsError
	if !errors.As(r.err, &live) || live.Limit != 10 || len(r.sessions) != 10 {
		t.Fatalf("err %v with %d sessions, want a LiveSessionsError at 10", r.err, len(r.sessions))
	}
	r, _ = newRunner(c.Normalized(), nil, Options{})
	r.maxLive = 100
	if r.run(); r.err != nil {
		t.Fatalf("within the bound: %v", r.err)
	}
	c = fleetspec.Default(fleetspec.MaxLiveSessions + 1)
	c.Rate = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "more than the 1000000 a fleet keeps alive at once") {
		t.Fatalf("all at t=0 over the bound: %v", err)
	}
	c.Sessions = fleetspec.MaxLiveSessions
	if err := c.Validate(); err != nil {
		t.Fatalf("all at t=0 at the bound: %v", err)
	}
}

// TestAloneEqualsQueue: a fleet whose sessions never meet (no capacity
// bound, no outage, untraced) runs its sessions one at a time
// (runAlone); its result is byte for byte the one of the discrete-event
// queue of every session at once (runQueue), for every profile, error
// kind, overflow and compaction, an SDK layer, several prompts with think
// times, rate 0, and horizons that stop sessions mid-chain and mid-call.
// The fleets whose sessions draw nothing replay each profile's first
// session (runner.replays; "fixed" cases: several prompts, tool turns,
// think times, every profile without jitter, every kind of scripted error,
// compaction that fails, a horizon that cuts the later sessions only).
func TestAloneEqualsQueue(t *testing.T) {
	var names, layered, unjittered []string
	for _, p := range policy.Profiles() {
		if p.Layer == "" {
			names = append(names, p.Name)
		} else {
			layered = append(layered, p.Name)
		}
		if pol, err := p.Policy(); err != nil {
			t.Fatal(err)
		} else if p.Layer == "" && !pol.Jittered() {
			unjittered = append(unjittered, p.Name)
		}
	}
	if len(unjittered) < 2 {
		t.Fatalf("profiles without jitter: %v, want two or more", unjittered)
	}
	if len(layered) == 0 {
		t.Fatal("no profile with a provider layer")
	}
	mixed := func(c *fleetspec.Config) {
		c.Rate = 20
		c.PromptErrors = fleetspec.PromptErrors{}
		c.Calls = fleetspec.Dist{Kind: fleetspec.DistGeometric, A: 3}
		c.Latency = fleetspec.Dist{Kind: fleetspec.DistLogNormal, A: float64(time.Second), B: 0.6}
		c.ErrorLatency = fleetspec.Dist{Kind: fleetspec.DistUniform, A: float64(20 * time.Millisecond), B: float64(300 * time.Millisecond)}
		c.Errors = []fleetspec.Rate{{Kind: fleetspec.Kind503, P: 0.03}, {Kind: fleetspec.Kind500, P: 0.02}, {Kind: fleetspec.Kind429, P: 0.03},
			{Kind: fleetspec.KindUsageLimit, P: 0.01}, {Kind: fleetspec.KindNetwork, P: 0.02}, {Kind: fleetspec.Kind529, P: 0.03}}
		c.Overflow = 0.03
		c.Profiles = nil
		for _, n := range names {
			c.Profiles = append(c.Profiles, fleetspec.Share{Profile: n, Percent: 100.0 / float64(len(names))})
		}
	}
	fixed := func(kind fleetspec.Kind) func(c *fleetspec.Config) {
		return func(c *fleetspec.Config) {
			c.Prompts = 3
			c.Think = fleetspec.Fixed(float64(2 * time.Second))
			c.Calls = fleetspec.Fixed(3)
			c.Latency = fleetspec.Fixed(float64(700 * time.Millisecond))
			c.PromptErrors = fleetspec.PromptErrors{Count: 4, Kind: kind}
			c.Profiles = nil
			for _, n := range unjittered {
				c.Profiles = append(c.Profiles, fleetspec.Share{Profile: n, Percent: 100.0 / float64(len(unjittered))})
			}
		}
	}
	cases := []struct {
		name    string
		edit    func(*fleetspec.Config)
		replays bool // sessions run alone replay their profile's first
	}{
		{"default", nil, true},
		{"seed 9", func(c *fleetspec.Config) { c.Seed = 9 }, true},
		{"rate 0", func(c *fleetspec.Config) { c.Rate = 0 }, true},
		{"every profile and error", mixed, false},
		{"every profile, compaction fails, 3 prompts", func(c *fleetspec.Config) {
			mixed(c)
			c.Compaction = fleetspec.Compaction{Enabled: true}
			c.Prompts = 3
			c.Think = fleetspec.Dist{Kind: fleetspec.DistExp, A: float64(2 * time.Second)}
		}, false},
		{"sdk layer", func(c *fleetspec.Config) { mixed(c); c.SDK = "omp-2026-06"; c.Profiles = nil }, false},
		{"two layers", func(c *fleetspec.Config) { mixed(c); c.Profiles = fleetspec.Mix{{Profile: layered[0], Percent: 100}} }, false},
		{"prompts and think", func(c *fleetspec.Config) {
			c.Prompts = 4
			c.Think = fleetspec.Dist{Kind: fleetspec.DistExp, A: float64(3 * time.Second)}
			c.Calls = fleetspec.Dist{Kind: fleetspec.DistUniform, A: 1, B: 5}
		}, false},
		{"horizon mid-chain", func(c *fleetspec.Config) { c.Horizon = 7 * time.Second }, false},
		{"horizon mixed", func(c *fleetspec.Config) { mixed(c); c.Horizon = 20 * time.Second }, false},
		{"horizon on a call's answer", func(c *fleetspec.Config) { c.Rate = 0; c.Horizon = 100 * time.Millisecond }, false},
		{"horizon after the first sessions", func(c *fleetspec.Config) { c.Horizon = 20 * time.Second }, true},
		{"fixed 429", fixed(fleetspec.Kind429), true},
		{"one prompt, a think time drawn", func(c *fleetspec.Config) {
			fixed(fleetspec.Kind529)(c)
			c.Prompts = 1
			c.Think = fleetspec.Dist{Kind: fleetspec.DistExp, A: float64(2 * time.Second)}
		}, true},
		{"fixed 529, compaction fails", func(c *fleetspec.Config) {
			fixed(fleetspec.Kind529)(c)
			c.Compaction = fleetspec.Compaction{Enabled: true}
		}, true},
		{"fixed overflow", fixed(fleetspec.KindOverflow), true},
		{"fixed overflow, compaction fails", func(c *fleetspec.Config) {
			fixed(fleetspec.KindOverflow)(c)
			c.Compaction = fleetspec.Compaction{Enabled: true}
		}, true},
		{"fixed usage limit, horizon", func(c *fleetspec.Config) {
			fixed(fleetspec.KindUsageLimit)(c)
			c.Horizon = 25 * time.Second
		}, true},
		{"fixed network, retry-after text", func(c *fleetspec.Config) {
			fixed(fleetspec.KindNetwork)(c)
			c.OverCapacity = fleetspec.OverCapacity{Hint: fleetspec.HintText, RetryAfter: 3 * time.Second}
		}, true},
		{"fixed 429, retry-after text", func(c *fleetspec.Config) {
			fixed(fleetspec.Kind429)(c)
			c.OverCapacity = fleetspec.OverCapacity{Hint: fleetspec.HintText, RetryAfter: 3 * time.Second}
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := fleetspec.Default(3000)
			if tc.edit != nil {
				tc.edit(&c)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			var out [2][]byte
			var res [2]*Result
			for i, together := range []bool{false, true} {
				r, err := newRunner(c.Normalized(), nil, Options{})
				if err != nil {
					t.Fatal(err)
				}
				r.together = together
				r.run()
				if r.err != nil {
					t.Fatal(r.err)
				}
				if r.alone == together {
					t.Fatalf("together %v: ran alone %v", together, r.alone)
				}
				if want := tc.replays && !together; (r.replayed > 0) != want {
					t.Fatalf("together %v: %d sessions replayed, want some %v", together, r.replayed, want)
				}
				res[i] = r.result()
				if out[i], err = res[i].JSON(); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(out[0], out[1]) {
				t.Fatalf("alone and in one queue differ:\nalone %s\nqueue %s", out[0], out[1])
			}
			// What the JSON leaves out too: the wire series (a partial
			// result's and the plots'), the histograms' buckets.
			if !reflect.DeepEqual(res[0], res[1]) {
				t.Fatal("alone and in one queue differ in their series or histograms")
			}
		})
	}
	// The fleets that meet run in the one queue.
	for _, edit := range []func(*fleetspec.Config){
		func(c *fleetspec.Config) { c.Capacity = fleetspec.Capacity{RPS: 30, Burst: 30} },
		func(c *fleetspec.Config) { c.Capacity = fleetspec.Capacity{MaxInFlight: 10} },
		func(c *fleetspec.Config) {
			c.Outages = []fleetspec.Outage{{Start: time.Second, Duration: time.Second, Kind: fleetspec.Kind429}}
		},
	} {
		c := fleetspec.Default(10)
		edit(&c)
		r, err := newRunner(c.Normalized(), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.run(); r.alone {
			t.Errorf("%+v ran alone", c)
		}
	}
}

// TestRunStopsWhenCancelled: a run whose context is done stops within
// ctxEvery arrivals and returns the context's error, for a context done
// before the run and one done during it.
func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, PlanOf(fleetspec.Default(10)), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context: %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	arrived := 0
	_, err := Run(ctx, PlanOf(fleetspec.Default(100_000)), Options{Trace: func(info SessionInfo) Tracer {
		if arrived++; info.Index == 1500 {
			cancel()
		}
		return nil
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled at session 1500: %v, want context.Canceled", err)
	}
	if arrived > 1500+ctxEvery {
		t.Errorf("%d sessions arrived after the cancel at 1500 (want at most %d more)", arrived-1501, ctxEvery)
	}
}

// TestRunZeroShardIsWhole: the zero Shard runs the whole plan, the same
// result, byte for byte, as the shard 0/1, without the shard's header (a
// partial result without it is refused where one is needed).
func TestRunZeroShardIsWhole(t *testing.T) {
	plan := PlanOf(shardSweep()...)
	var out [2][]byte
	var parts [2]*Partial
	for i, sh := range []Shard{{}, {Index: 0, Count: 1}} {
		p, err := Run(context.Background(), plan, Options{Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = p.Result.JSON(); err != nil {
			t.Fatal(err)
		}
		parts[i] = p
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("the zero Shard's result differs from 0/1's:\n%s\n%s", out[0], out[1])
	}
	if whole := parts[0]; whole.Sweep != "" || whole.Shard != (Shard{}) || whole.Runs != plan.Runs() || whole.Groups != parts[1].Groups {
		t.Errorf("the whole run's partial: %+v", whole)
	}
	if _, err := parts[0].JSON(); err == nil || !strings.Contains(err.Error(), "not a shard's") {
		t.Errorf("JSON of a whole run's partial: %v", err)
	}
	if _, err := MergePartials([]*Partial{parts[0]}, nil); err == nil || !strings.Contains(err.Error(), "not a shard's") {
		t.Errorf("MergePartials of a whole run's partial: %v", err)
	}
	if _, err := Run(context.Background(), plan, Options{Shard: Shard{Index: 2, Count: 2}}); err == nil {
		t.Error("shard 2/2 ran")
	}
}

// TestRunEmptyPlan: a plan of no runs, or none, runs nothing: an empty
// result, no error.
func TestRunEmptyPlan(t *testing.T) {
	for _, p := range []*Plan{nil, PlanOf(), PlanOfSpecs()} {
		part, err := Run(context.Background(), p, Options{})
		if err != nil || len(part.Result.Groups) != 0 || part.Runs != 0 {
			t.Errorf("%v: %+v %v", p, part, err)
		}
	}
}

// TestSettingsCompiledOncePerPlan: a plan checks a fleet's settings once,
// when it is built (Config.Compile), and every run of its seeds runs that
// one policy, checking nothing again; a run given settings that do not
// match its configuration is refused, and invalid settings are the
// plan's error, as before.
func TestSettingsCompiledOncePerPlan(t *testing.T) {
	c := fleetspec.Default(5)
	set := policy.DefaultSettings()
	set.MaxRetries, set.Classify = 5, policy.ClassifyStatus
	c.Settings = &set
	spec := fleetspec.NewSpec(c)
	spec.SeedTo = 4
	p := PlanOfSpecs(spec)
	if len(p.stretches) != 1 || p.stretches[0].pol == nil || p.stretches[0].err != nil {
		t.Fatalf("plan: %d stretches, the first's policy %v (%v); want one, compiled", len(p.stretches), p.stretches[0].pol, p.stretches[0].err)
	}
	cfgs, pols, _ := p.shard(Shard{Index: 0, Count: 1})
	if len(pols) != 4 {
		t.Fatalf("%d runs, want 4 (seeds 1-4)", len(pols))
	}
	for i, pol := range pols {
		if pol != p.stretches[0].pol {
			t.Errorf("run %d: policy %p, want the stretch's %p (compiled once)", i, pol, p.stretches[0].pol)
		}
	}
	r, err := newRunner(cfgs[0], pols[0], Options{})
	if err != nil || r.agents[0].pol != pols[0] || r.agents[0].pol.Settings().MaxRetries != 5 {
		t.Fatalf("the run's agent layer: %v; want the plan's policy (maxRetries 5)", err)
	}
	if _, err := newRunner(cfgs[0], nil, Options{}); err == nil {
		t.Error("a run with settings but no compiled policy was not refused")
	}
	if _, err := Run(context.Background(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	// settings compiled where they were read: the plan takes that policy
	kept := policy.MustCompile(set)
	if q := PlanOf(fleetspec.Default(5).WithPolicy(kept)); q.stretches[0].pol != kept {
		t.Errorf("plan of a config WithPolicy: policy %p, want the one given %p", q.stretches[0].pol, kept)
	}
	set.MaxRetries = -1
	var se *SweepError
	if _, err := Run(context.Background(), PlanOf(c), Options{}); !errors.As(err, &se) || !strings.Contains(err.Error(), "settings: ") {
		t.Errorf("invalid settings: %v; want the plan's SweepError naming settings", err)
	}
}
