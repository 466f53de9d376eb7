package session

import (
	"errors"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/trace"
)

// Core steps one session of a variant. It holds no state of its own and is
// safe for concurrent use.
type Core struct {
	Variant *Variant
	Config  Config
	// Records, when not zero, is the set of trace record types the core
	// writes (bit 1<<Type); the others are left out, and nothing else
	// changes. Zero writes every record.
	Records uint32
	// Transitions, when not nil, is the set of the retry table's rule
	// indexes (retry.Decision.RuleIndex) whose transition records the core
	// writes; a rule outside it (or past its end) writes none. Nil writes
	// every rule's. Like Records it only leaves records out.
	Transitions []bool
}

// RecordMask returns the Records mask of types.
func RecordMask(types ...trace.Type) uint32 {
	var m uint32
	for _, t := range types {
		m |= 1 << t
	}
	return m
}

// Step applies ev to s under the policy p (of this moment; its Enabled is
// retry.enabled) and returns the next state and fx with the step's effects
// appended, in order.
func (c *Core) Step(s State, p *policy.Policy, ev *Event, fx []Effect) (State, []Effect) {
	b := Buffer{Effects: fx}
	c.Apply(&s, p, ev, &b)
	return s, b.Effects
}

// Buffer is Apply's reusable output: the effects, and scratch space, so
// that once it has grown a step allocates nothing. The records of its
// effects are only valid until the next Apply, and their fields outside
// their type's payload are unspecified (see trace.Record.Clean).
type Buffer struct {
	Effects []Effect
	d       retry.Decision
	st      stepper
	// pol is set_auto_retry's new policy, which the rest of its step
	// reads: here, not on the heap, where every such step would put it
	// (the explorer steps millions).
	pol policy.Policy
}

// Apply is Step in place: it updates *s and appends the effects to
// b.Effects, which it also returns.
func (c *Core) Apply(s *State, p *policy.Policy, ev *Event, b *Buffer) []Effect {
	// The stepper lives in the buffer: as the applier of the
	// decisions it is passed as an interface, and a local would escape.
	st := &b.st
	mask := c.Records
	if mask == 0 {
		mask = ^uint32(0)
	}
	st.c, st.r, st.pol, st.s, st.b, st.at, st.mask = c, &c.Variant.Rules, p, s, b, ev, mask
	// The rest of the stepper (ending, aborting, afterEnd, deferred, fx)
	// is zero: every step leaves it so (TestStepLeavesNoScratch).
	switch ev.Kind {
	case Reply:
		if ev.Call != 0 && ev.Call == st.s.Run.Call && st.s.Run.Kind != NoRun {
			st.s.Run.Call = 0
			st.reply(&ev.Reply, ev.Switch)
		}
	case TimerFired:
		st.timer(ev.Timer)
	case Settle:
		st.settle()
	default:
		// A command: its row's rule (commandOf).
		if int(ev.Kind) < len(commandOf) && commandOf[ev.Kind] != nil {
			commandOf[ev.Kind].step(st, ev)
		}
	}
	return b.Effects
}

// stepper is one step in progress.
type stepper struct {
	c   *Core
	r   *Rules
	pol *policy.Policy
	s   *State
	b   *Buffer
	at  *Event
	// The original's order of prompt resolutions inside one step: a
	// prompt released by the run's last reply resolves after agent_run_end
	// (ending, afterEnd); one released while an abort is answered and no
	// run is in flight resolves after the abort's response (aborting,
	// deferred).
	ending, aborting   bool
	afterEnd, deferred int
	fx                 decisionFx // the decision being applied
	mask               uint32     // the record types written (Core.Records; zero: all)
}

// effect appends an effect of kind k and returns it. The slot is reused
// as it is: the caller sets every field its kind reads (an Effect is too
// large to clear each time).
func (st *stepper) effect(k EffectKind) *Effect {
	b := st.b
	n := len(b.Effects)
	if n < cap(b.Effects) {
		b.Effects = b.Effects[:n+1] // the length alone is written
	} else {
		b.Effects = append(b.Effects, Effect{})
	}
	e := &b.Effects[n]
	e.Kind = k
	return e
}

// record appends an effect of kind k carrying a record of type typ and
// returns the record, whose payload the caller sets in full, or nil when
// the type is not recorded.
// (It and emit are small enough to inline: a type the core does not
// record costs a test, not a call.)
func (st *stepper) record(k EffectKind, typ trace.Type) *trace.Record {
	if st.mask&(1<<typ) == 0 {
		return nil
	}
	return st.add(k, typ)
}

func (st *stepper) emit(typ trace.Type) *trace.Record {
	if st.mask&(1<<typ) == 0 {
		return nil
	}
	return st.add(Emit, typ)
}

// add appends an effect of kind k carrying a record of type typ, now. (Not
// inlined, so that emit and record are.)
//
//go:noinline
func (st *stepper) add(k EffectKind, typ trace.Type) *trace.Record {
	r := &st.effect(k).Record
	r.T, r.Type = st.at.At, typ
	return r
}

func (st *stepper) nextID() uint64 {
	st.s.LastID++
	return st.s.LastID
}

func (st *stepper) arm(k TimerKind, d time.Duration) uint64 {
	id := st.nextID()
	st.effect(Arm).Timer = Timer{Kind: k, ID: id, Delay: d}
	return id
}

func (st *stepper) cancel(k TimerKind, id uint64) {
	st.effect(Cancel).Timer = Timer{Kind: k, ID: id}
}

// respond answers the command being stepped, by its id and its row's
// name; state adds get_state's data.
func (st *stepper) respond(ok bool, errText string, state bool) {
	r := st.record(Answer, trace.Response)
	if r == nil {
		return
	}
	r.Response = trace.ResponseRecord{ID: st.at.ID, Command: commandOf[st.at.Kind].Name, Success: ok, HasState: state}
	if state {
		r.Response.State = st.sessionState()
	}
	if !ok {
		r.Response.Error = errText
	}
}

func (st *stepper) sessionState() trace.SessionState {
	s := st.s
	return trace.SessionState{IsStreaming: s.IsStreaming(), MessageCount: s.Context.Count,
		AutoCompactionEnabled: st.c.Config.CompactionEnabled, SessionID: st.c.Config.SessionID,
		AutoRetryEnabled: st.pol.Enabled(), IsRetrying: s.Retry.Open, RetryAttempt: s.Retry.Attempt, RetryState: s.Retry.State,
		NextRetryAt: float64(s.RetryAt) / float64(time.Millisecond), HasNextRetryAt: s.HasRetryAt, Profile: st.c.Config.Profile,
		Model: st.modelInfo(), ThinkingLevel: ThinkingLevel, IsCompacting: st.isCompacting(),
		SteeringMode: QueueMode, FollowUpMode: QueueMode, InterruptMode: InterruptMode}
}

// modelInfo is get_state's model: the model in use, none when its id is
// not known.
func (st *stepper) modelInfo() trace.ModelInfo {
	id := st.model()
	if id == "" {
		return trace.ModelInfo{}
	}
	p := st.c.Config.Provider
	return trace.ModelInfo{ID: id, Provider: p, API: ProviderAPI(p)}
}

// isCompacting is get_state's isCompacting: a successful overflow
// compaction's continue is due (sound: armed and not cancelled; original:
// less than CompactionContinueDelay ago, since nothing cancels it).
func (st *stepper) isCompacting() bool {
	s := st.s
	if st.r.CompactionContinue == ContinueCancelledByPromptOrAbort {
		return s.CompTimer != 0
	}
	return s.CompDone && st.c.Config.CompactionSucceeds && st.at.At < s.CompAt+CompactionContinueDelay
}

// model is the id of the model in use.
func (st *stepper) model() string { return st.pol.ModelName(st.c.Config.Model, st.s.Retry.Model) }

// prompt issues a prompt: numbered, then accepted (its run starts) or
// rejected.
func (st *stepper) prompt(respond bool) {
	s := st.s
	s.Prompts++
	n := s.Prompts
	if s.Busy(st.r) {
		if r := st.emit(trace.PromptRejected); r != nil {
			r.Prompt, r.Error = n, ErrPromptWhileStreaming
		}
		if respond {
			st.respond(false, ErrPromptWhileStreaming, false)
			if st.r.RejectedPrompt == FailureThenSuccess {
				st.respond(true, "", false)
			}
		}
		return
	}
	if respond {
		st.respond(true, "", false)
	}
	st.cancelCompactionContinue()
	s.Pending, s.Waiting = n, false
	if st.r.PrePromptCompaction == CheckLastAssistant && s.Context.HasAssistant {
		m := s.Context.Assistant
		st.compactionCheck(&m.Reply, true, m.At, false)
	}
	st.decideCommon(retry.InputPrompt)
	st.append(RoleUser, nil, 0)
	st.startRun(PromptRun, n)
}

// abortCommand is the abort command: the original's abort() awaits the
// agent going idle before it answers.
func (st *stepper) abortCommand(ev *Event) {
	st.aborting = true
	st.decide(retry.InputAbort, nil)
	st.cancelCompactionContinue()
	if st.s.Run.Kind != NoRun && st.s.Run.Call != 0 {
		st.s.Run.Call = 0
		st.reply(&ev.Reply, false)
	}
	st.respond(true, "", false)
	st.aborting = false
	if p := st.deferred; p != 0 {
		st.deferred = 0
		st.resolve(p)
	}
}

func (st *stepper) cancelCompactionContinue() {
	if st.r.CompactionContinue == ContinueCancelledByPromptOrAbort && st.s.CompTimer != 0 {
		st.cancel(CompactionTimer, st.s.CompTimer)
		st.s.CompTimer = 0
	}
}

// startRun starts a run and its first model call: the step's last effect.
func (st *stepper) startRun(kind RunKind, prompt int) {
	if r := st.emit(trace.AgentRun); r != nil {
		r.Run, r.Model = trace.RunPrompt, st.model()
		if kind != PromptRun {
			r.Run = trace.RunContinue
		}
	}
	st.s.Run = Run{Kind: kind, Prompt: prompt}
	st.call()
}

func (st *stepper) call() {
	id := st.nextID()
	st.s.Run.Call = id
	st.effect(Call).Call = id
}

// reply handles the reply of the run's call: message_end, then a tool use
// calls again, anything else ends the run.
func (st *stepper) reply(o *classify.Outcome, switched bool) {
	st.append(RoleAssistant, o, st.at.At)
	if r := st.emit(trace.MessageEnd); r != nil {
		r.Message = trace.Message{StopReason: o.StopReason, ErrorMessage: o.Message, Input: o.InputTokens, CacheRead: o.CacheReadTokens}
		r.Model = st.model()
	}
	toolUse := o.StopReason == policy.StopReasonToolUse
	if o.IsSuccess() {
		st.ending = !toolUse
		st.decideCommon(retry.InputSuccess)
		st.ending = false
	}
	if toolUse {
		st.append(RoleToolResult, nil, 0)
		st.call()
		return
	}
	st.endRun(o, switched)
}

// append adds a message of role r (an assistant message: reply o, received
// at at) to the runtime context and, under
// RebuildFromHistory, to the session history.
func (st *stepper) append(r Role, o *classify.Outcome, at time.Duration) {
	st.s.Context.push(r, o, at)
	if st.r.CompactionContext == RebuildFromHistory {
		st.s.History.push(r, o, at)
	}
}

// endRun ends the run in flight with its last reply o (it came with auth
// storage's answer switched): agent_run_end, then agent_end for the retry
// machine, then the compaction hand-off and the prompt's resolution. o is
// the step's event's reply, which the step does not change. (A run always
// ends on a reply here: the retry machine's no_message input is the
// Controller's, for an agent_end without one.)
func (st *stepper) endRun(o *classify.Outcome, switched bool) {
	s := st.s
	kind, prompt := s.Run.Kind, s.Run.Prompt
	s.Run = Run{}
	st.emit(trace.AgentRunEnd)
	if p := st.afterEnd; p != 0 {
		st.afterEnd = 0
		st.resolve(p)
	}
	retried := false
	if in, ok := retry.EndInput(o); ok {
		retried = st.decideAsked(in, o, switched)
	}
	if !retried && o.Overflow { // (compactionCheck does nothing without an overflow)
		st.compactionCheck(o, true, st.at.At, true)
	}
	if kind == PromptRun && prompt != 0 {
		st.promptRunEnded(prompt)
	}
}

// promptRunEnded is the original's prompt(): once its own run is over it
// waits for the retry promise it sees now, if any.
func (st *stepper) promptRunEnded(p int) {
	if st.r.Resolution != ResolveOnRetryPromise {
		return
	}
	switch {
	case st.s.Retry.Open:
		st.s.Waiting = true
	case st.aborting:
		st.deferred = p
	default:
		st.resolve(p)
	}
}

func (st *stepper) resolve(p int) {
	if st.s.Pending != p || p == 0 {
		return
	}
	st.s.Pending, st.s.Waiting = 0, false
	if r := st.record(Resolve, trace.PromptResolved); r != nil {
		r.Prompt = p
	}
}

// settle resolves the pending prompt once no run is in flight and the
// retry machine is at rest (sound).
func (st *stepper) settle() {
	if st.c.Settles(st.s) {
		st.resolve(st.s.Pending)
	}
}

// Settles reports whether a Settle event would change s: a prompt is
// pending, no run is in flight and the retry machine is at rest (sound).
// When it would not, Apply of a Settle does nothing and a shell may skip
// it.
func (c *Core) Settles(s *State) bool {
	return s.Run.Kind == NoRun && !s.Retry.Open && s.Pending != 0 && c.Variant.Rules.Resolution == ResolveWhenSettled
}

// compactionCheck is the overflow compaction hand-off: a reply that
// overflows leaves the context and a continue follows. at is when the
// message was received: a message older than the latest compaction is not
// compacted again.
func (st *stepper) compactionCheck(o *classify.Outcome, ok bool, at time.Duration, skipAborted bool) {
	s := st.s
	if !ok || !st.c.Config.CompactionEnabled || (skipAborted && o.StopReason == policy.StopReasonAborted) {
		return
	}
	if !o.Overflow || (s.CompDone && at < s.CompAt) {
		return
	}
	s.Context.dropLastAssistant()
	if r := st.emit(trace.AutoCompactionStart); r != nil {
		r.Reason = "overflow"
	}
	r := st.emit(trace.AutoCompactionEnd)
	rebuild := st.r.CompactionContext == RebuildFromHistory
	if rebuild && s.History.Count == 0 {
		// Nothing since the previous compaction: nothing to compact.
		if r != nil {
			r.CompactionEnd = trace.CompactionEnd{}
		}
		return
	}
	s.CompDone, s.CompAt = true, st.at.At
	if !st.c.Config.CompactionSucceeds {
		if r != nil {
			r.CompactionEnd = trace.CompactionEnd{ErrorMessage: "Context overflow recovery failed: " + CompactionFailure}
		}
		return
	}
	if r != nil {
		r.CompactionEnd = trace.CompactionEnd{Result: true, WillRetry: true}
	}
	if rebuild {
		st.rebuildContext()
	}
	id := st.arm(CompactionTimer, CompactionContinueDelay)
	if st.r.CompactionContinue == ContinueCancelledByPromptOrAbort {
		if s.CompTimer != 0 {
			st.cancel(CompactionTimer, s.CompTimer)
		}
		s.CompTimer = id
	}
}

// rebuildContext is RebuildFromHistory after a successful compaction: the
// context becomes the summary and the history since the previous
// compaction, a trailing assistant error dropped; the history starts
// again after the new compaction.
func (st *stepper) rebuildContext() {
	s := st.s
	s.Context = s.History
	s.Context.Count++ // the compaction summary, first
	if s.Context.Last == RoleAssistant && s.Context.BeforeLast == RoleNone {
		s.Context.BeforeLast = RoleCompactionSummary // a history of one message
	}
	if s.Context.Last == RoleAssistant && s.Context.Assistant.Reply.StopReason == policy.StopReasonError {
		s.Context.dropLastAssistant()
	}
	s.History = Context{}
}

// The continue's rejections, as errors (made once).
var (
	errContinueWhileStreaming = errors.New(ErrContinueWhileStreaming)
	errContinueEmpty          = errors.New(ErrContinueEmpty)
	errContinueFromAssistant  = errors.New(ErrContinueFromAssistant)
)

// canContinue is Agent.continue()'s check.
func (st *stepper) canContinue() error {
	switch {
	case st.s.Run.Kind != NoRun:
		return errContinueWhileStreaming
	case st.s.Context.Count == 0:
		return errContinueEmpty
	case st.s.Context.Last == RoleAssistant:
		return errContinueFromAssistant
	}
	return nil
}

// continueRun starts a continue run, or writes why it cannot.
func (st *stepper) continueRun(kind RunKind) error {
	if err := st.canContinue(); err != nil {
		if r := st.emit(trace.ContinueRejected); r != nil {
			r.Error = err.Error()
		}
		return err
	}
	st.startRun(kind, 0)
	return nil
}

func (st *stepper) timer(t Timer) {
	switch t.Kind {
	case BackoffTimer:
		st.decide(retry.InputElapsed, nil)
	case ContinueTimer:
		st.continueAgent()
	case CompactionTimer:
		if st.r.CompactionContinue == ContinueCancelledByPromptOrAbort {
			if t.ID != st.s.CompTimer {
				return // cancelled
			}
			st.s.CompTimer = 0
		}
		_ = st.continueRun(CompactionRun)
	}
}

// continueAgent is the retry machine's continue: a continue that cannot
// start is an input of its own.
func (st *stepper) continueAgent() {
	if err := st.continueRun(RetryRun); err != nil {
		st.decide(retry.InputContinueFailed, &classify.Outcome{Message: err.Error()})
	}
}

func (st *stepper) decide(in retry.Input, o *classify.Outcome) { st.decideAsked(in, o, false) }

// decideCommon is decide for the inputs of every turn, the prompt and
// a success, which a table often ignores (the prompt at idle; in the sound
// table a success at rest): a decision policy.Variant.Ignores is not
// taken, as it would change nothing and have no effect.
func (st *stepper) decideCommon(in retry.Input) {
	if st.c.Variant.Retry.Ignores(st.s.Retry.State, in) {
		st.settled()
		return
	}
	st.decideAsked(in, nil, false)
}

// decideAsked takes the retry machine's decision on in and performs its
// effects; switched is auth storage's answer should the decision ask it.
// It reports whether a retry was scheduled.
func (st *stepper) decideAsked(in retry.Input, o *classify.Outcome, switched bool) bool {
	s := st.s
	d := &st.b.d
	// The answer is known beforehand (the event carries it): the decision
	// is final at once, s.Retry moved to its next snapshot in place.
	st.c.Variant.Retry.DecideAnswered(d, &s.Retry, in, o, st.pol, switched)
	if t := st.c.Transitions; (t == nil || uint(d.RuleIndex) < uint(len(t)) && t[d.RuleIndex]) && d.Fired() {
		if r := st.emit(trace.Transition); r != nil {
			e := &r.Edge
			e.From, e.Event, e.To, e.Input, e.Rule = string(d.From), d.Rule.Event, string(d.Rule.To), in, d.RuleIndex
		}
	}
	retried := d.Retries()
	// The effects, through the one loop over them (retry.Decision.Apply): a
	// nested decision (a release may resolve prompts) keeps its own.
	saved := st.fx
	st.fx = 0
	if switched {
		st.fx = fxSwitched
	}
	d.Apply(st)
	left := st.fx
	st.fx = saved
	st.settled()
	if left&fxLater != 0 {
		st.arm(ContinueTimer, 0)
	}
	if left&fxCont != 0 {
		st.continueAgent()
	}
	return retried
}

// settled is the end of a decision: no backoff wait is due outside
// backoff.
func (st *stepper) settled() {
	if s := st.s; s.Retry.State != policy.StateBackoff {
		s.HasRetryAt = false
	}
}

// release is the retry promise resolved: the original's waiting prompt
// resolves, in the original's order.
func (st *stepper) release() {
	s := st.s
	if st.r.Resolution != ResolveOnRetryPromise || !s.Waiting {
		return
	}
	p := s.Pending
	s.Waiting = false
	switch {
	case st.ending:
		st.afterEnd = p
	case st.aborting && s.Run.Kind == NoRun:
		st.deferred = p
	default:
		st.resolve(p)
	}
}

// decisionFx is what the effects of the decision being applied leave for
// after them.
type decisionFx uint8 // a set of the flags below: one byte to save and restore around a nested decision

const (
	fxSwitched decisionFx = 1 << iota // auth storage's answer
	fxCont                            // continue the agent now
	fxLater                           // continue the agent from a 0 ms timer
)

// The stepper is the applier of the retry machine's decisions (retry.Decision.Apply).

// AskAuth writes mark_usage_limit_reached with auth storage's answer.
func (st *stepper) AskAuth(d *retry.Decision, _ *retry.Effect) {
	if r := st.emit(trace.MarkUsageLimitReached); r != nil {
		cfg := &st.c.Config
		ms, has := d.RetryAfter()
		r.UsageLimit = trace.UsageLimit{Provider: cfg.Provider, SessionID: cfg.SessionID,
			RetryAfterMs: ms, HasRetryAfter: has, BaseURL: cfg.BaseURL, Returns: st.fx&fxSwitched != 0}
	}
}

// EmitStart writes auto_retry_start.
func (st *stepper) EmitStart(d *retry.Decision, e *retry.Effect) {
	if r := st.emit(trace.AutoRetryStart); r != nil {
		r.Start = d.Start(e)
	}
}

// Fallback writes retry_fallback.
func (st *stepper) Fallback(d *retry.Decision, e *retry.Effect) {
	if r := st.emit(trace.RetryFallback); r != nil {
		r.Fallback = d.Fallback(e, st.c.Config.Model)
	}
}

// DropError drops the last assistant message from the context.
func (st *stepper) DropError() { st.s.Context.dropLastAssistant() }

// ArmTimer arms the backoff timer, the cancellable one.
func (st *stepper) ArmTimer(_ *retry.Decision, e *retry.Effect) {
	s := st.s
	s.Ctl = st.arm(BackoffTimer, e.Delay)
	s.RetryAt, s.HasRetryAt = st.at.At+e.Delay, true
}

// CancelTimer cancels the cancellable backoff timer, if any.
func (st *stepper) CancelTimer() {
	if s := st.s; s.Ctl != 0 {
		st.cancel(BackoffTimer, s.Ctl)
		s.Ctl = 0
	}
}

// Uncontrol: no wait is cancellable any more.
func (st *stepper) Uncontrol() { st.s.Ctl = 0 }

// EmitEnd writes auto_retry_end.
func (st *stepper) EmitEnd(d *retry.Decision, e *retry.Effect) {
	if r := st.emit(trace.AutoRetryEnd); r != nil {
		r.End = d.End(e)
	}
}

// Release releases the chain's waiters.
func (st *stepper) Release() { st.release() }

// Continue continues the agent once the effects are applied.
func (st *stepper) Continue(later bool) {
	if later {
		st.fx |= fxLater
	} else {
		st.fx |= fxCont
	}
}
