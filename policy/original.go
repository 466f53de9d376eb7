package policy

// Guards of the original's table.
var (
	GuardCounting  = Guard{"attempt > 0", func(s Snapshot, _ Settings) bool { return s.Attempt > 0 }}
	GuardZero      = Guard{"attempt == 0", func(s Snapshot, _ Settings) bool { return s.Attempt == 0 }}
	GuardOpen      = Guard{"chain open", func(s Snapshot, _ Settings) bool { return s.Open }}
	GuardNotOpen   = Guard{"no chain open", func(s Snapshot, _ Settings) bool { return !s.Open }}
	GuardRetryCtl  = Guard{"enabled && attempt < maxRetries && wait cancellable", func(s Snapshot, set Settings) bool { return GuardRetry.Holds(s, set) && s.Controlled }}
	GuardRetryLost = Guard{"enabled && attempt < maxRetries && wait not cancellable", func(s Snapshot, set Settings) bool { return GuardRetry.Holds(s, set) && !s.Controlled }}
	GuardLastWait  = Guard{"one wait running", func(s Snapshot, _ Settings) bool { return s.Armed <= 1 }}
	GuardMoreWaits = Guard{"two or more waits running", func(s Snapshot, _ Settings) bool { return s.Armed > 1 }}
	GuardCtlLast   = Guard{"wait cancellable && one wait running", func(s Snapshot, _ Settings) bool { return s.Controlled && s.Armed <= 1 }}
	GuardCtlMore   = Guard{"wait cancellable && two or more waits", func(s Snapshot, _ Settings) bool { return s.Controlled && s.Armed > 1 }}
	GuardLostOpen  = Guard{"wait not cancellable && chain open", func(s Snapshot, _ Settings) bool { return !s.Controlled && s.Open }}
	GuardLostShut  = Guard{"wait not cancellable && no chain open", func(s Snapshot, _ Settings) bool { return !s.Controlled && !s.Open }}
)

var (
	notBackoff = []State{StateIdle, StateContinuing, StateExhausted, StateCancelled}
	backoff    = []State{StateBackoff}
	allStates  = States
	// The original's catch path of an aborted backoff sleep: it reports the
	// counter of that moment, resets it and resolves the retry promise.
	catchCancel = []Step{StepEmitEnd, StepResetAttempt, StepRelease}
)

func ignoredEverywhere(in Input, note string) Rule {
	return Rule{Input: in, From: allStates, Guard: Always, Note: note}
}

// originalRules reproduce the original TypeScript AgentSession (oh-my-pi
// 63ec7b6), hazards included: chains left open, stale counters, two
// backoff waits at once.
var originalRules = []Rule{
	// message_end success: the success reset, whatever the state.
	{Input: InputSuccess, From: notBackoff, Guard: GuardCounting, Event: "succeed", To: StateIdle,
		Steps: endChain, Success: true, Note: "a stale counter gives a spurious end (H8); a mid-run toolUse ends the chain (H4)"},
	{Input: InputSuccess, From: backoff, Guard: GuardCounting, Event: "succeed", To: StateBackoff,
		Steps: endChain, Success: true, Note: "the running wait goes on"},
	{Input: InputSuccess, From: allStates, Guard: GuardZero},

	// agent_end retryable: #handleRetryableError.
	{Input: InputRetryable, From: allStates, Guard: GuardDisabled,
		Note: "returns before counting: an open chain stays open (H3)"},
	{Input: InputRetryable, From: notBackoff, Guard: GuardExhaust, Event: "exhaust", To: StateExhausted,
		Steps: endChain, Final: FinalMessage, Reason: ReasonMaxRetries, Note: "reports attempt-1 after counting; the error stays in context"},
	{Input: InputRetryable, From: backoff, Guard: GuardExhaust, Event: "exhaust", To: StateBackoff,
		Steps: endChain, Final: FinalMessage, Reason: ReasonMaxRetries, Note: "the running wait goes on"},
	{Input: InputRetryable, From: notBackoff, Guard: GuardRetry, Event: "retry", To: StateBackoff, Steps: startRun,
		Note: "continues a stale counter (H2)"},
	{Input: InputRetryable, From: backoff, Guard: GuardRetryCtl, Event: "retry", To: StateBackoff,
		Steps: []Step{StepIncAttempt, StepOpen, StepAskAuth, StepEmitStart, StepDropError, StepCancelTimer, StepArmTimer,
			StepUncontrol, StepEmitEnd, StepResetAttempt, StepRelease},
		Final: FinalCancelled,
		Note:  "two backoffs at once: the old wait's catch path cancels the new chain and forgets the new controller; the new wait cannot be cancelled"},
	{Input: InputRetryable, From: backoff, Guard: GuardRetryLost, Event: "retry", To: StateBackoff, Steps: startRun,
		Note: "another wait is already running and cannot be cancelled"},

	// Other agent_end outcomes never end a chain (H1).
	ignoredEverywhere(InputOverflow, "chain left open; compaction hand-off"),
	ignoredEverywhere(InputFatal, "chain left open (H1)"),
	ignoredEverywhere(InputAborted, "chain left open (H1)"),
	ignoredEverywhere(InputNoMessage, "no last assistant message: nothing happens"),
	ignoredEverywhere(InputContinueFailed, "the rejection is swallowed: the chain stays open"),
	ignoredEverywhere(InputPrompt, "a prompt does not reset the counter"),

	// A backoff wait ends: continue from a 0 ms timer.
	{Input: InputElapsed, From: backoff, Guard: GuardLastWait, Event: "elapse", To: StateContinuing,
		Steps: []Step{StepWake, StepContinueLater}},
	{Input: InputElapsed, From: backoff, Guard: GuardMoreWaits, Event: "wake", To: StateBackoff,
		Steps: []Step{StepWake, StepContinueLater}},
	{Input: InputElapsed, From: notBackoff, Guard: Always, Note: "no wait runs outside backoff"},
}

func abortRules(in Input) []Rule {
	return []Rule{
		{Input: in, From: backoff, Guard: GuardCtlLast, Event: "cancel", To: StateCancelled,
			Steps: append([]Step{StepCancelTimer}, catchCancel...), Final: FinalCancelled},
		{Input: in, From: backoff, Guard: GuardCtlMore, Event: "cancel_one", To: StateBackoff,
			Steps: append([]Step{StepCancelTimer}, catchCancel...), Final: FinalCancelled},
		{Input: in, From: backoff, Guard: GuardLostOpen, Event: "release", To: StateBackoff,
			Steps: []Step{StepRelease}, Note: "resolves the promise; the counter stays (H2)"},
		{Input: in, From: backoff, Guard: GuardLostShut},
		{Input: in, From: notBackoff, Guard: GuardOpen, Event: "release", To: StateCancelled,
			Steps: []Step{StepRelease}, Note: "outside the wait: waiters released, counter stale (H2)"},
		{Input: in, From: notBackoff, Guard: GuardNotOpen},
	}
}

// Original reproduces the original implementation's observable behaviour,
// hazards included (see SPEC.md, "The original variant").
var Original = mustVariant(NewVariant("original",
	append(append(append([]Rule{}, originalRules...), abortRules(InputAbortRetry)...), abortRules(InputAbort)...),
	SessionRules{
		DoubleRejectResponse:     true,
		PrePromptCompactionCheck: true,
	}))

func init() { extraVariants = append(extraVariants, Original) }
