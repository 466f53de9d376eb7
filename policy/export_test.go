package policy

// Internals the external tests (package policy_test) read.
var (
	OverflowPatternsForTest        = overflowPatterns
	IsRetryableErrorMessageForTest = isRetryableErrorMessage
	ClassifyForTest                = classify
)

// DecisionForTest is a Decision with what Decide works out about a
// retryable failure before auth storage answers (zero for other inputs):
// what a guard reads.
func DecisionForTest(s Snapshot, in Input, o *Outcome, set *Settings) *Decision {
	d := &Decision{}
	if in == InputRetryable {
		d.cause.of(&s, o, set, false)
	}
	return d
}
