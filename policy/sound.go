package policy

import (
	"fmt"
	"strings"
)

var (
	rest     = []State{StateIdle, StateExhausted, StateCancelled}
	startRun = []Step{StepIncAttempt, StepOpen, StepAskAuth, StepEmitStart, StepDropError, StepArmTimer}
	endChain = []Step{StepEmitEnd, StepResetAttempt, StepRelease}
)

// soundRules is the default table: the seed's rules made total, so that
// every chain that starts ends exactly once.
var soundRules = []Rule{
	// At rest.
	{Input: InputRetryable, From: rest, Guard: GuardDisabled, Note: "retry disabled: nothing is retried"},
	{Input: InputRetryable, From: rest, Guard: GuardExhaust, Event: "exhaust", To: StateExhausted,
		Steps: []Step{StepEmitEnd, StepResetAttempt}, Final: FinalMessageOrUnknown, Reason: ReasonMaxRetries,
		Note: "maxRetries 0: the chain ends at once with attempt 0 and no auto_retry_start, as in the original"},
	{Input: InputRetryable, From: rest, Guard: GuardRetry, Event: "retry", To: StateBackoff, Steps: startRun,
		Note: "delay = baseDelay * 2^(attempt-1), or 0 when auth storage switched credentials"},
	{Input: InputOverflow, From: rest, Guard: Always, Note: "never retried; goes on to the compaction hand-off"},
	{Input: InputFatal, From: rest, Guard: Always},
	{Input: InputAborted, From: rest, Guard: Always},
	{Input: InputNoMessage, From: rest, Guard: Always},
	{Input: InputSuccess, From: rest, Guard: Always},
	{Input: InputElapsed, From: rest, Guard: Always, Note: "a disarmed timer is inert"},
	{Input: InputContinueFailed, From: rest, Guard: Always},
	{Input: InputAbortRetry, From: rest, Guard: Always, Note: "abort_retry at rest does nothing"},
	{Input: InputAbort, From: rest, Guard: Always},
	{Input: InputPrompt, From: []State{StateExhausted, StateCancelled}, Guard: Always, Event: "prompt", To: StateIdle},
	{Input: InputPrompt, From: []State{StateIdle}, Guard: Always},

	// backoff (attempt k).
	{Input: InputElapsed, From: []State{StateBackoff}, Guard: Always, Event: "elapse", To: StateContinuing,
		Steps: []Step{StepWake, StepContinue}, Note: "settings are not re-read: switching retry off does not stop a running wait"},
	{Input: InputAbortRetry, From: []State{StateBackoff}, Guard: Always, Event: "cancel", To: StateCancelled,
		Steps: append([]Step{StepCancelTimer}, endChain...), Final: FinalCancelled},
	{Input: InputAbort, From: []State{StateBackoff}, Guard: Always, Event: "cancel", To: StateCancelled,
		Steps: append([]Step{StepCancelTimer}, endChain...), Final: FinalCancelled},
	{Input: InputRetryable, From: []State{StateBackoff}, Guard: Always, Note: "no run is in flight during a backoff: never produced"},
	{Input: InputOverflow, From: []State{StateBackoff}, Guard: Always, Note: "never produced"},
	{Input: InputFatal, From: []State{StateBackoff}, Guard: Always, Note: "never produced"},
	{Input: InputAborted, From: []State{StateBackoff}, Guard: Always, Note: "never produced"},
	{Input: InputNoMessage, From: []State{StateBackoff}, Guard: Always, Note: "never produced"},
	{Input: InputSuccess, From: []State{StateBackoff}, Guard: Always, Note: "never produced"},
	{Input: InputContinueFailed, From: []State{StateBackoff}, Guard: Always, Note: "never produced"},
	{Input: InputPrompt, From: []State{StateBackoff}, Guard: Always, Note: "the session rejects a prompt while a chain is open"},

	// continuing (attempt k): the retried run is in flight.
	{Input: InputSuccess, From: []State{StateContinuing}, Guard: Always, Event: "succeed", To: StateIdle,
		Steps: endChain, Success: true},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: GuardRetry, Event: "retry", To: StateBackoff,
		Steps: startRun},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: GuardExhaust, Event: "exhaust", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonMaxRetries, Note: "the error stays in the runtime context"},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: GuardDisabled, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonDisabled, Note: "retry switched off during the chain (the original leaves the chain open)"},
	{Input: InputFatal, From: []State{StateContinuing}, Guard: Always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonNonRetryable, Note: "the original leaves the chain open"},
	{Input: InputOverflow, From: []State{StateContinuing}, Guard: Always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonNonRetryable, Note: "then the compaction hand-off"},
	{Input: InputNoMessage, From: []State{StateContinuing}, Guard: Always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalNoMessage, Reason: ReasonNoMessage},
	{Input: InputContinueFailed, From: []State{StateContinuing}, Guard: Always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonContinueFailed, Note: "finalError is the continue's error"},
	{Input: InputAborted, From: []State{StateContinuing}, Guard: Always, Event: "cancel", To: StateCancelled,
		Steps: endChain, Final: FinalCancelled, Note: "the original leaves the chain open"},
	{Input: InputAbortRetry, From: []State{StateContinuing}, Guard: Always, Event: "cancel", To: StateCancelled,
		Steps: endChain, Final: FinalCancelled, Note: "the run goes on; its outcome is handled at rest"},
	{Input: InputAbort, From: []State{StateContinuing}, Guard: Always, Event: "cancel", To: StateCancelled,
		Steps: endChain, Final: FinalCancelled, Note: "the aborted reply that follows changes nothing"},
	{Input: InputElapsed, From: []State{StateContinuing}, Guard: Always, Note: "a disarmed timer is inert"},
	{Input: InputPrompt, From: []State{StateContinuing}, Guard: Always, Note: "the session rejects a prompt while a chain is open"},
}

// Sound is the default variant: the documented policy made total. Every
// chain that starts ends with exactly one auto_retry_end, the attempt
// counter is 0 in every rest state, and a prompt resolves when its runs and
// chains are over.
var Sound = mustVariant(NewVariant("sound", soundRules, SessionRules{
	RejectPromptDuringChain:  true,
	CancelCompactionContinue: true,
	PromptWaitsForRun:        true,
}))

func mustVariant(v *Variant, err error) *Variant {
	if err != nil {
		panic(err)
	}
	return v
}

// VariantByName returns the variant called name ("" means sound).
func VariantByName(name string) (*Variant, error) {
	switch name {
	case "", "sound":
		return Sound, nil
	}
	for _, v := range extraVariants {
		if v.Name == name {
			return v, nil
		}
	}
	return nil, fmt.Errorf("unknown variant %q (allowed: %s)", name, strings.Join(VariantNames(), ", "))
}

// VariantNames lists the variants by name.
func VariantNames() []string {
	names := []string{"sound"}
	for _, v := range extraVariants {
		names = append(names, v.Name)
	}
	return names
}

var extraVariants []*Variant
