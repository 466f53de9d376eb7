package sim

import (
	"context"
	"errors"
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/trace"
)

// Texts the original agent uses.
const (
	// ErrPromptWhileStreaming is the original's rejection of a prompt while the
	// agent is processing.
	ErrPromptWhileStreaming = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
	// ErrContinueWhileStreaming and the two below are Agent.continue()'s rejections.
	ErrContinueWhileStreaming = "Agent is already processing. Wait for completion before continuing."
	ErrContinueEmpty          = "No messages to continue from"
	ErrContinueFromAssistant  = "Cannot continue from message role: assistant"
	// AbortedMessage is the errorMessage of a call ended by abort.
	AbortedMessage = "Request was aborted"
	// CompactionFailure is the simulated compaction's error text when a
	// scenario says compaction does not succeed.
	CompactionFailure = "simulated compaction failure"
	// CompactionContinueDelay is the wait between a successful overflow
	// compaction and its continue, as in the original.
	CompactionContinueDelay = 100 * time.Millisecond
	// MaxEvents bounds one simulation, so that no scenario runs forever.
	MaxEvents = 1_000_000
)

// ErrTooManyEvents is returned when a simulation fires more than MaxEvents
// queue events.
var ErrTooManyEvents = errors.New("sim: simulation exceeded MaxEvents queue events")

// Role is the role of a message in the runtime context or history.
type Role string

// Message roles.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
)

// Message is one entry of the runtime context or the persisted history.
type Message struct {
	Role      Role
	Assistant policy.AssistantMessage // for RoleAssistant
	At        time.Duration           // virtual time it was added
}

// RunKind says why an agent run started.
type RunKind int

// Kinds of run.
const (
	RunPrompt     RunKind = iota // a prompt's own run
	RunRetry                     // a continue after a retry backoff
	RunCompaction                // a continue after overflow compaction
)

type run struct {
	kind    RunKind
	prompt  int // the prompt whose own run this is (RunPrompt)
	last    policy.AssistantMessage
	hasLast bool
	calling bool // an LLM call with durationMs > 0 is in flight
}

// Final is the session's state at the end of a simulation.
type Final struct {
	State             policy.State
	Attempt           int
	IsRetrying        bool
	UnresolvedPrompts []int
	At                time.Duration
}

// Session is a simulated agent session driven by a scenario: a scripted
// provider, the session loop, the retry Controller on a discrete-event
// Scheduler, and the trace.
type Session struct {
	sc         *scenario.Scenario
	variant    *policy.Variant
	sched      *Scheduler
	ctrl       *policy.Controller
	settings   *policy.SettingsStore
	json       *trace.Writer // nil with Options.NoJSON
	sink       trace.Sink
	rec        trace.Record // the record being written (reused)
	turn       int
	lastTurn   scenario.Turn
	ctx        contextSummary
	context    []Message // the full runtime context and history, kept
	history    []Message // unless StreamOnly, for Context and History
	inFlight   bool
	cur        run
	callGen    uint64
	prompts    int
	pending    []int
	compGen    uint64
	compWait   bool
	compAt     time.Duration // time of the latest compaction
	compDone   bool          // a compaction has happened
	waiting    []int         // original: prompts waiting on the open chain
	aborting   bool          // an abort action is being handled
	deferred   []int         // original: prompts resolving after the abort response
	ending     bool          // the reply being handled ends its run
	afterEnd   []int         // original: prompts resolving after agent_run_end
	streamOnly bool
}

// Options adjust a simulation.
type Options struct {
	// Variant overrides the scenario's variant when not empty.
	Variant string
	// StreamOnly keeps no list of messages, so a long-running session
	// (the RPC server) keeps bounded memory whatever the number of prompts
	// and messages: Context and History return nil. Use it with NoJSON
	// and a Sink.
	StreamOnly bool
	// NoJSON turns the JSON trace off: no line is formatted, and Trace
	// returns an empty trace. Records still reach Sink.
	NoJSON bool
	// Sink, when set, receives every trace record as it is written (the
	// RPC server and the terminal player stream from it).
	Sink trace.Sink
}

// NewSession builds a session for sc. Nothing runs until Start or Run.
func NewSession(sc *scenario.Scenario, opt Options) (*Session, error) {
	name := sc.Variant
	if opt.Variant != "" {
		name = opt.Variant
	}
	v, err := policy.VariantByName(name)
	if err != nil {
		return nil, err
	}
	if err := sc.Settings.Validate(); err != nil {
		return nil, err
	}
	s := &Session{sc: sc, variant: v, sched: NewScheduler(time.UnixMilli(sc.EpochMs).UTC()), streamOnly: opt.StreamOnly, sink: opt.Sink}
	if !opt.NoJSON {
		s.json = &trace.Writer{}
	}
	s.settings = policy.NewSettingsStore(sc.Settings)
	s.ctrl, err = policy.NewController(policy.Config{
		Clock: s.sched, Agent: (*agent)(s), Auth: (*auth)(s), Settings: s.settings, Variant: v,
		Provider: sc.Provider, SessionID: sc.SessionID, BaseURL: sc.BaseURL, ContextWindow: sc.ContextWindow,
	})
	if err != nil {
		return nil, err
	}
	s.ctrl.Subscribe(func(e policy.Event) {
		r := s.begin(trace.AutoRetryStart)
		switch e := e.(type) {
		case policy.AutoRetryStart:
			r.Start = e
		case policy.AutoRetryEnd:
			r.Type, r.End = trace.AutoRetryEnd, e
		}
		s.emit()
	})
	s.ctrl.OnTransition(func(e fsm.Edge) {
		s.begin(trace.Transition).Edge = trace.Edge{From: e.From, Event: e.Event, To: e.To, Rule: -1}
		s.emit()
	})
	if v.Session.PromptWaitsForRun {
		s.sched.AfterEach = s.checkPrompts
	} else {
		// The original's prompt() awaits the retry promise it saw when its
		// own run ended; it resolves when that promise is resolved.
		s.ctrl.OnRelease(func() {
			for _, p := range s.waiting {
				if s.ending {
					s.afterEnd = append(s.afterEnd, p)
				} else if s.aborting && !s.inFlight {
					s.deferred = append(s.deferred, p)
				} else {
					s.resolve(p)
				}
			}
			s.waiting = s.waiting[:0]
		})
	}
	return s, nil
}

// Reset returns the session to its state before Start, keeping its memory
// (for running the same scenario many times, as the benchmarks do). The
// settings go back to the scenario's.
func (s *Session) Reset() {
	s.sched.Reset(time.UnixMilli(s.sc.EpochMs).UTC())
	s.ctrl.Reset()
	_ = s.settings.Set(s.sc.Settings) // validated by NewSession
	if s.json != nil {
		s.json.Reset()
	}
	s.turn, s.lastTurn = 0, scenario.Turn{}
	s.ctx = contextSummary{}
	s.context, s.history = s.context[:0], s.history[:0]
	s.inFlight, s.cur = false, run{}
	s.prompts = 0
	s.pending, s.waiting, s.deferred, s.afterEnd = s.pending[:0], s.waiting[:0], s.deferred[:0], s.afterEnd[:0]
	s.compWait, s.compDone, s.compAt = false, false, 0
	s.aborting, s.ending = false, false
}

// Controller returns the session's retry Controller.
func (s *Session) Controller() *policy.Controller { return s.ctrl }

// Scheduler returns the session's discrete-event scheduler.
func (s *Session) Scheduler() *Scheduler { return s.sched }

// Settings returns the session's settings store (the Controller's source).
func (s *Session) Settings() *policy.SettingsStore { return s.settings }

// Trace returns the JSON trace written so far (empty with NoJSON).
func (s *Session) Trace() *trace.Writer {
	if s.json == nil {
		return &trace.Writer{}
	}
	return s.json
}

// Variant returns the variant the session runs.
func (s *Session) Variant() *policy.Variant { return s.variant }

// begin starts the record of a trace line of type typ at the current
// virtual time; emit writes it.
func (s *Session) begin(typ trace.Type) *trace.Record {
	s.rec = trace.Record{T: s.sched.now, Type: typ}
	return &s.rec
}

// emit writes the record begun last to the JSON trace and the sink.
func (s *Session) emit() {
	if s.json != nil {
		s.json.Record(&s.rec)
	}
	if s.sink != nil {
		s.sink.Record(&s.rec)
	}
}

// Start schedules the initial prompt (when the scenario has one) and then
// every action, in list order.
func (s *Session) Start() {
	if s.sc.InitialPrompt {
		s.sched.At(0, func() { s.Prompt(s.sc.Prompt, "", false) })
	}
	for i := range s.sc.Actions {
		a := &s.sc.Actions[i]
		s.sched.At(a.At, func() { s.Do(*a) })
	}
}

// Run starts the scenario and runs it to quiescence (an empty queue), then
// writes the final line.
func (s *Session) Run() (Final, error) {
	s.Start()
	if err := s.sched.Drain(); err != nil {
		return s.Final(), err
	}
	f := s.Final()
	s.WriteFinal()
	return f, nil
}

// Final reads the session's final state now.
func (s *Session) Final() Final {
	snap := s.ctrl.Snapshot()
	return Final{State: snap.State, Attempt: snap.Attempt, IsRetrying: snap.Open,
		UnresolvedPrompts: append([]int{}, s.pending...), At: s.sched.now}
}

// WriteFinal writes the trace's closing "final" line.
func (s *Session) WriteFinal() {
	snap := s.ctrl.Snapshot()
	s.begin(trace.Final).Final = trace.FinalRecord{State: snap.State, Attempt: snap.Attempt, IsRetrying: snap.Open,
		UnresolvedPrompts: s.pending, TurnsConsumed: s.turn}
	s.emit()
}

// Busy reports whether a prompt would be rejected now.
func (s *Session) Busy() bool {
	return s.inFlight || len(s.pending) > 0 ||
		(s.variant.Session.RejectPromptDuringChain && s.ctrl.IsRetrying())
}

// IsStreaming is the original's isStreaming: a run in flight or a prompt
// not yet resolved.
func (s *Session) IsStreaming() bool { return s.inFlight || len(s.pending) > 0 }

// Quiescent reports whether nothing is in flight and nothing is scheduled.
func (s *Session) Quiescent() bool { return !s.inFlight && s.sched.Pending() == 0 }

// Context returns a copy of the runtime context (nil with StreamOnly).
func (s *Session) Context() []Message { return append([]Message(nil), s.context...) }

// History returns a copy of the persisted history (nil with StreamOnly).
func (s *Session) History() []Message { return append([]Message(nil), s.history...) }

// Unresolved returns the numbers of the prompts not yet resolved.
func (s *Session) Unresolved() []int { return append([]int(nil), s.pending...) }

// Do performs one scenario action now, writing its response line.
func (s *Session) Do(a scenario.Action) {
	switch a.Do {
	case "prompt":
		s.Prompt(a.Message, a.ID, true)
	case "abort":
		// The original's abort() awaits the agent going idle before it
		// answers; prompts it releases while no run is in flight, and a
		// prompt whose own aborted run ends, resolve after the response.
		s.aborting = true
		s.Abort()
		s.response(a.ID, "abort", true, "", false)
		s.aborting = false
		for _, p := range s.deferred {
			s.resolve(p)
		}
		s.deferred = s.deferred[:0]
	case "abort_retry":
		// The response comes before the auto_retry_end it causes, as in the original.
		s.response(a.ID, "abort_retry", true, "", false)
		s.ctrl.AbortRetry()
	case "set_auto_retry":
		s.ctrl.SetAutoRetryEnabled(a.Enabled != nil && *a.Enabled)
		s.response(a.ID, "set_auto_retry", true, "", false)
	case "get_state":
		s.response(a.ID, "get_state", true, "", true)
	}
}

func (s *Session) response(id, command string, ok bool, errText string, state bool) {
	r := s.begin(trace.Response)
	r.Response = trace.ResponseRecord{ID: id, Command: command, Success: ok, HasState: state}
	if state {
		r.Response.State = s.State()
	}
	if !ok {
		r.Response.Error = errText
	}
	s.emit()
}

// State is the get_state data: the original's fields that apply plus the
// retry fields it lacks.
func (s *Session) State() trace.SessionState {
	snap := s.ctrl.Snapshot()
	return trace.SessionState{IsStreaming: s.IsStreaming(), MessageCount: s.ctx.count,
		AutoCompactionEnabled: s.sc.Compaction.Enabled, SessionID: s.sc.SessionID,
		AutoRetryEnabled: s.ctrl.AutoRetryEnabled(), IsRetrying: snap.Open, RetryAttempt: snap.Attempt, RetryState: snap.State}
}

// Prompt issues a prompt now. It returns the prompt's number and whether it
// was accepted; a rejected prompt gets a prompt_rejected line and, when
// respond is true, a failed response.
func (s *Session) Prompt(text, id string, respond bool) (n int, accepted bool) {
	s.prompts++
	n = s.prompts
	if s.Busy() {
		r := s.begin(trace.PromptRejected)
		r.Prompt, r.Error = n, ErrPromptWhileStreaming
		s.emit()
		if respond {
			s.response(id, "prompt", false, ErrPromptWhileStreaming, false)
			if s.variant.Session.DoubleRejectResponse {
				s.response(id, "prompt", true, "", false)
			}
		}
		return n, false
	}
	if respond {
		s.response(id, "prompt", true, "", false)
	}
	if s.variant.Session.CancelCompactionContinue {
		s.cancelCompactionContinue()
	}
	s.pending = append(s.pending, n)
	if s.variant.Session.PrePromptCompactionCheck {
		s.prePromptCompaction()
	}
	s.ctrl.OnPrompt()
	s.appendMessage(Message{Role: RoleUser})
	s.startRun(RunPrompt, n)
	return n, true
}

// Abort is the general abort: it cancels the retry chain, a pending
// compaction continue, and ends the LLM call in flight with an aborted reply.
func (s *Session) Abort() {
	s.ctrl.Abort()
	if s.variant.Session.CancelCompactionContinue {
		s.cancelCompactionContinue()
	}
	if s.inFlight && s.cur.calling {
		s.callGen++
		s.cur.calling = false
		s.reply(scenario.Turn{StopReason: policy.StopReasonAborted, ErrorMessage: AbortedMessage}, false)
	}
}

func (s *Session) cancelCompactionContinue() {
	if s.compWait {
		s.compWait = false
		s.compGen++
	}
}

func (s *Session) appendMessage(m Message) {
	m.At = s.sched.now
	s.ctx.add(m)
	if !s.streamOnly {
		s.context = append(s.context, m)
		s.history = append(s.history, m)
	}
}

func (s *Session) startRun(kind RunKind, prompt int) {
	r := s.begin(trace.AgentRun)
	if kind != RunPrompt {
		r.Run = trace.RunContinue
	}
	s.emit()
	s.inFlight = true
	s.cur = run{kind: kind, prompt: prompt}
	s.call()
}

func (s *Session) nextTurn() scenario.Turn {
	if s.turn < len(s.sc.Turns) {
		s.turn++
		return s.sc.Turns[s.turn-1]
	}
	s.turn++
	return scenario.Turn{StopReason: policy.StopReasonStop}
}

// call makes one LLM call of the current run: it takes the next turn and
// completes at once (durationMs 0) or as a scheduled event.
func (s *Session) call() {
	t := s.nextTurn()
	if t.Duration <= 0 {
		s.reply(t, true)
		return
	}
	s.callGen++
	gen := s.callGen
	s.cur.calling = true
	s.sched.In(t.Duration, func() {
		if gen == s.callGen && s.cur.calling {
			s.cur.calling = false
			s.reply(t, true)
		}
	})
}

func (s *Session) reply(t scenario.Turn, scripted bool) {
	m := policy.AssistantMessage{StopReason: t.StopReason, ErrorMessage: t.ErrorMessage, Usage: t.Usage}
	if scripted {
		s.lastTurn = t
	}
	s.appendMessage(Message{Role: RoleAssistant, Assistant: m})
	s.begin(trace.MessageEnd).Message = trace.Message{StopReason: m.StopReason, ErrorMessage: m.ErrorMessage}
	s.emit()
	s.cur.last, s.cur.hasLast = m, true
	s.ending = t.StopReason != policy.StopReasonToolUse
	s.ctrl.OnMessageEnd(m)
	s.ending = false
	if t.StopReason == policy.StopReasonToolUse {
		s.appendMessage(Message{Role: RoleToolResult})
		s.call()
		return
	}
	s.endRun()
}

func (s *Session) endRun() {
	r := s.cur
	s.inFlight = false
	s.begin(trace.AgentRunEnd)
	s.emit()
	// The original resolves a prompt released by the run's last reply only
	// after the run is over; one released by a mid-run toolUse at once.
	for _, p := range s.afterEnd {
		s.resolve(p)
	}
	s.afterEnd = s.afterEnd[:0]
	var last *policy.AssistantMessage
	if r.hasLast {
		last = &r.last
	}
	if !s.ctrl.OnAgentEnd(last) {
		s.compactionCheck(last, s.sched.now, true)
	}
	if r.kind == RunPrompt && r.prompt != 0 {
		s.promptRunEnded(r.prompt)
	}
}

// promptRunEnded is the original's prompt(): once its own run is over it
// waits for the retry promise it sees now, if any. (The sound variant
// resolves prompts in checkPrompts instead.)
func (s *Session) promptRunEnded(p int) {
	if s.variant.Session.PromptWaitsForRun {
		return
	}
	if s.ctrl.IsRetrying() {
		s.waiting = append(s.waiting, p)
		return
	}
	if s.aborting {
		s.deferred = append(s.deferred, p)
		return
	}
	s.resolve(p)
}

func (s *Session) resolve(p int) {
	for i, x := range s.pending {
		if x == p {
			s.pending = append(s.pending[:i], s.pending[i+1:]...)
			s.begin(trace.PromptResolved).Prompt = p
			s.emit()
			return
		}
	}
}

// prePromptCompaction is the original's compaction check on the last
// assistant message in the runtime context before each prompt (aborted
// replies included).
func (s *Session) prePromptCompaction() {
	if s.ctx.asst.ok {
		m := s.ctx.asst.msg.Assistant
		s.compactionCheck(&m, s.ctx.asst.msg.At, false)
	}
}

// compactionCheck is the overflow compaction hand-off stub. at is when the
// message was received: a message older than the latest compaction is not
// compacted again.
func (s *Session) compactionCheck(last *policy.AssistantMessage, at time.Duration, skipAborted bool) {
	if last == nil || !s.sc.Compaction.Enabled || (skipAborted && last.StopReason == policy.StopReasonAborted) {
		return
	}
	if !policy.IsContextOverflow(*last, s.sc.ContextWindow) || (s.compDone && at < s.compAt) {
		return
	}
	s.compDone, s.compAt = true, s.sched.now
	s.dropLastAssistant()
	s.begin(trace.AutoCompactionStart).Reason = "overflow"
	s.emit()
	r := s.begin(trace.AutoCompactionEnd)
	if !s.sc.Compaction.Succeed {
		r.CompactionEnd = trace.CompactionEnd{ErrorMessage: "Context overflow recovery failed: " + CompactionFailure}
		s.emit()
		return
	}
	r.CompactionEnd = trace.CompactionEnd{Result: true, WillRetry: true}
	s.emit()
	s.compGen++
	gen := s.compGen
	s.compWait = true
	s.sched.In(CompactionContinueDelay, func() {
		if gen != s.compGen || !s.compWait {
			return
		}
		s.compWait = false
		if err := s.canContinue(); err != nil {
			s.begin(trace.ContinueRejected).Error = err.Error()
			s.emit()
			return
		}
		s.startRun(RunCompaction, 0)
	})
}

func (s *Session) canContinue() error {
	switch {
	case s.inFlight:
		return errors.New(ErrContinueWhileStreaming)
	case s.ctx.count == 0:
		return errors.New(ErrContinueEmpty)
	case s.ctx.last == RoleAssistant:
		return errors.New(ErrContinueFromAssistant)
	}
	return nil
}

func (s *Session) dropLastAssistant() {
	if !s.ctx.dropLastAssistant() {
		return
	}
	if n := len(s.context); n > 0 && !s.streamOnly {
		s.context = s.context[:n-1]
	}
}

// contextSummary is what the session's rules read of the runtime context,
// in constant space: the number of messages, the role of the last one, and
// the last assistant message with its time. An assistant message always
// follows a user message or a tool result (a call starts from one, and a
// continue from an assistant message is rejected), and only a trailing
// assistant message is ever removed, so one level of memory is enough to
// undo a removal: the role before the last assistant and the assistant
// message before it.
type contextSummary struct {
	count      int
	last       Role // "" when empty
	beforeLast Role // the role before a trailing assistant message
	asst       lastAssistant
	prevAsst   lastAssistant // the one before asst, while asst is last
}

type lastAssistant struct {
	msg Message
	ok  bool
}

func (c *contextSummary) add(m Message) {
	if m.Role == RoleAssistant {
		c.beforeLast, c.prevAsst = c.last, c.asst
		c.asst = lastAssistant{m, true}
	}
	c.count++
	c.last = m.Role
}

// dropLastAssistant removes a trailing assistant message; it reports
// whether there was one.
func (c *contextSummary) dropLastAssistant() bool {
	if c.last != RoleAssistant {
		return false
	}
	c.count--
	c.last, c.asst = c.beforeLast, c.prevAsst
	c.beforeLast, c.prevAsst = "", lastAssistant{}
	return true
}

// checkPrompts resolves the prompts whose runs and chains are over. It runs
// after every queue event.
func (s *Session) checkPrompts() {
	if len(s.pending) == 0 || s.inFlight || s.ctrl.IsRetrying() {
		return
	}
	for _, p := range s.pending {
		s.begin(trace.PromptResolved).Prompt = p
		s.emit()
	}
	s.pending = s.pending[:0]
}

// agent adapts Session to policy.Agent.
type agent Session

func (a *agent) Continue(context.Context) error {
	s := (*Session)(a)
	if err := s.canContinue(); err != nil {
		s.begin(trace.ContinueRejected).Error = err.Error()
		s.emit()
		return err
	}
	s.startRun(RunRetry, 0)
	return nil
}

func (a *agent) DropLastAssistant() { (*Session)(a).dropLastAssistant() }

// auth adapts Session to policy.AuthStorage: it answers the switchModel of
// the turn whose error is being retried and writes the trace line.
type auth Session

func (a *auth) MarkUsageLimitReached(provider, sessionID string, opt policy.UsageLimitOptions) bool {
	s := (*Session)(a)
	ret := s.lastTurn.SwitchModel
	s.begin(trace.MarkUsageLimitReached).UsageLimit = trace.UsageLimit{Provider: provider, SessionID: sessionID,
		RetryAfterMs: opt.RetryAfterMs, HasRetryAfter: opt.HasRetryAfter, BaseURL: opt.BaseURL, Returns: ret}
	s.emit()
	return ret
}
