package policy

import "time"

// Outcome is an assistant reply classified once, where it enters the
// system: everything the retry machine and the session read of it. Decide
// never looks at a message's text; it reads an Outcome's flags, and copies
// its Message only into the events it emits.
type Outcome struct {
	StopReason StopReason
	// Message is the reply's errorMessage (or, for InputContinueFailed,
	// the continue's error): the text of auto_retry_start's errorMessage
	// and auto_retry_end's finalError.
	Message string
	Usage   Usage
	// Class is Classify's result.
	Class Class
	// Overflow: isContextOverflow, whatever the stop reason (the
	// compaction hand-off reads it for successful replies too).
	Overflow bool
	// UsageLimit: the usage-limit regex matches Message; retrying it asks
	// auth storage to switch credentials first.
	UsageLimit bool
	// RetryAfterMs is the hint of a usage-limit message (parseRetryAfterMs
	// at the reply's time); HasRetryAfter is false when there is none.
	RetryAfterMs  float64
	HasRetryAfter bool
}

// ClassifyReply classifies m once: contextWindow is the model's context
// window (0: unknown, no usage rule), now the wall-clock time of the reply
// (for HTTP-date hints).
func ClassifyReply(m AssistantMessage, contextWindow int64, now time.Time) Outcome {
	o := Outcome{StopReason: m.StopReason, Message: m.ErrorMessage, Usage: m.Usage}
	o.Overflow = isContextOverflow(m, contextWindow)
	switch {
	case m.StopReason == StopReasonError && o.Overflow:
		o.Class = ClassOverflow
	case m.StopReason == StopReasonError && m.ErrorMessage != "" && isRetryableErrorMessage(m.ErrorMessage):
		o.Class = ClassRetryable
	case m.StopReason == StopReasonError:
		o.Class = ClassFatal
	case m.StopReason == StopReasonAborted:
		o.Class = ClassAborted
	}
	if m.ErrorMessage != "" && isUsageLimitErrorMessage(m.ErrorMessage) {
		o.UsageLimit = true
		o.RetryAfterMs, o.HasRetryAfter = parseRetryAfterMs(m.ErrorMessage, now)
	}
	return o
}

// IsSuccess reports whether the reply counts as a success for the retry
// machine (message_end feeds InputSuccess): neither an error nor aborted.
func (o *Outcome) IsSuccess() bool { return o.Class == ClassSuccess }

// EndInput is the retry machine's input at agent_end when o is the run's
// last reply; ok is false for a success (nothing to decide).
func (o *Outcome) EndInput() (in Input, ok bool) {
	switch o.Class {
	case ClassRetryable:
		return InputRetryable, true
	case ClassOverflow:
		return InputOverflow, true
	case ClassFatal:
		return InputFatal, true
	case ClassAborted:
		return InputAborted, true
	}
	return 0, false
}

// Reply returns the assistant message o was classified from.
func (o *Outcome) Reply() AssistantMessage {
	return AssistantMessage{StopReason: o.StopReason, ErrorMessage: o.Message, Usage: o.Usage}
}
