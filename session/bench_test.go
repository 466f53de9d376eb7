package session_test

import (
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// BenchmarkStepNothing: a step that emits nothing (a settle with no prompt
// pending, a stale reply) allocates nothing, through both APIs.
func BenchmarkStepNothing(b *testing.B) {
	core := &session.Core{Variant: session.Sound}
	set := policy.DefaultSettings()
	b.Run("Apply", func(b *testing.B) {
		b.ReportAllocs()
		s := session.Initial()
		var buf session.Buffer
		ev := session.Event{Kind: session.Settle}
		for b.Loop() {
			buf.Effects = buf.Effects[:0]
			if fx := core.Apply(&s, &set, &ev, &buf); len(fx) != 0 {
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
