package retry

// Guards of the original's table.
var (
	guardCounting  = Guard{"attempt > 0", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Attempt > 0 }}
	guardZero      = Guard{"attempt == 0", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Attempt == 0 }}
	guardOpen      = Guard{"chain open", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Open }}
	guardNotOpen   = Guard{"no chain open", func(s Snapshot, _ *Settings, _ *Decision) bool { return !s.Open }}
	guardRetryCtl  = Guard{"enabled && attempt < maxRetries && wait cancellable", func(s Snapshot, set *Settings, c *Decision) bool { return guardRetry.Holds(s, set, c) && s.Controlled }}
	guardRetryLost = Guard{"enabled && attempt < maxRetries && wait not cancellable", func(s Snapshot, set *Settings, c *Decision) bool { return guardRetry.Holds(s, set, c) && !s.Controlled }}
	guardLastWait  = Guard{"one wait running", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Armed <= 1 }}
	guardMoreWaits = Guard{"two or more waits running", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Armed > 1 }}
	guardCtlLast   = Guard{"wait cancellable && one wait running", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Controlled && s.Armed <= 1 }}
	guardCtlMore   = Guard{"wait cancellable && two or more waits", func(s Snapshot, _ *Settings, _ *Decision) bool { return s.Controlled && s.Armed > 1 }}
	guardLostOpen  = Guard{"wait not cancellable && chain open", func(s Snapshot, _ *Settings, _ *Decision) bool { return !s.Controlled && s.Open }}
	guardLostShut  = Guard{"wait not cancellable && no chain open", func(s Snapshot, _ *Settings, _ *Decision) bool { return !s.Controlled && !s.Open }}
)

var (
	notBackoff = []State{StateIdle, StateContinuing, StateExhausted, StateCancelled}
	backoff    = []State{StateBackoff}
	everyState = allStates[:]
	// The original's catch path of an aborted backoff sleep: it reports the
	// counter of that moment, resets it and resolves the retry promise.
	catchCancel = []Step{StepEmitEnd, StepResetAttempt, StepRelease}
)

func ignoredEverywhere(in Input, note string) Rule {
	return Rule{Input: in, From: everyState, Guard: always, Note: note}
}

// originalRules reproduce the original TypeScript AgentSession (oh-my-pi
// 63ec7b6), hazards included: chains left open, stale counters, two
// backoff waits at once.
var originalRules = []Rule{
	// message_end success: the success reset, whatever the state.
	{Input: InputSuccess, From: notBackoff, Guard: guardCounting, Event: "succeed", To: StateIdle,
		Steps: endChain, Success: true, Note: "a stale counter gives a spurious end (H8); a mid-run toolUse ends the chain (H4)"},
	{Input: InputSuccess, From: backoff, Guard: guardCounting, Event: "succeed", To: StateBackoff,
		Steps: endChain, Success: true, Note: "the running wait goes on"},
	{Input: InputSuccess, From: everyState, Guard: guardZero},

	// agent_end retryable: #handleRetryableError.
	{Input: InputRetryable, From: everyState, Guard: guardDisabled,
		Note: "returns before counting: an open chain stays open (H3)"},
	{Input: InputRetryable, From: notBackoff, Guard: guardExhaust, Event: "exhaust", To: StateExhausted,
		Steps: endChain, Final: FinalMessage, Reason: ReasonMaxRetries, Note: "reports attempt-1 after counting; the error stays in context"},
	{Input: InputRetryable, From: backoff, Guard: guardExhaust, Event: "exhaust", To: StateBackoff,
		Steps: endChain, Final: FinalMessage, Reason: ReasonMaxRetries, Note: "the running wait goes on"},
	{Input: InputRetryable, From: notBackoff, Guard: guardRetry, Event: "retry", To: StateBackoff, Steps: startRun,
		Note: "continues a stale counter (H2)"},
	{Input: InputRetryable, From: backoff, Guard: guardRetryCtl, Event: "retry", To: StateBackoff,
		Steps: []Step{StepIncAttempt, StepOpen, StepAskAuth, StepEmitStart, StepDropError, StepCancelTimer, StepArmTimer,
			StepUncontrol, StepEmitEnd, StepResetAttempt, StepRelease},
		Final: FinalCancelled,
		Note:  "two backoffs at once: the old wait's catch path cancels the new chain and forgets the new controller; the new wait cannot be cancelled"},
	{Input: InputRetryable, From: backoff, Guard: guardRetryLost, Event: "retry", To: StateBackoff, Steps: startRun,
		Note: "another wait is already running and cannot be cancelled"},

	// Other agent_end outcomes never end a chain (H1).
	ignoredEverywhere(InputOverflow, "chain left open; compaction hand-off, whose context rebuilt from the session history may end with an earlier error: its continue is rejected and the chain stays open (H19)"),
	ignoredEverywhere(InputFatal, "chain left open (H1)"),
	ignoredEverywhere(InputAborted, "chain left open (H1)"),
	ignoredEverywhere(InputNoMessage, "no last assistant message: nothing happens"),
	ignoredEverywhere(InputContinueFailed, "the rejection is swallowed: the chain stays open"),
	ignoredEverywhere(InputPrompt, "a prompt does not reset the counter"),

	// A backoff wait ends: continue from a 0 ms timer.
	{Input: InputElapsed, From: backoff, Guard: guardLastWait, Event: "elapse", To: StateContinuing,
		Steps: []Step{StepWake, StepContinueLater}},
	{Input: InputElapsed, From: backoff, Guard: guardMoreWaits, Event: "wake", To: StateBackoff,
		Steps: []Step{StepWake, StepContinueLater}},
	{Input: InputElapsed, From: notBackoff, Guard: always, Note: "no wait runs outside backoff"},
}

func abortRules(in Input) []Rule {
	return []Rule{
		{Input: in, From: backoff, Guard: guardCtlLast, Event: "cancel", To: StateCancelled,
			Steps: append([]Step{StepCancelTimer}, catchCancel...), Final: FinalCancelled},
		{Input: in, From: backoff, Guard: guardCtlMore, Event: "cancel_one", To: StateBackoff,
			Steps: append([]Step{StepCancelTimer}, catchCancel...), Final: FinalCancelled},
		{Input: in, From: backoff, Guard: guardLostOpen, Event: "release", To: StateBackoff,
			Steps: []Step{StepRelease}, Note: "resolves the promise; the counter stays (H2)"},
		{Input: in, From: backoff, Guard: guardLostShut},
		{Input: in, From: notBackoff, Guard: guardOpen, Event: "release", To: StateCancelled,
			Steps: []Step{StepRelease}, Note: "outside the wait: waiters released, counter stale (H2)"},
		{Input: in, From: notBackoff, Guard: guardNotOpen},
	}
}

// originalVariant reproduces the original implementation's observable
// behaviour, hazards included (see SPEC.md, "The original variant").
func originalVariant() *Variant {
	return mustVariant(NewVariant("original",
		append(append(append([]Rule{}, originalRules...), abortRules(InputAbortRetry)...), abortRules(InputAbort)...)))
}
