package retry

import "github.com/ohmypi/retryfsm/policy/classify"

// DecisionForTest is a Decision with what Decide works out about a
// retryable failure before auth storage answers (zero for other inputs):
// what a guard reads.
func DecisionForTest(s Snapshot, in Input, o *classify.Outcome, set *Settings) *Decision {
	d := &Decision{}
	if in == InputRetryable {
		d.cause.of(&s, o, set, false)
	}
	return d
}
