package explore_test

import (
	"fmt"

	"github.com/ohmypi/retryfsm/explore"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// Explore visits every reachable state of one session under one
// maxRetries and checks every invariant on the way.
func ExampleExplore() {
	res, err := explore.Explore(explore.Options{Variant: session.Sound, MaxRetries: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Variant, "maxRetries", res.MaxRetries)
	fmt.Println("states:", res.States, "transitions:", res.Transitions, "violations:", len(res.Violations))

	// Out of range values are refused before anything is explored.
	_, err = explore.Explore(explore.Options{MaxRetries: 99})
	fmt.Println(err)
	// Output:
	// sound maxRetries 1
	// states: 46 transitions: 348 violations: 0
	// explore: maxRetries 99 is out of range for variant sound (allowed: 0 to 20, the range explored in under 10 s and 1 GB)
}

// The original implementation's variant breaks invariants; each comes with
// its shortest path of inputs from the initial state.
func ExampleExplore_original() {
	res, err := explore.Explore(explore.Options{Variant: session.Original, MaxRetries: 1})
	if err != nil {
		panic(err)
	}
	for _, v := range res.Violations {
		fmt.Println(v)
	}
	// Output:
	// attempt-zero-outside-chain: [prompt reply:retryable fire_timer fire_timer abort_retry]
	// chain-ends: [prompt reply:retryable fire_timer fire_timer reply:fatal]
	// prompt-resolves: [prompt reply:retryable fire_timer fire_timer reply:fatal]
	// compaction-continues: [prompt reply:retryable fire_timer fire_timer reply:overflow]
}

// CheckSettings checks a range of maxRetries under a profile's retry
// settings.
func ExampleCheckSettings() {
	p, err := policy.ProfileByName("omp-2026-06")
	if err != nil {
		panic(err)
	}
	sum, err := explore.CheckSettings(session.Sound, &p.Settings, 0, 2)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name, sum.Line())
	// Output:
	// omp-2026-06 states=128 transitions=1060 violations=0
}
