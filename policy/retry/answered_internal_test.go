package retry

import (
	"slices"
	"testing"

	"github.com/ohmypi/retryfsm/policy/classify"
)

// TestDecideAnsweredIsDecideThenResume: the decision DecideAnswered takes
// in place, with auth storage's answer given beforehand, is the one Decide
// then Resume take (the same rule, cause, next snapshot and effects), for
// every pair of both tables over the decision grid.
func TestDecideAnsweredIsDecideThenResume(t *testing.T) {
	asked := 0
	// Zeroed for every call, as fresh variables would be; declared once
	// since Decide's receiver escapes and fresh ones were allocated at
	// every call of the grid's 1.2 million.
	var want, got Decision
	decisionGrid(func(v *Variant, snap Snapshot, in Input, o *classify.Outcome, _ *Settings, p *Policy, switched bool) {
		want, got = Decision{}, Decision{}
		v.Decide(&want, snap, in, o, p)
		if want.AsksAuth() {
			asked++
			want.Resume(switched)
		}
		next := snap
		v.DecideAnswered(&got, &next, in, o, p, switched)
		if got.AsksAuth() || got.RuleIndex != want.RuleIndex || got.cause != want.cause || next != want.Next ||
			!slices.Equal(got.Effects(), want.Effects()) || got.Retries() != want.Retries() || got.From != want.From {
			t.Fatalf("%s: %s from %+v (%+v, switched %v): DecideAnswered gives rule %d, %+v, next %+v, effects %v; Decide then Resume rule %d, %+v, next %+v, effects %v",
				v.Name, in, snap, *o, switched, got.RuleIndex, got.cause, next, got.Effects(), want.RuleIndex, want.cause, want.Next, want.Effects())
		}
	})
	if asked == 0 {
		t.Fatal("no decision of the grid asks auth storage")
	}
}

// TestStateIndex: Index is the position in States of every state, and -1
// for any other text, however close.
func TestStateIndex(t *testing.T) {
	for i, s := range allStates {
		if got := s.Index(); got != i {
			t.Errorf("%q.Index() = %d, want %d", s, got, i)
		}
	}
	for _, s := range []State{"", "idl", "Idle", "idle ", "backofF", "continuinG", "exhausteD", "cancelleD", "abcdefghi", "unknown"} {
		if got := s.Index(); got != -1 {
			t.Errorf("%q.Index() = %d, want -1", s, got)
		}
	}
}
