package trace

import (
	"fmt"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// Type is a trace line's "type".
type Type uint8

// The trace line types, in SPEC.md §8's order.
const (
	AgentRun Type = iota + 1
	MessageEnd
	AgentRunEnd
	Transition
	AutoRetryStart
	AutoRetryEnd
	AutoCompactionStart
	AutoCompactionEnd
	MarkUsageLimitReached
	PromptResolved
	PromptRejected
	ContinueRejected
	Response
	Final
	RetryFallback
	numTypes
)

// typeNames are the types' JSON names; AutoRetryStart's and AutoRetryEnd's
// are policy's event types.
var typeNames = [numTypes]string{
	AgentRun:              "agent_run",
	MessageEnd:            "message_end",
	AgentRunEnd:           "agent_run_end",
	Transition:            "transition",
	AutoRetryStart:        policy.AutoRetryStart{}.Type(),
	AutoRetryEnd:          policy.AutoRetryEnd{}.Type(),
	AutoCompactionStart:   "auto_compaction_start",
	AutoCompactionEnd:     "auto_compaction_end",
	MarkUsageLimitReached: "mark_usage_limit_reached",
	PromptResolved:        "prompt_resolved",
	PromptRejected:        "prompt_rejected",
	ContinueRejected:      "continue_rejected",
	Response:              "response",
	Final:                 "final",
	RetryFallback:         policy.RetryFallback{}.Type(),
}

// String returns the type's JSON name, e.g. "auto_retry_start".
func (t Type) String() string {
	if t == 0 || t >= numTypes {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// Types lists every type in SPEC.md's order.
func Types() []Type {
	ts := make([]Type, 0, numTypes-1)
	for t := AgentRun; t < numTypes; t++ {
		ts = append(ts, t)
	}
	return ts
}

// ParseType returns the type called name.
func ParseType(name string) (Type, bool) {
	for t := AgentRun; t < numTypes; t++ {
		if typeNames[t] == name {
			return t, true
		}
	}
	return 0, false
}

// RunKind is agent_run's kind.
type RunKind uint8

// Kinds of run, as the trace writes them.
const (
	RunPrompt   RunKind = iota // "prompt": a prompt's own run
	RunContinue                // "continue": a run resumed from the context
)

// String returns "prompt" or "continue".
func (k RunKind) String() string {
	if k == RunPrompt {
		return "prompt"
	}
	return "continue"
}

// Message is message_end's assistant message.
type Message struct {
	StopReason   policy.StopReason
	ErrorMessage string // omitted when empty
	// Input and CacheRead are the reply's usage in tokens. The trace line
	// does not carry them (so Decode leaves them 0); the RPC stream's full
	// assistant message does.
	Input, CacheRead int64
}

// Edge is a transition line: the fsm edge fired, the input that fired it
// (its SPEC §3 name) and the index of the rule in its variant's table. A
// negative Rule means both are unknown: the line has neither.
type Edge struct {
	From, Event, To string
	Input           retry.Input
	Rule            int
}

// CompactionEnd is auto_compaction_end.
type CompactionEnd struct {
	Result       bool // a result {"summary":"(simulated)"} is present
	Aborted      bool
	WillRetry    bool
	ErrorMessage string // omitted when empty
}

// UsageLimit is mark_usage_limit_reached: the question to auth storage and
// its answer.
type UsageLimit struct {
	Provider, SessionID string
	RetryAfterMs        float64 // written as JavaScript writes it
	HasRetryAfter       bool    // false: retryAfterMs is null
	BaseURL             string
	Returns             bool
}

// ResponseRecord is a response line: a command's answer.
type ResponseRecord struct {
	ID       string // omitted when empty
	Command  string
	Success  bool
	HasState bool // data: State (get_state)
	State    SessionState
	Error    string // written when !Success
}

// FinalRecord is the final line.
type FinalRecord struct {
	State             policy.State
	Attempt           int
	IsRetrying        bool
	UnresolvedPrompts []int
	TurnsConsumed     int
}

// Record is one trace line: its time, its type and the payload of that
// type (the other payloads are zero).
type Record struct {
	T    time.Duration // virtual time since the start
	Type Type

	Run           RunKind               // AgentRun
	Model         string                // AgentRun, MessageEnd: the model of the call (omitted when empty)
	Message       Message               // MessageEnd
	Edge          Edge                  // Transition
	Start         policy.AutoRetryStart // AutoRetryStart
	End           policy.AutoRetryEnd   // AutoRetryEnd
	Reason        string                // AutoCompactionStart
	CompactionEnd CompactionEnd         // AutoCompactionEnd
	UsageLimit    UsageLimit            // MarkUsageLimitReached
	Prompt        int                   // PromptResolved, PromptRejected
	Error         string                // PromptRejected, ContinueRejected
	Response      ResponseRecord        // Response
	Final         FinalRecord           // Final
	Fallback      policy.RetryFallback  // RetryFallback
}

// Sink receives records as a session writes them. The record is only
// valid during the call, and its fields outside its type's payload are
// unspecified: keep Clean's copy.
type Sink interface {
	Record(r *Record)
}

// Clean returns a copy of r with only its time, its type and its type's
// payload (the other fields zero), the final line's prompts copied.
func (r *Record) Clean() Record {
	c := Record{T: r.T, Type: r.Type}
	switch r.Type {
	case AgentRun:
		c.Run, c.Model = r.Run, r.Model
	case MessageEnd:
		c.Message, c.Model = r.Message, r.Model
	case Transition:
		c.Edge = r.Edge
	case AutoRetryStart:
		c.Start = r.Start
	case AutoRetryEnd:
		c.End = r.End
	case AutoCompactionStart:
		c.Reason = r.Reason
	case AutoCompactionEnd:
		c.CompactionEnd = r.CompactionEnd
	case MarkUsageLimitReached:
		c.UsageLimit = r.UsageLimit
	case PromptResolved:
		c.Prompt = r.Prompt
	case PromptRejected:
		c.Prompt, c.Error = r.Prompt, r.Error
	case ContinueRejected:
		c.Error = r.Error
	case Response:
		c.Response = r.Response
	case Final:
		c.Final = r.Final
		c.Final.UnresolvedPrompts = append([]int{}, r.Final.UnresolvedPrompts...)
	case RetryFallback:
		c.Fallback = r.Fallback
	}
	return c
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(r *Record)

// Record calls f(r).
func (f SinkFunc) Record(r *Record) { f(r) }
