package retry

import (
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// Effect is one effect a decision asks its shell to perform, in order.
// The events' other fields are the decision's (Decision.Start, End,
// Fallback).
type Effect struct {
	Kind Step
	// Pending marks an effect that depends on auth storage's answer (an
	// auto_retry_start or a wait after StepAskAuth): the decision is not
	// final until Resume gives the answer.
	Pending bool
	// Attempt is the attempt of StepEmitStart's and StepEmitEnd's event.
	Attempt int
	// Delay is StepArmTimer's wait and StepEmitStart's delayMs.
	Delay time.Duration
	// Model is the model StepFallback moves to (an index of Snapshot.Model).
	Model int
}

// Answer completes an effect that waits for auth storage's answer when
// the answer changes no more than the wait (a credential switch makes it
// 0; AsksAuth with TooLong false); other effects are returned as
// they are.
func (e Effect) Answer(switched bool) Effect {
	if !e.Pending {
		return e
	}
	e.Pending = false
	if switched {
		e.Delay = 0
	}
	return e
}

// Decision is the pure result of one input: the rule that applied (and
// its index in the table), the next snapshot and the effects to perform in
// order. A decision that asks auth storage (AsksAuth) is not final: Resume
// takes it again with the answer, which may pick another rule (a switch
// makes the wait 0, so a wait that was too long no longer is), before any
// of its effects is performed.
type Decision struct {
	Rule      *Rule // nil only if the guards of a pair are not exhaustive
	RuleIndex int
	From      State
	Next      Snapshot
	// What the decision worked out about a retryable failure (zero for
	// other inputs): Attempt, Allowed, Wait, Switched, TooLong,
	// FallbackLeft.
	cause
	effects [maxEffects]Effect
	n       int
	asks    bool
	arms    bool // an effect arms a backoff wait (Retries)
	// What Resume needs to take the decision again, and what the events
	// and the auth question carry.
	v    *Variant
	snap Snapshot
	in   Input
	out  *classify.Outcome // the input's reply (noReply for none)
	set  *Settings
}

// Start is the auto_retry_start of an StepEmitStart effect (maxAttempts 0
// in persistent mode).
func (d *Decision) Start(e *Effect) AutoRetryStart {
	max := d.set.MaxRetries
	if d.set.Persistent {
		max = 0
	}
	return AutoRetryStart{Attempt: e.Attempt, MaxAttempts: max, DelayMs: durationMs(e.Delay), ErrorMessage: d.out.Message}
}

// End is the auto_retry_end of an StepEmitEnd effect.
func (d *Decision) End(e *Effect) AutoRetryEnd {
	end := AutoRetryEnd{Success: d.Rule.Success, Attempt: e.Attempt}
	switch d.Rule.Final {
	case FinalMessage:
		end.FinalError = d.out.Message
	case FinalMessageOrUnknown:
		end.FinalError = d.out.Message
		if end.FinalError == "" {
			end.FinalError = UnknownError
		}
	case FinalCancelled:
		end.FinalError = RetryCancelled
	case FinalNoMessage:
		end.FinalError = NoAssistantMessage
	case FinalWaitTooLong:
		end.FinalError = waitTooLongText(d.Wait, d.set.RetryAfter.MaxWait, d.out.Message)
	}
	return end
}

// waitTooLongText is the newer original's fail-fast finalError.
func waitTooLongText(wait, max time.Duration, msg string) string {
	b := make([]byte, 0, 96+len(msg))
	b = append(b, "Provider requested "...)
	b = jsonw.AppendNumber(b, durationMs(wait))
	b = append(b, "ms wait, exceeds retry.maxDelayMs ("...)
	b = jsonw.AppendNumber(b, durationMs(max))
	b = append(b, "ms). Original error: "...)
	b = append(b, msg...)
	return string(b)
}

// Fallback is the retry_fallback of a StepFallback effect: from the model
// in use to the next one. primary is the session's own model's name.
func (d *Decision) Fallback(e *Effect, primary string) RetryFallback {
	return RetryFallback{From: d.set.ModelName(primary, e.Model-1), To: d.set.ModelName(primary, e.Model)}
}

// RetryAfter is the hint StepAskAuth passes to auth storage (ok false:
// none, null).
func (d *Decision) RetryAfter() (ms float64, ok bool) { return d.out.RetryAfterMs, d.out.HasRetryAfter }

// Effects returns the effects to perform, in order.
func (d *Decision) Effects() []Effect { return d.effects[:d.n] }

// Fired reports whether the decision fires a transition (its rule is not
// an ignored pair).
func (d *Decision) Fired() bool { return d.Rule != nil && !d.Rule.Ignored() }

// Edge is the fsm edge the decision fires (Event "" when ignored).
func (d *Decision) Edge() fsm.Edge {
	if !d.Fired() {
		return fsm.Edge{From: string(d.From), To: string(d.From)}
	}
	return fsm.Edge{From: string(d.From), Event: d.Rule.Event, To: string(d.Rule.To)}
}

// Retries reports whether the decision schedules a retry: its rule arms a
// backoff wait (retry, or fallback).
func (d *Decision) Retries() bool { return d.arms && d.Fired() }

// AsksAuth reports whether the decision waits for auth storage's answer:
// perform none of its effects before Resume.
func (d *Decision) AsksAuth() bool { return d.asks }

// Resume takes a decision that asked auth storage again, with its answer,
// from the same snapshot, input, reply and settings (which must not have
// changed since Decide): on a switch the retry waits 0 (SPEC §1, step 4).
// It does nothing to a decision that did not ask.
func (d *Decision) Resume(switched bool) {
	if !d.asks {
		return
	}
	d.v.decide(d, &d.snap, &d.Next, d.in, d.set, true, switched)
}
