package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/trace"
)

// Texts the original agent uses.
const (
	// ErrPromptWhileStreaming is the original's rejection of a prompt while
	// the agent is processing.
	ErrPromptWhileStreaming = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
	// ErrContinueWhileStreaming and the two below are Agent.continue()'s rejections.
	ErrContinueWhileStreaming = "Agent is already processing. Wait for completion before continuing."
	ErrContinueEmpty          = "No messages to continue from"
	ErrContinueFromAssistant  = "Cannot continue from message role: assistant"
	// AbortedMessage is the errorMessage of a call ended by abort.
	AbortedMessage = "Request was aborted"
	// CompactionFailure is the simulated compaction's error text when
	// compaction does not succeed.
	CompactionFailure = "simulated compaction failure"
	// CompactionContinueDelay is the wait between a successful overflow
	// compaction and its continue, as in the original.
	CompactionContinueDelay = 100 * time.Millisecond
)

// The original's session options, which the simulated session does not
// vary: get_state's thinkingLevel, steeringMode and followUpMode (both
// QueueMode), and interruptMode.
const (
	ThinkingLevel = "off"
	QueueMode     = "one-at-a-time"
	InterruptMode = "immediate"
)

// ProviderAPI is the API that the original's model registry gives a
// provider's models (pi-ai's Api): "anthropic-messages" for "anthropic",
// "openai-responses" for "openai", "openai-codex-responses" for
// "openai-codex", "azure-openai-responses", "google-generative-ai" for
// "google", "google-gemini-cli", "google-vertex", "bedrock-converse-stream"
// for "amazon-bedrock"; any other provider is taken to be
// OpenAI-compatible ("openai-completions"), and "" has no API ("").
func ProviderAPI(provider string) string {
	switch provider {
	case "":
		return ""
	case "anthropic":
		return "anthropic-messages"
	case "openai":
		return "openai-responses"
	case "openai-codex":
		return "openai-codex-responses"
	case "azure-openai-responses", "google-gemini-cli", "google-vertex":
		return provider
	case "google":
		return "google-generative-ai"
	case "amazon-bedrock":
		return "bedrock-converse-stream"
	}
	return "openai-completions"
}

// Role is the role of a message in the runtime context.
type Role uint8

// Message roles (RoleNone: the context is empty).
const (
	RoleNone Role = iota
	RoleUser
	RoleAssistant
	RoleToolResult
	// RoleCompactionSummary is the summary a rebuilt context starts with
	// (RebuildFromHistory).
	RoleCompactionSummary
)

// String returns "user", "assistant", "toolResult", "compactionSummary"
// or "".
func (r Role) String() string {
	return [...]string{"", "user", "assistant", "toolResult", "compactionSummary"}[r]
}

// Message is an assistant message of the runtime context: the classified
// reply and when it arrived.
type Message struct {
	Reply classify.Outcome
	At    time.Duration
}

// Context is what the session's rules read of the runtime context (or of
// the session history), in constant space: the number of messages, the
// role of the last one, and the last assistant message. Only a trailing
// assistant message is ever removed, and never twice without a message
// added in between, so one level of memory undoes a removal. (In the
// runtime context an assistant message follows a user message or a tool
// result; in the history it may follow an error the retry path removed
// from the context, which a rebuilt context then shows.)
//
// Assistant is the zero Message when HasAssistant is false, and Previous
// when HasPrevious is false (push and dropLastAssistant rely on it, and
// skip copying zeros over zeros).
type Context struct {
	Count                     int
	Assistant                 Message // the last assistant message (when HasAssistant)
	Previous                  Message // the one before it, while it is the last message
	Last                      Role
	BeforeLast                Role // the role before a trailing assistant message
	HasAssistant, HasPrevious bool
}

func (c *Context) add(r Role, m Message) { c.push(r, &m.Reply, m.At) }

// push is add with the message's reply and time apart, so that the
// reply is copied once, into place (o is read for RoleAssistant only).
func (c *Context) push(r Role, o *classify.Outcome, at time.Duration) {
	if r == RoleAssistant {
		if c.HasAssistant || c.HasPrevious { // (else both are zero)
			c.Previous = c.Assistant
		}
		c.BeforeLast, c.HasPrevious = c.Last, c.HasAssistant
		c.Assistant.Reply = *o
		c.Assistant.At = at
		c.HasAssistant = true
	}
	c.Count++
	c.Last = r
}

// dropLastAssistant removes a trailing assistant message; it reports
// whether there was one.
func (c *Context) dropLastAssistant() bool {
	if c.Last != RoleAssistant {
		return false
	}
	c.Count--
	if c.HasPrevious {
		c.Assistant = c.Previous
		c.Previous = Message{}
	} else {
		c.Assistant = Message{} // (Previous is zero)
	}
	c.Last, c.HasAssistant = c.BeforeLast, c.HasPrevious
	c.BeforeLast, c.HasPrevious = RoleNone, false
	return true
}

// RunKind says why an agent run started.
type RunKind uint8

// Kinds of run (NoRun: none in flight).
const (
	NoRun         RunKind = iota
	PromptRun             // a prompt's own run
	RetryRun              // a continue after a retry backoff
	CompactionRun         // a continue after overflow compaction
)

// String returns "none", "prompt", "retry" or "compaction".
func (k RunKind) String() string { return [...]string{"none", "prompt", "retry", "compaction"}[k] }

// Run is the agent run in flight. (Its last reply is not kept: the reply
// that ends a run is read in the step that delivers it, and the runtime
// context holds it as its last assistant message.)
type Run struct {
	Prompt int // the prompt whose own run this is (PromptRun)
	// Call is the model call in flight (0: none): a reply for another call
	// is stale and ignored.
	Call uint64
	Kind RunKind
}

// TimerKind is what a timer does when it fires.
type TimerKind uint8

// Timer kinds.
const (
	BackoffTimer    TimerKind = iota + 1 // a retry backoff wait ends
	ContinueTimer                        // the original's 0 ms continue after a wait
	CompactionTimer                      // the continue 100 ms after a compaction
)

// String returns "backoff", "continue0" or "compaction".
func (k TimerKind) String() string {
	switch k {
	case BackoffTimer:
		return "backoff"
	case ContinueTimer:
		return "continue0"
	case CompactionTimer:
		return "compaction"
	}
	return fmt.Sprintf("TimerKind(%d)", int(k))
}

// Timer is a timer to arm (Delay), cancel or that fired, by ID.
type Timer struct {
	Kind  TimerKind
	ID    uint64
	Delay time.Duration
}

// State is the session: a value, compared and copied freely. Nothing in it
// grows with the number of prompts or messages.
type State struct {
	Retry retry.Snapshot
	// Ctl is the cancellable backoff wait's timer (0: none).
	Ctl uint64
	// LastID is the last timer or call id issued.
	LastID uint64
	// Prompts is the number of prompts issued, accepted or not (they are
	// numbered from 1).
	Prompts int
	// Pending is the unresolved prompt (0: none; there is never more than
	// one).
	Pending int
	Run     Run
	Context Context
	// CompTimer is the pending compaction continue that a prompt or abort
	// cancels (sound; 0: none).
	CompTimer uint64
	// CompAt is the time of the latest compaction (when CompDone).
	CompAt time.Duration
	// RetryAt is when the backoff wait running ends (when HasRetryAt:
	// get_state's nextRetryAt).
	RetryAt time.Duration
	// Waiting: original, Pending waits on the retry promise it saw when
	// its run ended.
	Waiting    bool
	CompDone   bool
	HasRetryAt bool
	// History is the session history since the latest successful
	// compaction (original, RebuildFromHistory; zero otherwise): every
	// message the runtime context received, including the errors the retry
	// path removed from it.
	History Context
}

// Initial is a session before anything happened: idle, nothing pending.
func Initial() State { return State{Retry: retry.Snapshot{State: policy.StateIdle}} }

// Busy reports whether a prompt would be rejected now.
func (s *State) Busy(r *Rules) bool {
	return s.Run.Kind != NoRun || s.Pending != 0 || (r.Admission == RejectWhileChainOpen && s.Retry.Open)
}

// IsStreaming is the original's isStreaming: a run in flight or a prompt
// not yet resolved.
func (s *State) IsStreaming() bool { return s.Run.Kind != NoRun || s.Pending != 0 }

// Config is what a session is given once: the compaction stub and the
// identity fields of its records.
type Config struct {
	// CompactionEnabled: an overflow is handed to compaction (the
	// set_auto_compaction event changes it: the shell performs its
	// SetCompaction effect on its Core's Config); CompactionSucceeds: the
	// compaction succeeds and a continue follows.
	CompactionEnabled, CompactionSucceeds bool
	Provider, SessionID, BaseURL          string
	// Model is the id of the session's own model (the trace's "model";
	// retry.fallback's models follow it).
	Model string
	// Profile is the name of the retry settings' profile (get_state's
	// "profile").
	Profile string
}

// EffectKind is what the shell must do.
type EffectKind uint8

// Effects, performed in order.
const (
	Emit           EffectKind = iota + 1 // write Record to the trace
	Answer                               // Record is a command's response
	Resolve                              // Record is prompt_resolved
	Call                                 // start a model call (Call): deliver its reply as a Reply event
	Arm                                  // arm Timer
	Cancel                               // cancel Timer.ID: it must never fire
	SetEnabled                           // retry.enabled becomes Enabled
	SetSettings                          // the retry policy becomes Policy
	SetCompaction                        // Config.CompactionEnabled becomes Enabled
	numEffectKinds                       // one past the last kind
)

// Effect is one effect of a step. Call, when it occurs, is a step's last
// effect, so a shell may deliver an instant reply at once.
type Effect struct {
	Kind    EffectKind
	Record  trace.Record
	Timer   Timer
	Call    uint64
	Enabled bool           // SetEnabled, SetCompaction
	Policy  *policy.Policy // SetSettings: the event's
}

// AdmissionRule says when a prompt is rejected.
type AdmissionRule uint8

// Admission rules.
const (
	// RejectWhileBusy (original, H13): only while a run is in flight or a
	// prompt is unresolved.
	RejectWhileBusy AdmissionRule = iota
	// RejectWhileChainOpen (sound): also while a retry chain is open.
	RejectWhileChainOpen
)

// ResolutionRule says when a prompt resolves.
type ResolutionRule uint8

// Resolution rules.
const (
	// ResolveOnRetryPromise (original, H4, H7, H18): once its own run is
	// over, the prompt waits for the retry promise it sees then (checked
	// once) and resolves when that promise is resolved, or never.
	ResolveOnRetryPromise ResolutionRule = iota
	// ResolveWhenSettled (sound): when no run is in flight and the retry
	// machine is at rest, checked at the end of every queue event.
	ResolveWhenSettled
)

// CompactionContinueRule says what may stop a compaction's continue.
type CompactionContinueRule uint8

// Compaction continue rules.
const (
	// ContinueUncancelled (original): a plain timer that nothing cancels;
	// two compactions make two continues.
	ContinueUncancelled CompactionContinueRule = iota
	// ContinueCancelledByPromptOrAbort (sound): a new prompt, an abort or
	// a newer compaction cancels it.
	ContinueCancelledByPromptOrAbort
)

// RejectedPromptRule says how a rejected prompt is answered.
type RejectedPromptRule uint8

// Rejected prompt rules.
const (
	// FailureThenSuccess (original, H5): two responses, success false,
	// then success true.
	FailureThenSuccess RejectedPromptRule = iota
	// OneFailure (sound): one response, success false.
	OneFailure
)

// PrePromptCompactionRule says whether a prompt first checks the context
// for an overflow.
type PrePromptCompactionRule uint8

// Pre-prompt compaction rules.
const (
	// NoPrePromptCheck (sound): aborted replies are never compacted.
	NoPrePromptCheck PrePromptCompactionRule = iota
	// CheckLastAssistant (original): before each prompt, the compaction
	// check runs on the last assistant message of the runtime context,
	// aborted replies included.
	CheckLastAssistant
)

// CompactionContextRule says what the runtime context is after a
// successful overflow compaction.
type CompactionContextRule uint8

// Compaction context rules.
const (
	// KeepRuntimeContext (sound): the context as it was, the overflowing
	// reply removed; the continue follows.
	KeepRuntimeContext CompactionContextRule = iota
	// RebuildFromHistory (original, H19): the session history is kept
	// beside the context, and a successful compaction replaces the context
	// with the summary and the history since the previous compaction
	// (errors the retry path removed included), then drops a trailing
	// assistant error; the continue is rejected when the context still ends
	// with an assistant message. With no message since the previous
	// compaction there is nothing to compact: auto_compaction_end without a
	// result, willRetry false, no continue.
	RebuildFromHistory
)

// Rules are the session rules that differ between variants (SPEC.md §9):
// one named rule per difference, read by Step and nothing else.
type Rules struct {
	Admission           AdmissionRule
	Resolution          ResolutionRule
	CompactionContinue  CompactionContinueRule
	RejectedPrompt      RejectedPromptRule
	PrePromptCompaction PrePromptCompactionRule
	CompactionContext   CompactionContextRule
}

// Variant is a policy variant: the retry machine's table and the session
// rules around it.
type Variant struct {
	Name  string
	Retry *policy.Variant
	Rules Rules
}

// The two variants.
var (
	// Sound is the documented policy made total (the default).
	Sound = &Variant{Name: "sound", Retry: policy.Sound(), Rules: Rules{
		Admission:           RejectWhileChainOpen,
		Resolution:          ResolveWhenSettled,
		CompactionContinue:  ContinueCancelledByPromptOrAbort,
		RejectedPrompt:      OneFailure,
		PrePromptCompaction: NoPrePromptCheck,
		CompactionContext:   KeepRuntimeContext,
	}}
	// Original is the original implementation's observable behaviour,
	// hazards included.
	Original = &Variant{Name: "original", Retry: policy.Original(), Rules: Rules{
		Admission:           RejectWhileBusy,
		Resolution:          ResolveOnRetryPromise,
		CompactionContinue:  ContinueUncancelled,
		RejectedPrompt:      FailureThenSuccess,
		PrePromptCompaction: CheckLastAssistant,
		CompactionContext:   RebuildFromHistory,
	}}
	variants = []*Variant{Sound, Original}
)

// VariantByName returns the variant called name ("" means sound).
func VariantByName(name string) (*Variant, error) {
	if name == "" {
		return Sound, nil
	}
	for _, v := range variants {
		if v.Name == name {
			return v, nil
		}
	}
	return nil, fmt.Errorf("unknown variant %q (allowed: %s)", name, strings.Join(VariantNames(), ", "))
}

// VariantNames lists the variants by name.
func VariantNames() []string {
	names := make([]string, len(variants))
	for i, v := range variants {
		names[i] = v.Name
	}
	return names
}
