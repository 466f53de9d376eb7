package classify

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
	// InputTokens and CacheReadTokens are the reply's usage.
	InputTokens, CacheReadTokens int64
	// Class is Classifier.Classify's result.
	Class Class
	// RetryAfterMs is the hint of a usage-limit message (parseRetryAfterMs
	// at the reply's time); HasRetryAfter is false when there is none.
	RetryAfterMs float64
	// WaitHintMs is the provider's requested wait for an error reply
	// (headers retry-after-ms, retry-after, x-ratelimit-reset-ms,
	// x-ratelimit-reset, then the text), which RetryAfter.Use floor and
	// replace read; HasWaitHint is false when there is none.
	WaitHintMs float64
	// Draw is the uniform draw in [0,1) that jitters this reply's retry
	// wait, given by the shell from its random source (one per retryable
	// failure while a jitter mode is on; unused otherwise).
	Draw float64
	// Overflow: isContextOverflow, whatever the stop reason (the
	// compaction hand-off reads it for successful replies too).
	Overflow bool
	// UsageLimit: the usage-limit regex matches Message; retrying it asks
	// auth storage to switch credentials first.
	UsageLimit bool
	// HasRetryAfter and HasWaitHint say whether RetryAfterMs and
	// WaitHintMs are set. (The flags come last, packed: an Outcome is
	// copied into every reply event and context message.)
	HasRetryAfter, HasWaitHint bool
}

// ClassifyReply classifies m once, as the original does (message
// classification): contextWindow is the model's context window (0:
// unknown, no usage rule), now the wall-clock time of the reply (for
// HTTP-date hints). It is Reply of a nil Classifier.
func ClassifyReply(m AssistantMessage, contextWindow int64, now time.Time) Outcome {
	return (*Classifier)(nil).Reply(m, contextWindow, now)
}

// Reply classifies m once, in c's mode and with c's patterns (a nil c
// classifies as the original does): its class, its overflow and usage-limit
// flags, the usage-limit hint for auth storage (the original's parser) and
// the wait hint (headers first) that RetryAfter.Use floor and replace read.
// now is the wall-clock time of the reply, for HTTP-date hints.
func (c *Classifier) Reply(m AssistantMessage, contextWindow int64, now time.Time) Outcome {
	o := Outcome{StopReason: m.StopReason, Message: m.ErrorMessage, InputTokens: m.InputTokens, CacheReadTokens: m.CacheReadTokens}
	folded := foldASCII(m.ErrorMessage) // folded once, for every rule that reads the text
	o.Overflow = contextOverflow(m, folded, contextWindow)
	o.Class = c.class(m, folded, o.Overflow) // the overflow check made once
	if m.ErrorMessage != "" && usageLimitFolded(folded) {
		o.UsageLimit = true
		o.RetryAfterMs, o.HasRetryAfter = parseRetryAfterFolded(m.ErrorMessage, folded, now)
	}
	if m.StopReason == StopReasonError {
		o.WaitHintMs, o.HasWaitHint = waitHintFolded(m, folded, now)
	}
	return o
}

// IsSuccess reports whether the reply counts as a success for the retry
// machine (message_end feeds InputSuccess): neither an error nor aborted.
func (o *Outcome) IsSuccess() bool { return o.Class == ClassSuccess }

// Reply returns the assistant message o was classified from.
func (o *Outcome) Reply() AssistantMessage {
	return AssistantMessage{StopReason: o.StopReason, ErrorMessage: o.Message, InputTokens: o.InputTokens, CacheReadTokens: o.CacheReadTokens}
}
