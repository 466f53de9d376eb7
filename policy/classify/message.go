package classify

// StopReason is why the model stopped producing an assistant message. The
// values are the original's spelling ("stop", "length", "toolUse", "error",
// "aborted").
type StopReason string

// Stop reasons the original agent produces.
const (
	StopReasonStop    StopReason = "stop"
	StopReasonLength  StopReason = "length"
	StopReasonToolUse StopReason = "toolUse"
	StopReasonError   StopReason = "error"
	StopReasonAborted StopReason = "aborted"
)

// Usage is the token usage reported with an assistant message. Only the two
// fields that the overflow usage rule reads are modelled.

// AssistantMessage is the part of an assistant reply the retry policy reads.
type AssistantMessage struct {
	StopReason   StopReason `json:"stopReason"`
	ErrorMessage string     `json:"errorMessage,omitempty"`
	// InputTokens and CacheReadTokens are the reply's usage (the
	// provider reports input usage when the stream starts), which the
	// overflow usage rule reads.
	InputTokens     int64 `json:"inputTokens,omitempty"`
	CacheReadTokens int64 `json:"cacheReadTokens,omitempty"`
	// Status is the HTTP status of the reply's response, 0 when unknown.
	Status int `json:"status,omitempty"`
	// Headers are the response's headers, keyed by lower-case name (see
	// ValidateHTTP). Only waitHint and Classifier read them.
	Headers map[string]string `json:"headers,omitempty"`
}

// IsSuccess reports whether m counts as a successful reply for the retry
// machine: its stop reason is neither "error" nor "aborted" (so "toolUse"
// and "length" are successes too, as in the original).
func (m AssistantMessage) IsSuccess() bool {
	return m.StopReason != StopReasonError && m.StopReason != StopReasonAborted
}
