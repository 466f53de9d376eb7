package policy

import (
	"testing"
	"time"
)

// TestDecideTakesTheFirstRuleThatHolds: for every pair of both tables and
// a grid of snapshots, replies, settings and auth answers, Decide takes the
// pair's first rule whose Guard.Holds holds, as the table declares it
// (Decide evaluates the sound guards in place, guardKind, and calls
// Holds for the others).
func TestDecideTakesTheFirstRuleThatHolds(t *testing.T) {
	replies := []Outcome{
		{},
		{StopReason: StopReasonError, Message: "529 overloaded_error", Class: ClassRetryable},
		{StopReason: StopReasonError, Message: "usage limit", Class: ClassRetryable, UsageLimit: true},
		{StopReason: StopReasonError, Message: "429", Class: ClassRetryable, HasWaitHint: true, WaitHintMs: 5000},
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
	kinds := map[guardKind]int{}
	for _, v := range []*Variant{Sound, Original} {
		for k := range v.rules {
			kinds[v.guard[k]]++
		}
		for _, st := range allStates {
			for in := Input(0); in < numInputs; in++ {
				for attempt := 0; attempt <= 3; attempt++ {
					for _, flags := range []int{0, 1, 2, 3, 4, 7} {
						snap := Snapshot{State: st, Attempt: attempt, Open: flags&1 != 0, Controlled: flags&2 != 0, Armed: flags & 4 >> 2}
						for i := range replies {
							for j := range sets {
								for _, switched := range []bool{false, true} {
									var d Decision
									v.Decide(&d, snap, in, &replies[i], &sets[j])
									d.Resume(switched)
									want := -1
									for _, k := range v.byPair[in][st.Index()] {
										if v.rules[k].Guard.Holds(snap, &sets[j], &d) {
											want = k
											break
										}
									}
									if d.RuleIndex != want {
										t.Fatalf("%s: %s in %+v, reply %+v, settings %+v, switched %v: rule %d, want %d (the first whose guard holds)",
											v.Name, in, snap, replies[i], sets[j], switched, d.RuleIndex, want)
									}
								}
							}
						}
					}
				}
			}
		}
	}
	for _, k := range []guardKind{guardNone, guardCall, guardIsDisabled, guardIsRetry, guardIsExhaust, guardIsFallback, guardIsFailFast} {
		if kinds[k] == 0 {
			t.Errorf("no rule has guard kind %d: the test does not cover it", k)
		}
	}
}
