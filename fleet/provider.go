package fleet

import (
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// The provider's answers (SPEC.md §15.2). Each error kind has one status,
// message and, for a hint, one header; the texts are the Anthropic API's
// where it has one.
const (
	// Message529 is an overloaded answer (HTTP 529).
	Message529 = `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	// Message503 is a service-unavailable answer (HTTP 503).
	Message503 = `503 Service Unavailable`
	// Message500 is an internal-error answer (HTTP 500).
	Message500 = `500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`
	// MessageNetwork is a connection error (no HTTP status), as the
	// Stainless SDKs write it.
	MessageNetwork = `Connection error.`
	// Message429 is the over-capacity answer (HTTP 429); with hint text,
	// " Please try again in Ns." follows it (N the retry-after in whole
	// seconds).
	Message429 = `429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`
	// MessageOverflow is a context-overflow answer (HTTP 400).
	MessageOverflow = `400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`
	// MessageUsageLimit starts a usage-limit answer (HTTP 429, with a
	// retry-after header); " Please try again in Ns." follows it.
	MessageUsageLimit = `429 {"type":"error","error":{"type":"rate_limit_error","message":"You have reached your usage limit."}}`
)

// Identity of the sessions (the session core's Config), as the simulator's
// scenarios default to, so that a fleet session and a scenario write the
// same trace.
const (
	Provider  = "anthropic"
	ModelID   = "claude-sonnet-4-5"
	BaseURL   = "https://api.anthropic.com"
	SessionID = "session-1"
	// ContextWindow is the sessions' context window (no answer reports a
	// usage, so only messages overflow).
	ContextWindow = int64(200000)
	// EpochMs is the wall-clock time of the simulation's t=0 (2026-02-16),
	// passed to classification.
	EpochMs = int64(1771200000000)
)

// answer is a provider answer: a success (kind KindNone; tool: a toolUse
// turn, else the final stop) or an error of a kind, with a hint (its
// retry-after in seconds, when hint is set) in the header or the text.
type answer struct {
	kind Kind
	tool bool
	hint HintMode // 429: how the retry-after is given; usage_limit: header
	secs int64    // the retry-after in whole seconds (hint header or text)
}

// hinted reports whether the answer gives a retry-after (a provider's
// retry-after window opens when it arrives).
func (a answer) hinted() bool {
	return (a.kind == Kind429 || a.kind == KindUsageLimit) && a.hint != HintNone
}

// message is the assistant message the answer is.
func (a answer) message() policy.AssistantMessage {
	if a.kind == KindNone {
		if a.tool {
			return policy.AssistantMessage{StopReason: policy.StopReasonToolUse}
		}
		return policy.AssistantMessage{StopReason: policy.StopReasonStop}
	}
	m := policy.AssistantMessage{StopReason: policy.StopReasonError}
	switch a.kind {
	case Kind529:
		m.Status, m.ErrorMessage = 529, Message529
	case Kind503:
		m.Status, m.ErrorMessage = 503, Message503
	case Kind500:
		m.Status, m.ErrorMessage = 500, Message500
	case KindNetwork:
		m.ErrorMessage = MessageNetwork
	case KindOverflow:
		m.Status, m.ErrorMessage = 400, MessageOverflow
	case Kind429, KindUsageLimit:
		m.Status, m.ErrorMessage = 429, Message429
		if a.kind == KindUsageLimit {
			m.ErrorMessage = MessageUsageLimit
		}
		secs := strconv.FormatInt(a.secs, 10)
		switch a.hint {
		case HintHeader:
			m.Headers = map[string]string{"retry-after": secs}
			if a.kind == KindUsageLimit {
				m.ErrorMessage += " Please try again in " + secs + "s."
			}
		case HintText:
			m.ErrorMessage += " Please try again in " + secs + "s."
		}
	}
	return m
}

// catalog classifies answers once per classifier: an answer's message is a
// function of the answer alone (no time-relative hint), so its Outcome is
// too, and the simulation looks it up instead of running the classifier's
// regular expressions on every call.
type catalog struct {
	cls     []*policy.Classifier
	entries map[answer]*catalogEntry
	// plain holds the answers without a retry-after (by kind, and tool
	// for a success), looked up without hashing.
	plain [2 * numKinds]*catalogEntry
	epoch time.Time
}

type catalogEntry struct {
	msg  policy.AssistantMessage
	out  []policy.Outcome
	done []bool
}

func newCatalog(cls []*policy.Classifier) *catalog {
	return &catalog{cls: cls, entries: make(map[answer]*catalogEntry, 64), epoch: time.UnixMilli(EpochMs).UTC()}
}

// entry is a's entry, made on first use.
func (c *catalog) entry(a answer) *catalogEntry {
	var slot **catalogEntry
	if a.secs == 0 && a.hint == "" {
		i := 2 * int(a.kind)
		if a.tool {
			i++
		}
		slot = &c.plain[i]
		if *slot != nil {
			return *slot
		}
	}
	e := c.entries[a]
	if e == nil {
		e = &catalogEntry{msg: a.message(), out: make([]policy.Outcome, len(c.cls)), done: make([]bool, len(c.cls))}
		c.entries[a] = e
	}
	if slot != nil {
		*slot = e
	}
	return e
}

// outcome is a classified by classifier i.
func (c *catalog) outcome(a answer, i int) *policy.Outcome {
	e := c.entry(a)
	if !e.done[i] {
		e.out[i] = c.cls[i].Reply(e.msg, ContextWindow, c.epoch)
		e.done[i] = true
	}
	return &e.out[i]
}
