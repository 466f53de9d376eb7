package explore

import (
	"testing"

	"github.com/ohmypi/retryfsm/session"
)

// TestExploreAllocsPerTransition: a transition explored (a state stepped
// with one input, its successor packed) allocates nothing of its own;
// what an exploration allocates is its sets and results, far fewer than
// one allocation per transition. A step once allocated the settings it
// handed the core, and a coverage unit or a key's state a copy of
// policy.States(): 2 to 3 allocations per transition, 88% of
// BenchmarkExploreSound's allocations.
func TestExploreAllocsPerTransition(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		opt := Options{Variant: v, MaxRetries: 2}
		r := exploreAll(opt)
		allocs := testing.AllocsPerRun(3, func() { exploreAll(opt) })
		if per := allocs / float64(r.Transitions); per > 0.5 {
			t.Errorf("%s: %.0f allocations for %d transitions (%.2f each), want under 0.5 each", v.Name, allocs, r.Transitions, per)
		}
		t.Logf("%s: %.0f allocations, %d transitions, %d states", v.Name, allocs, r.Transitions, r.States)
	}
}
