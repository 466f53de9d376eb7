package policy

// Internals the external tests (package policy_test) read.
var (
	OverflowPatternsForTest        = overflowPatterns
	IsRetryableErrorMessageForTest = isRetryableErrorMessage
	ClassifyForTest                = classify
)
