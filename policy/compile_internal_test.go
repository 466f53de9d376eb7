package policy

import (
	"testing"
	"time"
)

// walkSteps is the reading of a rule's steps that decide did on every
// call before they were compiled (compile): kept here as the oracle the
// compiled programs must agree with.
func walkSteps(r *Rule, s Snapshot, c cause, usageLimit, answered bool) (next Snapshot, fx []Effect, asks, arms bool) {
	next = s
	if !r.Ignored() {
		next.State = r.To
	}
	delay := c.Wait
	pending := false
	for _, st := range r.Steps {
		var e Effect
		switch st {
		case StepIncAttempt:
			next.Attempt++
			continue
		case StepResetAttempt:
			next.Attempt = 0
			continue
		case StepOpen:
			next.Open = true
			continue
		case StepFallback:
			next.Model++
			next.Attempt = 0
			delay = 0
			e = Effect{Kind: st, Model: next.Model}
		case StepRelease:
			next.Open = false
			e = Effect{Kind: st}
		case StepWake:
			next.Armed--
			next.Controlled = false
			e = Effect{Kind: st}
		case StepUncontrol:
			next.Controlled = false
			e = Effect{Kind: st}
		case StepCancelTimer:
			if !next.Controlled {
				continue
			}
			next.Armed--
			next.Controlled = false
			e = Effect{Kind: st}
		case StepAskAuth:
			if !usageLimit || !c.Allowed {
				continue
			}
			if !answered {
				pending = true
				asks = true
			}
			e = Effect{Kind: st}
		case StepEmitStart:
			e = Effect{Kind: st, Attempt: next.Attempt, Delay: delay, Pending: pending}
		case StepArmTimer:
			e = Effect{Kind: st, Delay: delay, Pending: pending}
			arms = true
			next.Armed++
			next.Controlled = true
		case StepEmitEnd:
			e = Effect{Kind: st, Attempt: next.Attempt}
		default:
			e = Effect{Kind: st}
		}
		fx = append(fx, e)
	}
	return next, fx, asks, arms
}

// TestCompiledRulesAgreeWithSteps: for every rule of both variants, from
// snapshots of every shape (attempt, waits, model, chain open, wait
// cancellable), with and without a usage limit, the count allowing a retry
// or not, answered or not, the decision's snapshot, effects and flags are
// those of walking the rule's steps one by one.
func TestCompiledRulesAgreeWithSteps(t *testing.T) {
	checked := 0
	for _, v := range []*Variant{Sound, Original} {
		for i := range v.rules {
			r := &v.rules[i]
			for _, s := range []Snapshot{
				{State: StateIdle},
				{State: StateBackoff, Attempt: 2, Armed: 1, Model: 1, Open: true, Controlled: true},
				{State: StateContinuing, Attempt: 3, Armed: 2, Model: 0, Open: true},
				{State: StateExhausted, Attempt: 1, Armed: 1, Model: 2, Controlled: true},
			} {
				for _, c := range []cause{{}, {Attempt: s.Attempt + 1, Allowed: true, Wait: 1500 * time.Millisecond}, {Attempt: s.Attempt + 1, Wait: 7 * time.Second}} {
					for _, usage := range []bool{false, true} {
						for _, answered := range []bool{false, true} {
							wantNext, wantFx, wantAsks, wantArms := walkSteps(r, s, c, usage, answered)
							d := &Decision{cause: c, out: Outcome{UsageLimit: usage}, Rule: r, RuleIndex: i}
							d.Next = s
							if !r.Ignored() {
								d.Next.State = r.To
							}
							v.replay(d, s, answered)
							if d.Next != wantNext || d.asks != wantAsks || d.arms != wantArms || len(d.Effects()) != len(wantFx) {
								t.Fatalf("%s rule %d from %+v (cause %+v, usage %v, answered %v): next %+v asks %v arms %v effects %+v; walking the steps: %+v %v %v %+v",
									v.Name, i, s, c, usage, answered, d.Next, d.asks, d.arms, d.Effects(), wantNext, wantAsks, wantArms, wantFx)
							}
							for k, e := range d.Effects() {
								if e != wantFx[k] {
									t.Fatalf("%s rule %d from %+v: effect %d is %+v, walking the steps gives %+v", v.Name, i, s, k, e, wantFx[k])
								}
							}
							checked++
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no rule checked")
	}
}
