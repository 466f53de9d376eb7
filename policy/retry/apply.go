package retry

import "fmt"

// Applier performs a decision's effects: one method per kind of effect a
// decision gives, so that an interpreter lacking one does not compile.
// Decision.Apply, the one loop over the effects, calls them in order. The
// session core (session) and the Controller are the two appliers; a new
// Step kind is a new method here and a case in Apply
// (TestApplyHandlesEveryStep fails until it has one).
type Applier interface {
	// AskAuth: a usage limit; ask auth storage to switch credentials
	// (d.RetryAfter is the hint to pass).
	AskAuth(d *Decision, e *Effect)
	// Fallback: emit retry_fallback (d.Fallback) and move to its model.
	Fallback(d *Decision, e *Effect)
	// EmitStart: emit auto_retry_start (d.Start).
	EmitStart(d *Decision, e *Effect)
	// DropError: drop the trailing assistant error from the context.
	DropError()
	// ArmTimer: arm a backoff timer of e.Delay; it becomes the cancellable
	// one.
	ArmTimer(d *Decision, e *Effect)
	// CancelTimer: stop the cancellable backoff timer, if any.
	CancelTimer()
	// Uncontrol: the running wait can no longer be cancelled (StepWake: it
	// is over; StepUncontrol: the original forgets its abort controller).
	Uncontrol()
	// EmitEnd: emit auto_retry_end (d.End).
	EmitEnd(d *Decision, e *Effect)
	// Release: the chain is closed; release the WaitForRetry waiters.
	Release()
	// Continue: continue the agent from the context, now, or (later)
	// from a 0 ms timer.
	Continue(later bool)
}

// Apply performs d's effects, in order, with a. The steps that only
// change the snapshot (StepIncAttempt, StepResetAttempt, StepOpen) are
// never effects; an effect of a kind Apply does not know panics: a bug of
// this file, found by its test.
func (d *Decision) Apply(a Applier) {
	for i := range d.effects[:d.n] {
		e := &d.effects[i]
		switch e.Kind {
		case StepAskAuth:
			a.AskAuth(d, e)
		case StepFallback:
			a.Fallback(d, e)
		case StepEmitStart:
			a.EmitStart(d, e)
		case StepDropError:
			a.DropError()
		case StepArmTimer:
			a.ArmTimer(d, e)
		case StepCancelTimer:
			a.CancelTimer()
		case StepWake, StepUncontrol:
			a.Uncontrol()
		case StepEmitEnd:
			a.EmitEnd(d, e)
		case StepRelease:
			a.Release()
		case StepContinue, StepContinueLater:
			a.Continue(e.Kind == StepContinueLater)
		default:
			panic(fmt.Sprintf("retry: effect %v has no applier method", e.Kind))
		}
	}
}
