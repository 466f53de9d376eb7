package retry

// Reason says why a chain gave up (policy.ExhaustedError.Reason). It is declared
// on the give-up rows of a variant's table (Rule.Reason). More reasons may be
// added (the fail-fast reasons of error profiles, for example): compare with
// the constants, and treat an unknown value as a give-up of another kind.
type Reason string

// Reasons for giving up a chain.
const (
	// ReasonMaxRetries: a retryable error after the last allowed retry
	// (attempt >= maxRetries, maxRetries 0 included).
	ReasonMaxRetries Reason = "max_retries"
	// ReasonNonRetryable: the retried run ended with an error that is not
	// retried: a fatal error or a context overflow.
	ReasonNonRetryable Reason = "non_retryable"
	// ReasonDisabled: a retryable error while retry was switched off during
	// the chain.
	ReasonDisabled Reason = "disabled"
	// ReasonNoMessage: the retried run ended without an assistant message.
	ReasonNoMessage Reason = "no_message"
	// ReasonContinueFailed: Agent.Continue could not start the retried run.
	ReasonContinueFailed Reason = "continue_failed"
	// ReasonMaxWait: the wait a retry needed exceeded
	// RetryAfter.MaxWait and no fallback model was left (fail-fast).
	ReasonMaxWait Reason = "max_wait"
)
