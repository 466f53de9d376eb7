package policy

import "github.com/ohmypi/retryfsm/policy/classify"

// AssistantMessage is the part of an assistant reply the retry policy reads
// (package classify's, which classifies it).
type AssistantMessage = classify.AssistantMessage

// StopReason is why the model stopped producing an assistant message, in
// the original's spelling.
type StopReason = classify.StopReason

// Stop reasons the original agent produces.
const (
	StopReasonStop    StopReason = classify.StopReasonStop
	StopReasonLength  StopReason = classify.StopReasonLength
	StopReasonToolUse StopReason = classify.StopReasonToolUse
	StopReasonError   StopReason = classify.StopReasonError
	StopReasonAborted StopReason = classify.StopReasonAborted
)
