package fleet_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// A small fleet through a 30-second outage: 20 sessions arrive at t=0, one
// prompt of one 1 s call each, and the provider answers 529 for the first
// 30 s. Half the sessions run the default profile (3 retries, 14 s of
// waits in all), half omp-2026-06 (10 retries, waits capped at 8 s). Run
// simulates it deterministically from the seed.
func ExampleRun() {
	mix, err := fleetspec.ParseMix("omp-2026-02=50%,omp-2026-06=50%")
	if err != nil {
		panic(err)
	}
	cfg := fleetspec.Default(20)
	cfg.Rate = 0                                // every session arrives at t=0
	cfg.PromptErrors = fleetspec.PromptErrors{} // no scripted errors: only the outage
	cfg.Outages = []fleetspec.Outage{{Start: 0, Duration: 30 * time.Second, Kind: fleetspec.Kind529}}
	cfg.Profiles = mix
	cfg.Seed = 7

	p, err := fleet.Run(context.Background(), fleet.PlanOf(cfg), fleet.Options{})
	if err != nil {
		panic(err)
	}
	for _, st := range p.Result.Groups[0].Profiles {
		fmt.Printf("%-12s prompts=%d succeeded=%d failed=%d wire=%d longest wait=%v\n",
			st.Profile, st.Prompts, st.Succeeded, st.Failed, st.WireCalls, st.LongestWait.Round(time.Millisecond))
	}
	// Output:
	// omp-2026-02  prompts=10 succeeded=0 failed=10 wire=40 longest wait=8s
	// omp-2026-06  prompts=10 succeeded=10 failed=0 wire=89 longest wait=7.926s
	// all          prompts=20 succeeded=10 failed=10 wire=129 longest wait=8s
}

// An SDK layer under the agent retries each call with its own settings
// before the agent sees the error, so one agent call becomes several wire
// calls.
func ExampleRun_sdkLayer() {
	for _, sdk := range []string{"", "anthropic-sdk"} {
		cfg := fleetspec.Default(10) // each prompt: three 529 answers, then a success
		cfg.SDK = sdk
		p, err := fleet.Run(context.Background(), fleet.PlanOf(cfg), fleet.Options{})
		if err != nil {
			panic(err)
		}
		res := &p.Result
		st := res.Groups[0].Profiles[0]
		sum := st.Summarize(res.Groups[0].CapacityPer100ms)
		fmt.Printf("sdk=%q succeeded=%d calls/prompt=%.1f wire calls/prompt=%.1f p50=%.0fms\n",
			sdk, st.Succeeded, sum.CallsPerPrompt, sum.WireCallsPerPrompt, sum.P50)
	}
	// Output:
	// sdk="" succeeded=10 calls/prompt=4.0 wire calls/prompt=4.0 p50=15300ms
	// sdk="anthropic-sdk" succeeded=10 calls/prompt=2.0 wire calls/prompt=4.0 p50=4735ms
}

// A sweep of a million seeds split into a million shards: each machine of
// a batch runs one shard from the sweep's definition, in time and memory of
// its own runs, and the shards' partial results merge into the sweep's.
func ExampleRun_shard() {
	spec := fleetspec.NewSpec(fleetspec.Default(5))
	spec.SeedFrom, spec.SeedTo = 1, 1_000_000
	sh := fleet.Shard{Index: 41, Count: 1_000_000}
	p, err := fleet.Run(context.Background(), fleet.PlanOfSpecs(spec), fleet.Options{Shard: sh})
	if err != nil {
		panic(err)
	}
	g := p.Result.Groups[0]
	fmt.Printf("shard %s of %d runs: seeds %v, %d sessions\n", p.Shard, p.Runs, g.Seeds, g.Profiles[0].Sessions)
	// Output:
	// shard 41/1000000 of 1000000 runs: seeds [42], 5 sessions
}
