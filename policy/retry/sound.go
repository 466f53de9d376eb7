package retry

import (
	"errors"
	"fmt"
	"strings"
)

var (
	rest     = []State{StateIdle, StateExhausted, StateCancelled}
	startRun = []Step{StepIncAttempt, StepOpen, StepAskAuth, StepEmitStart, StepDropError, StepArmTimer}
	endChain = []Step{StepEmitEnd, StepResetAttempt, StepRelease}
	// fallBack goes on with the next model: the chain stays open (or
	// opens), the counter restarts and the retry waits 0. A usage limit
	// is put to auth storage first when the wait, not the count, is what
	// fails.
	fallBack = []Step{StepOpen, StepAskAuth, StepFallback, StepIncAttempt, StepEmitStart, StepDropError, StepArmTimer}
)

// soundRules is the default table: the seed's rules made total, so that
// every chain that starts ends exactly once.
var soundRules = []Rule{
	// At rest.
	{Input: InputRetryable, From: rest, Guard: guardDisabled, Note: "retry disabled: nothing is retried"},
	{Input: InputRetryable, From: rest, Guard: guardExhaust, Event: "exhaust", To: StateExhausted,
		Steps: []Step{StepEmitEnd, StepResetAttempt}, Final: FinalMessageOrUnknown, Reason: ReasonMaxRetries,
		Note: "maxRetries 0: the chain ends at once with attempt 0 and no auto_retry_start, as in the original"},
	{Input: InputRetryable, From: rest, Guard: guardRetry, Event: "retry", To: StateBackoff, Steps: startRun,
		Note: "delay = baseDelay * 2^(attempt-1), or 0 when auth storage switched credentials"},
	{Input: InputOverflow, From: rest, Guard: always, Note: "never retried; goes on to the compaction hand-off"},
	{Input: InputFatal, From: rest, Guard: always},
	{Input: InputAborted, From: rest, Guard: always},
	{Input: InputNoMessage, From: rest, Guard: always},
	{Input: InputSuccess, From: rest, Guard: always},
	{Input: InputElapsed, From: rest, Guard: always, Note: "a disarmed timer is inert"},
	{Input: InputContinueFailed, From: rest, Guard: always},
	{Input: InputAbortRetry, From: rest, Guard: always, Note: "abort_retry at rest does nothing"},
	{Input: InputAbort, From: rest, Guard: always},
	{Input: InputPrompt, From: []State{StateExhausted, StateCancelled}, Guard: always, Event: "prompt", To: StateIdle},
	{Input: InputPrompt, From: []State{StateIdle}, Guard: always},

	// backoff (attempt k).
	{Input: InputElapsed, From: []State{StateBackoff}, Guard: always, Event: "elapse", To: StateContinuing,
		Steps: []Step{StepWake, StepContinue}, Note: "settings are not re-read: switching retry off does not stop a running wait"},
	{Input: InputAbortRetry, From: []State{StateBackoff}, Guard: always, Event: "cancel", To: StateCancelled,
		Steps: append([]Step{StepCancelTimer}, endChain...), Final: FinalCancelled},
	{Input: InputAbort, From: []State{StateBackoff}, Guard: always, Event: "cancel", To: StateCancelled,
		Steps: append([]Step{StepCancelTimer}, endChain...), Final: FinalCancelled},
	{Input: InputRetryable, From: []State{StateBackoff}, Guard: always, Note: "no run is in flight during a backoff: never produced"},
	{Input: InputOverflow, From: []State{StateBackoff}, Guard: always, Note: "never produced"},
	{Input: InputFatal, From: []State{StateBackoff}, Guard: always, Note: "never produced"},
	{Input: InputAborted, From: []State{StateBackoff}, Guard: always, Note: "never produced"},
	{Input: InputNoMessage, From: []State{StateBackoff}, Guard: always, Note: "never produced"},
	{Input: InputSuccess, From: []State{StateBackoff}, Guard: always, Note: "never produced"},
	{Input: InputContinueFailed, From: []State{StateBackoff}, Guard: always, Note: "never produced"},
	{Input: InputPrompt, From: []State{StateBackoff}, Guard: always, Note: "the session rejects a prompt while a chain is open"},

	// continuing (attempt k): the retried run is in flight.
	{Input: InputSuccess, From: []State{StateContinuing}, Guard: always, Event: "succeed", To: StateIdle,
		Steps: endChain, Success: true},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: guardRetry, Event: "retry", To: StateBackoff,
		Steps: startRun},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: guardExhaust, Event: "exhaust", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonMaxRetries, Note: "the error stays in the runtime context"},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: guardDisabled, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonDisabled, Note: "retry switched off during the chain (the original leaves the chain open)"},
	{Input: InputFatal, From: []State{StateContinuing}, Guard: always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonNonRetryable, Note: "the original leaves the chain open"},
	{Input: InputOverflow, From: []State{StateContinuing}, Guard: always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonNonRetryable, Note: "then the compaction hand-off"},
	{Input: InputNoMessage, From: []State{StateContinuing}, Guard: always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalNoMessage, Reason: ReasonNoMessage},
	{Input: InputContinueFailed, From: []State{StateContinuing}, Guard: always, Event: "fail", To: StateExhausted,
		Steps: endChain, Final: FinalMessageOrUnknown, Reason: ReasonContinueFailed, Note: "finalError is the continue's error"},
	{Input: InputAborted, From: []State{StateContinuing}, Guard: always, Event: "cancel", To: StateCancelled,
		Steps: endChain, Final: FinalCancelled, Note: "the original leaves the chain open"},
	{Input: InputAbortRetry, From: []State{StateContinuing}, Guard: always, Event: "cancel", To: StateCancelled,
		Steps: endChain, Final: FinalCancelled, Note: "the run goes on; its outcome is handled at rest"},
	{Input: InputAbort, From: []State{StateContinuing}, Guard: always, Event: "cancel", To: StateCancelled,
		Steps: endChain, Final: FinalCancelled, Note: "the aborted reply that follows changes nothing"},
	{Input: InputElapsed, From: []State{StateContinuing}, Guard: always, Note: "a disarmed timer is inert"},
	{Input: InputPrompt, From: []State{StateContinuing}, Guard: always, Note: "the session rejects a prompt while a chain is open"},

	// The opt-in settings' ways out (SPEC §1): model fallback and
	// fail-fast. Listed last, so that the rows above keep their indexes.
	{Input: InputRetryable, From: rest, Guard: guardFallback, Event: "fallback", To: StateBackoff, Steps: fallBack,
		Note: "retry_fallback, then auto_retry_start{attempt: 1, delayMs: 0}"},
	{Input: InputRetryable, From: rest, Guard: guardFailFast, Event: "fail_fast", To: StateExhausted,
		Steps: []Step{StepAskAuth, StepIncAttempt, StepEmitEnd, StepResetAttempt}, Final: FinalWaitTooLong, Reason: ReasonMaxWait,
		Note: "ends at its first error with no auto_retry_start, like maxRetries 0"},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: guardFallback, Event: "fallback", To: StateBackoff, Steps: fallBack},
	{Input: InputRetryable, From: []State{StateContinuing}, Guard: guardFailFast, Event: "fail_fast", To: StateExhausted,
		Steps: append([]Step{StepAskAuth, StepIncAttempt}, endChain...), Final: FinalWaitTooLong, Reason: ReasonMaxWait},
}

// The two variants (the session rules around them are package session's),
// built once; the functions below hand them out, so no importer can
// replace them.
var (
	sound    = mustVariant(NewVariant("sound", soundRules))
	original = originalVariant()
)

// Sound is the default variant: the documented policy made total. Every
// chain that starts ends with exactly one auto_retry_end and the attempt
// counter is 0 in every rest state.
func Sound() *Variant { return sound }

// Original reproduces the original implementation's observable behaviour,
// hazards included (SPEC.md §9).
func Original() *Variant { return original }

func mustVariant(v *Variant, err error) *Variant {
	if err != nil {
		panic(err)
	}
	return v
}

// VariantByName returns the retry table of the variant called name (""
// means sound). The variants themselves, each table with its session
// rules, are session.Variants; the shells resolve names there.
func VariantByName(name string) (*Variant, error) {
	if name == "" {
		return Sound(), nil
	}
	names := make([]string, 0, 2)
	for _, v := range []*Variant{Sound(), Original()} {
		if v.Name == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return nil, fmt.Errorf("unknown variant %q (allowed: %s)", name, strings.Join(names, ", "))
}

// CheckSettings reports whether the variant's table has rules for s: the
// original's has none for the opt-in settings (SPEC §1), so it takes only
// enabled, maxRetries and baseDelayMs; the sound one takes any.
func (v *Variant) CheckSettings(s *Settings) error {
	if v != Original() || s.Equal(Settings{Enabled: s.Enabled, MaxRetries: s.MaxRetries, BaseDelay: s.BaseDelay}) {
		return nil
	}
	return errors.New("variant original takes only enabled, maxRetries and baseDelayMs (the original has no other retry setting; use variant sound)")
}
