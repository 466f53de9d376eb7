package session_test

import (
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// BenchmarkStepNothing: a step that emits nothing (a settle with no prompt
// pending, a stale reply), through both APIs: Apply allocates nothing
// (TestApplyNothingAllocatesNothing), Step its scratch.
func BenchmarkStepNothing(b *testing.B) {
	core := &session.Core{Variant: session.Sound}
	set := policy.DefaultPolicy()
	b.Run("Apply", func(b *testing.B) {
		b.ReportAllocs()
		s := session.Initial()
		var buf session.Buffer
		ev := session.Event{Kind: session.Settle}
		for b.Loop() {
			buf.Effects = buf.Effects[:0]
			if fx := core.Apply(&s, set, &ev, &buf); len(fx) != 0 {
				b.Fatal(fx)
			}
		}
	})
	b.Run("Step", func(b *testing.B) {
		b.ReportAllocs()
		s := session.Initial()
		ev := session.Event{Kind: session.Reply, Call: 7}
		var fx []session.Effect
		for b.Loop() {
			if s, fx = core.Step(s, set, &ev, fx[:0]); len(fx) != 0 {
				b.Fatal(fx)
			}
		}
	})
}

// TestApplyNothingAllocatesNothing: Apply with a reused Buffer, on steps
// that emit nothing (a settle at rest, a stale reply), allocates nothing.
func TestApplyNothingAllocatesNothing(t *testing.T) {
	core := &session.Core{Variant: session.Sound}
	set := policy.DefaultPolicy()
	s := session.Initial()
	var buf session.Buffer
	for _, ev := range []session.Event{{Kind: session.Settle}, {Kind: session.Reply, Call: 7}} {
		allocs := testing.AllocsPerRun(100, func() {
			buf.Effects = buf.Effects[:0]
			if fx := core.Apply(&s, set, &ev, &buf); len(fx) != 0 {
				t.Fatal(fx)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: %.1f allocations per Apply, want 0", ev.Kind, allocs)
		}
	}
}
