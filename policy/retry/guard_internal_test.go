package retry

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/classify"
)

// TestDecideTakesTheFirstRuleThatHolds: for every pair of both tables and
// a grid of snapshots, replies, settings and auth answers, Decide takes the
// pair's first rule whose Guard.Holds holds, as the table declares it
// (Decide evaluates the sound guards in place, guardKind, and calls
// Holds for the others).
func TestDecideTakesTheFirstRuleThatHolds(t *testing.T) {
	kinds := map[guardKind]int{}
	for _, v := range []*Variant{Sound(), Original()} {
		for k := range v.rules {
			kinds[v.guard[k]]++
		}
	}
	var d Decision // zeroed for every call (see TestDecideAnsweredIsDecideThenResume)
	decisionGrid(func(v *Variant, snap Snapshot, in Input, o *classify.Outcome, set *Settings, p *Policy, switched bool) {
		d = Decision{}
		v.Decide(&d, snap, in, o, p)
		d.Resume(switched)
		want := -1
		for _, k := range v.byPair[in][snap.State.Index()] {
			if v.rules[k].Guard.Holds(snap, set, &d) {
				want = k
				break
			}
		}
		if d.RuleIndex != want {
			t.Fatalf("%s: %s in %+v, reply %+v, settings %+v, switched %v: rule %d, want %d (the first whose guard holds)",
				v.Name, in, snap, *o, *set, switched, d.RuleIndex, want)
		}
	})
	for _, k := range []guardKind{guardNone, guardCall, guardIsDisabled, guardIsRetry, guardIsExhaust, guardIsFallback, guardIsFailFast} {
		if kinds[k] == 0 {
			t.Errorf("no rule has guard kind %d: the test does not cover it", k)
		}
	}
}

// TestIgnoresMeansNothingHappens: where Variant.Ignores says a decision
// may be skipped, Decide takes an ignored rule, with no effect and the
// snapshot unchanged, over the whole grid; the prompt at idle is such a
// pair in both tables (and a success at idle in the sound one), a
// retryable failure at idle is not.
func TestIgnoresMeansNothingHappens(t *testing.T) {
	skipped := 0
	var d Decision // zeroed for every call (see TestDecideAnsweredIsDecideThenResume)
	decisionGrid(func(v *Variant, snap Snapshot, in Input, o *classify.Outcome, set *Settings, p *Policy, switched bool) {
		if !v.Ignores(snap.State, in) {
			return
		}
		skipped++
		d = Decision{}
		v.Decide(&d, snap, in, o, p)
		d.Resume(switched)
		if d.Fired() || len(d.Effects()) != 0 || d.Next != snap || d.AsksAuth() || d.Retries() {
			t.Fatalf("%s: %s in %+v: Ignores, but the decision fires %v, effects %v, next %+v", v.Name, in, snap, d.Fired(), d.Effects(), d.Next)
		}
	})
	if skipped == 0 {
		t.Fatal("no pair is ignored")
	}
	if !Sound().Ignores(StateIdle, InputSuccess) {
		t.Error("sound: a success at idle is not ignored")
	}
	if Original().Ignores(StateIdle, InputSuccess) {
		t.Error("original: a success at idle is ignored (its guards read the attempt)")
	}
	for _, v := range []*Variant{Sound(), Original()} {
		if !v.Ignores(StateIdle, InputPrompt) || v.Ignores(StateIdle, InputRetryable) {
			t.Errorf("%s: Ignores(idle, prompt) %v, (idle, retryable) %v; want true, false", v.Name,
				v.Ignores(StateIdle, InputPrompt), v.Ignores(StateIdle, InputRetryable))
		}
		if v.Ignores("unknown", InputPrompt) || v.Ignores(StateIdle, numInputs) {
			t.Errorf("%s: Ignores of an unknown state or input", v.Name)
		}
	}
}

// decisionGrid calls f for both tables, every state and input, and a grid
// of snapshots, replies, settings and auth answers; p is set as a Policy
// (built once per settings, as a session's is, not once per call: nothing
// writes to a Policy).
func decisionGrid(f func(v *Variant, snap Snapshot, in Input, o *classify.Outcome, set *Settings, p *Policy, switched bool)) {
	replies := []classify.Outcome{
		{},
		{StopReason: classify.StopReasonError, Message: "529 overloaded_error", Class: classify.ClassRetryable},
		{StopReason: classify.StopReasonError, Message: "usage limit", Class: classify.ClassRetryable, UsageLimit: true},
		{StopReason: classify.StopReasonError, Message: "429", Class: classify.ClassRetryable, HasWaitHint: true, WaitHintMs: 5000},
	}
	var sets []Settings
	for _, enabled := range []bool{false, true} {
		for _, max := range []int{0, 1, 3} {
			for _, extra := range []func(*Settings){
				func(*Settings) {},
				func(s *Settings) { s.Fallback = []string{"b"} },
				func(s *Settings) { s.RetryAfter.MaxWait = time.Second; s.RetryAfter.Use = HintFloor },
				func(s *Settings) { s.Persistent = true },
			} {
				s := Settings{Enabled: enabled, MaxRetries: max, BaseDelay: 2 * time.Second}
				extra(&s)
				sets = append(sets, s)
			}
		}
	}
	pols := make([]Policy, len(sets))
	for j := range sets {
		pols[j] = Policy{set: sets[j]}
	}
	for _, v := range []*Variant{Sound(), Original()} {
		for _, st := range allStates {
			for in := Input(0); in < numInputs; in++ {
				for attempt := 0; attempt <= 3; attempt++ {
					for _, flags := range []int{0, 1, 2, 3, 4, 7} {
						snap := Snapshot{State: st, Attempt: attempt, Open: flags&1 != 0, Controlled: flags&2 != 0, Armed: flags & 4 >> 2}
						for i := range replies {
							for j := range sets {
								for _, switched := range []bool{false, true} {
									f(v, snap, in, &replies[i], &sets[j], &pols[j], switched)
								}
							}
						}
					}
				}
			}
		}
	}
}
