// Package explore is an exhaustive explorer of the retry policy inside its
// session: a pure abstract model of sim's session loop, stepped breadth-first
// over every enabled input, checking the invariants of SPEC.md at every step
// and at quiescence. Retry decisions are never reimplemented: every input of
// the retry machine goes through policy.Variant.Decide and its effects are
// applied abstractly; session differences are read from Variant.Session.
//
// See SPEC-explorer.md for the state tuple, the alphabet and the invariants.
package explore

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy"
)

// Input is one input of the explorer's alphabet. The order is fixed: it is
// the tie-break order of shortest counterexamples.
type Input uint8

// The alphabet. Replies complete the LLM call in flight; actions are client
// commands; FireTimer fires the pending timer due first.
const (
	ReplyRetryable Input = iota // {stopReason: error, errorMessage: "529 overloaded_error"}
	ReplyOverflow               // {stopReason: error, errorMessage: "prompt is too long: ..."}
	ReplyFatal                  // {stopReason: error, errorMessage: "invalid api key"}
	ReplyAborted                // {stopReason: aborted}
	ReplyStop                   // {stopReason: stop}
	ReplyToolUse                // {stopReason: toolUse}: the run calls again
	ActAbortRetry               // abort_retry
	ActAbort                    // abort
	ActEnable                   // set_auto_retry true (only while disabled)
	ActDisable                  // set_auto_retry false (only while enabled)
	ActPrompt                   // prompt (accepted or rejected)
	FireTimer                   // the next due timer fires
	// ReplyEmpty ends the run without any assistant message. No scenario
	// can express it (every run makes a call); only Options.Extended
	// enables it.
	ReplyEmpty
	numInputs
)

var inputNames = [numInputs]string{
	"reply:retryable", "reply:overflow", "reply:fatal", "reply:aborted", "reply:stop", "reply:toolUse",
	"abort_retry", "abort", "set_auto_retry:true", "set_auto_retry:false", "prompt", "fire_timer",
	"reply:empty",
}

// String returns the input's name, e.g. "reply:retryable".
func (i Input) String() string {
	if i >= numInputs {
		return fmt.Sprintf("Input(%d)", int(i))
	}
	return inputNames[i]
}

// Messages of the error replies of the alphabet.
const (
	MsgRetryable = "529 overloaded_error"
	MsgOverflow  = "prompt is too long: 213462 tokens > 200000 maximum"
	MsgFatal     = "invalid api key"
	// Texts of sim's session (kept equal to sim's constants by a test).
	msgAborted           = "Request was aborted"
	errContinueStreaming = "Agent is already processing. Wait for completion before continuing."
	errContinueEmpty     = "No messages to continue from"
	errContinueAssistant = "Cannot continue from message role: assistant"
	compactionDelayMs    = 100
	compactionRem        = 1
	baseDelay            = 2000 * time.Millisecond
	maxTimers            = 4
	// maxWaits bounds the backoff waits running at once (the original can
	// run several; SPEC.md §9.1 describes two). A step that would arm a
	// third is pruned and counted in Result.Pruned.
	maxWaits             = 2
	defaultEpochMs int64 = 1771200000000
)

var epoch = time.UnixMilli(defaultEpochMs).UTC()

// RunKind is the kind of the agent run in flight.
type RunKind uint8

// Run kinds (RunNone: no run in flight).
const (
	RunNone RunKind = iota
	RunPrompt
	RunRetry
	RunCompaction
)

// String returns the run kind's name.
func (k RunKind) String() string {
	return [...]string{"none", "prompt", "retry", "compaction"}[k]
}

// TimerKind is what a pending timer does when it fires.
type TimerKind uint8

// Timer kinds.
const (
	TimerBackoff    TimerKind = iota // a live backoff wait (inert ones are dropped)
	TimerContinue                    // the original's 0 ms continue after a wait
	TimerCompaction                  // the compaction continue, 100 ms after compaction
)

// String returns the timer kind's name.
func (k TimerKind) String() string {
	return [...]string{"backoff", "continue0", "compaction"}[k]
}

// Timer is a pending timer. Rem is its due time relative to the abstract
// now, in ms; actions take no abstract time, only firing a backoff wait
// advances it. The compaction continue's 100 ms is abstracted as an
// infinitesimal compactionRem: shorter than any remaining wait, and firing it
// advances no abstract time (so repeated compaction cycles during one wait
// do not make the space infinite). Timers are kept ordered by (Rem, arming
// order).
type Timer struct {
	Kind TimerKind
	Ctl  bool  // backoff: the cancellable wait (the Controller's abort controller)
	Rem  int64 // ms until due
	// Late: armed by an action (a client command or a reply), which comes
	// an instant after the last timer fired; a timer armed while a timer
	// fires is due before a Late one with the same Rem.
	Late bool
}

// State is the explorer's abstract state: finite, comparable.
type State struct {
	Snap    policy.Snapshot // retry machine: state, attempt, chain open, waits, cancellable
	Enabled bool            // retry.enabled
	Started bool            // a prompt was accepted (the runtime context is not empty)
	Run     RunKind         // the run in flight (its LLM call is in flight too)
	RunMsg  bool            // the run has an assistant message (tracked only when Extended)
	CtxAsst bool            // the runtime context ends with an assistant message
	Pending bool            // a prompt is unresolved (never more than one)
	Waiting bool            // original: that prompt waits on the retry promise
	// The chain as the observations show it (auto_retry_start/end).
	ChainOpen    bool
	ChainAttempt int16
	NT           uint8
	T            [maxTimers]Timer
}

// Quiescent reports whether nothing is in flight and no timer is pending.
func (s *State) Quiescent() bool { return s.NT == 0 && s.Run == RunNone }

// String renders the abstract state compactly.
func (s State) String() string {
	t := ""
	for i := 0; i < int(s.NT); i++ {
		c := ""
		if s.T[i].Ctl {
			c = "*"
		}
		t += fmt.Sprintf(" %s%s@%d", s.T[i].Kind, c, s.T[i].Rem)
	}
	return fmt.Sprintf("{%s attempt=%d open=%t armed=%d ctl=%t enabled=%t run=%s ctxAsst=%t pending=%t waiting=%t chain=%t/%d timers=[%s]}",
		s.Snap.State, s.Snap.Attempt, s.Snap.Open, s.Snap.Armed, s.Snap.Controlled, s.Enabled, s.Run, s.CtxAsst,
		s.Pending, s.Waiting, s.ChainOpen, s.ChainAttempt, t)
}

// ObsKind is the kind of one observation of a step.
type ObsKind uint8

// Observation kinds, in the order the session writes them.
const (
	ObsTransition       ObsKind = iota // a non-ignored rule fired (Edge, Rule)
	ObsStart                           // auto_retry_start (Attempt)
	ObsEnd                             // auto_retry_end (Success, Attempt)
	ObsResolved                        // prompt_resolved (the pending prompt)
	ObsAccepted                        // a prompt was accepted
	ObsRejected                        // prompt_rejected
	ObsRun                             // agent_run (Run)
	ObsCall                            // an LLM call started (takes the next turn)
	ObsContinueRejected                // continue_rejected
	ObsCompaction                      // auto_compaction_start
	ObsDecide                          // every Decide, ignored rules included (Rule, From)
)

// Obs is one observation.
type Obs struct {
	Kind    ObsKind
	Attempt int
	Success bool
	Run     RunKind
	Input   policy.Input
	From    policy.State
	Edge    fsm.Edge
	Rule    *policy.Rule
}

// model steps abstract states. It is not safe for concurrent use; the BFS
// reuses one.
type model struct {
	v        *policy.Variant
	set      policy.Settings
	extended bool
	obs      []Obs
	// lean: record in obs only the retry events (ObsStart, ObsEnd), which
	// is all the explorer's checks read; replays need every observation.
	lean bool
	// units: the (rule, from-state) units of the Decides of this step, as
	// indexes rule*len(policy.States)+Index(from) (Result.Reached).
	units    []int
	overflow bool // a step needed more than maxTimers timers: pruned
	// firing: the step fires a timer (timers armed now are not Late).
	firing bool
	// endNonZero: an auto_retry_end left a non-zero counter in this step.
	endNonZero bool
	// Replay bookkeeping (track): the real due time of each timer, parallel
	// to State.T, and the real now in ms.
	track bool
	now   int64
	dues  [maxTimers]int64
	bad   string // a replay-time inconsistency
	// decisions memoises Decide (see decision). Decide is pure and, within
	// one model, depends only on the snapshot, the input, the message and
	// the enabled setting (maxRetries, the base delay and now are fixed), of
	// which only a few hundred combinations occur, while a large
	// exploration calls it millions of times.
	decisions decisionMemo
	// The current blocks the memo's decisions and effects are stored in.
	decisionBlock []decision
	effectBlock   []policy.Effect
	// replies: the classification of each reply (policy's regexes), which
	// depends on the reply only.
	replies [numReplies]replyClass
}

// decision is a memoised Decide result (policy.Decision holds room for 8
// effects; this keeps only those there are) with what the explorer derives
// from it.
type decision struct {
	Rule    *policy.Rule
	Edge    fsm.Edge
	Next    policy.Snapshot
	effects []policy.Effect
	unit    int  // rule*len(policy.States)+Index(from); -1 without a rule
	retry   bool // the rule's event is "retry"
}

// msgID names one of the messages Decide can be given: each input class
// of the alphabet carries a fixed message, so a small id stands for it in
// the Decide memo key.
type msgID uint8

const (
	msgNone msgID = iota
	msgRetryable
	msgOverflow
	msgFatal
	msgAbortedReply
	msgContinueStreaming
	msgContinueEmpty
	msgContinueAssistant
	numMsgs
)

var messages = [numMsgs]string{"", MsgRetryable, MsgOverflow, MsgFatal, msgAborted,
	errContinueStreaming, errContinueEmpty, errContinueAssistant}

// replyKind is one reply that can end a call: the six reply inputs, the
// aborted reply of the abort command, and no reply at all (ReplyEmpty).
type replyKind uint8

const (
	replyAbortCmd replyKind = replyKind(ReplyToolUse) + 1 + iota
	replyNone
	numReplies
)

// replyClass is what the session derives from a reply through policy.
type replyClass struct {
	stop    policy.StopReason
	msg     msgID
	success bool // AssistantMessage.IsSuccess: message_end feeds InputSuccess
	endIn   policy.Input
	endOK   bool // AgentEndInput's ok
	// compact: not retried, it is handed to compaction (an overflow that
	// is not an aborted reply).
	compact bool
}

func newModel(v *policy.Variant, maxRetries int, extended bool) *model {
	m := &model{v: v, set: policy.Settings{Enabled: true, MaxRetries: maxRetries, BaseDelay: baseDelay}, extended: extended}
	type reply struct {
		stop policy.StopReason
		msg  msgID
	}
	rs := [numReplies]reply{
		ReplyRetryable: {policy.StopReasonError, msgRetryable},
		ReplyOverflow:  {policy.StopReasonError, msgOverflow},
		ReplyFatal:     {policy.StopReasonError, msgFatal},
		ReplyAborted:   {policy.StopReasonAborted, msgNone},
		ReplyStop:      {policy.StopReasonStop, msgNone},
		ReplyToolUse:   {policy.StopReasonToolUse, msgNone},
		replyAbortCmd:  {policy.StopReasonAborted, msgAbortedReply},
	}
	for k, r := range rs {
		c := &m.replies[k]
		if replyKind(k) == replyNone { // endRun's last == nil
			c.endIn, c.endOK = policy.AgentEndInput(nil, 0)
			continue
		}
		am := policy.AssistantMessage{StopReason: r.stop, ErrorMessage: messages[r.msg]}
		c.stop, c.msg = r.stop, r.msg
		c.success = am.IsSuccess()
		c.endIn, c.endOK = policy.AgentEndInput(&am, 0)
		c.compact = am.StopReason != policy.StopReasonAborted && policy.IsContextOverflow(am, 0)
	}
	return m
}

// initial is the session before anything happened.
func initial() State { return State{Snap: policy.Snapshot{State: policy.StateIdle}, Enabled: true} }

// enabled reports whether input in can happen in s.
func (m *model) enabled(s *State, in Input) bool {
	if s.NT > 0 && s.T[0].Rem == 0 {
		return in == FireTimer // a due timer fires before anything else
	}
	switch in {
	case ReplyRetryable, ReplyOverflow, ReplyFatal, ReplyAborted, ReplyStop, ReplyToolUse:
		return s.Run != RunNone
	case ReplyEmpty:
		return m.extended && s.Run != RunNone && !s.RunMsg
	case ActEnable:
		return !s.Enabled
	case ActDisable:
		return s.Enabled
	case FireTimer:
		return s.NT > 0
	case ActAbortRetry, ActAbort, ActPrompt:
		return true
	}
	return false
}

// step applies in to s (which must enable it), records the observations in
// m.obs and returns the next state.
func (m *model) step(s State, in Input) State {
	m.apply(&s, in)
	return s
}

// apply is step in place (the explorer's hot path: a State is 160 bytes).
func (m *model) apply(s *State, in Input) {
	m.obs = m.obs[:0]
	m.units = m.units[:0]
	m.overflow, m.endNonZero = false, false
	m.firing = in == FireTimer
	switch in {
	case ReplyRetryable, ReplyOverflow, ReplyFatal, ReplyAborted, ReplyStop, ReplyToolUse:
		m.reply(s, replyKind(in))
	case ReplyEmpty:
		m.endRun(s, replyNone)
	case ActAbortRetry:
		m.decide(s, policy.InputAbortRetry, msgNone)
	case ActAbort:
		m.decide(s, policy.InputAbort, msgNone)
		if m.v.Session.CancelCompactionContinue {
			m.dropTimer(s, TimerCompaction)
		}
		if s.Run != RunNone {
			m.reply(s, replyAbortCmd)
		}
	case ActEnable:
		s.Enabled = true
	case ActDisable:
		s.Enabled = false
	case ActPrompt:
		m.prompt(s)
	case FireTimer:
		m.fire(s)
	}
	// sim's AfterEach (sound): resolve the prompt once its runs and chains are over.
	if m.v.Session.PromptWaitsForRun && s.Pending && s.Run == RunNone && !s.Snap.Open {
		m.resolve(s)
	}
}

// decide runs the variant's pure decision and applies its effects the way
// policy.Controller does, abstractly.
func (m *model) decide(s *State, in policy.Input, msg msgID) *decision {
	d := m.decision(s.Snap, in, msg, s.Enabled)
	if d.unit >= 0 {
		m.units = append(m.units, d.unit)
	}
	if !m.lean {
		m.obs = append(m.obs, Obs{Kind: ObsDecide, Input: in, From: s.Snap.State, Rule: d.Rule})
		if d.Rule != nil && !d.Rule.Ignored() {
			m.obs = append(m.obs, Obs{Kind: ObsTransition, Input: in, From: s.Snap.State, Edge: d.Edge, Rule: d.Rule})
		}
	}
	s.Snap = d.Next
	cont, later := false, false
	for i := range d.effects {
		e := &d.effects[i]
		switch e.Kind {
		case policy.StepEmitStart:
			m.obs = append(m.obs, Obs{Kind: ObsStart, Attempt: e.Attempt, Input: in})
			s.ChainOpen, s.ChainAttempt = true, int16(e.Attempt)
		case policy.StepDropError:
			s.CtxAsst = false
		case policy.StepArmTimer:
			m.clearCtl(s)
			m.addTimer(s, Timer{Kind: TimerBackoff, Ctl: true, Rem: e.Delay.Milliseconds()})
		case policy.StepCancelTimer:
			for i := 0; i < int(s.NT); i++ {
				if s.T[i].Kind == TimerBackoff && s.T[i].Ctl {
					m.removeTimer(s, i)
					break
				}
			}
		case policy.StepWake, policy.StepUncontrol:
			m.clearCtl(s)
		case policy.StepEmitEnd:
			m.obs = append(m.obs, Obs{Kind: ObsEnd, Attempt: e.Attempt, Success: d.Rule.Success, Input: in})
			s.ChainOpen, s.ChainAttempt = false, 0
			if d.Next.Attempt != 0 {
				m.endNonZero = true
			}
		case policy.StepRelease:
			// The original's prompt() awaits the promise: sim's OnRelease hook.
			if !m.v.Session.PromptWaitsForRun && s.Waiting {
				m.resolve(s)
			}
		case policy.StepContinue:
			cont = true
		case policy.StepContinueLater:
			later = true
		}
	}
	if later {
		m.addTimer(s, Timer{Kind: TimerContinue})
	}
	if cont {
		m.continueAgent(s)
	}
	return d
}

// decision returns Decide's result for (snap, in, msg) under the model's
// settings with the given enabled, memoised (see model.decisions). The
// result is shared: callers must not modify it.
func (m *model) decision(snap policy.Snapshot, in policy.Input, msg msgID, enabled bool) *decision {
	k, ok := decisionKey(snap, in, msg, enabled)
	if ok {
		if d := m.decisions.get(k); d != nil {
			return d
		}
	}
	set := m.set
	set.Enabled = enabled
	var pd policy.Decision
	o := policy.Outcome{Message: messages[msg]} // no usage-limit message in the alphabet
	m.v.Decide(&pd, snap, in, &o, set)
	d := m.newDecision()
	*d = decision{Rule: pd.Rule, Edge: pd.Edge(), Next: pd.Next, effects: m.keepEffects(pd.Effects()), unit: -1}
	if d.Rule != nil {
		d.unit = ruleIndex(m.v, d.Rule)*len(policy.States) + snap.State.Index()
		d.retry = d.Rule.Event == "retry"
	}
	if ok {
		m.decisions.put(k, d)
	}
	return d
}

// newDecision returns room for a decision. The memo's decisions (a few
// hundred at most) are allocated in blocks and never move.
func (m *model) newDecision() *decision {
	if len(m.decisionBlock) == cap(m.decisionBlock) {
		m.decisionBlock = make([]decision, 0, 16)
	}
	m.decisionBlock = append(m.decisionBlock, decision{})
	return &m.decisionBlock[len(m.decisionBlock)-1]
}

// keepEffects returns a copy of es, allocated in blocks like decisions.
func (m *model) keepEffects(es []policy.Effect) []policy.Effect {
	if cap(m.effectBlock)-len(m.effectBlock) < len(es) {
		m.effectBlock = make([]policy.Effect, 0, max(32, len(es)))
	}
	n := len(m.effectBlock)
	m.effectBlock = append(m.effectBlock, es...)
	return m.effectBlock[n:len(m.effectBlock):len(m.effectBlock)]
}

// decisionKey packs Decide's varying arguments losslessly into a non-zero
// key; ok is false for a snapshot outside the packed ranges (never reached
// in practice), which is then decided without the memo.
func decisionKey(snap policy.Snapshot, in policy.Input, msg msgID, enabled bool) (k uint64, ok bool) {
	si := snap.State.Index()
	if si < 0 || uint64(snap.Attempt) > 0x7fffffff || uint64(snap.Armed) > 0xff || uint64(in) > 0xff {
		return 0, false
	}
	k = 1<<63 | uint64(snap.Attempt)<<32 | uint64(snap.Armed)<<24 | uint64(in)<<16 | uint64(msg)<<8 |
		b2u(enabled)<<5 | b2u(snap.Controlled)<<4 | b2u(snap.Open)<<3 | uint64(si)
	return k, true
}

// decisionMemo maps decision keys to decisions: a small open-addressing
// table (linear probing, at most half full). It holds a few hundred
// entries and stays in the L1 cache; a Go map cost several times more per
// lookup here.
type decisionMemo struct {
	keys []uint64 // 0: empty
	ds   []*decision
	n    int
}

func (t *decisionMemo) home(k uint64) uint64 {
	return k * 0x9e3779b97f4a7c15 >> (64 - bits.TrailingZeros(uint(len(t.keys))))
}

// get returns the decision of k, or nil.
func (t *decisionMemo) get(k uint64) *decision {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.keys) - 1)
	for p := t.home(k); t.keys[p] != 0; p = (p + 1) & mask {
		if t.keys[p] == k {
			return t.ds[p]
		}
	}
	return nil
}

// put adds k (not in t) with its decision d.
func (t *decisionMemo) put(k uint64, d *decision) {
	if 2*(t.n+1) > len(t.keys) {
		old, oldDs := t.keys, t.ds
		t.keys = make([]uint64, max(64, 2*len(old)))
		t.ds = make([]*decision, len(t.keys))
		t.n = 0
		for i, ok := range old {
			if ok != 0 {
				t.put(ok, oldDs[i])
			}
		}
	}
	mask := uint64(len(t.keys) - 1)
	p := t.home(k)
	for t.keys[p] != 0 {
		p = (p + 1) & mask
	}
	t.keys[p], t.ds[p] = k, d
	t.n++
}

// note records an observation that carries nothing but its kind.
func (m *model) note(k ObsKind) {
	if !m.lean {
		m.obs = append(m.obs, Obs{Kind: k})
	}
}

func (m *model) clearCtl(s *State) {
	for i := 0; i < int(s.NT); i++ {
		s.T[i].Ctl = false
	}
}

// addTimer inserts t after every timer due no later (FIFO among equals).
func (m *model) addTimer(s *State, t Timer) {
	if int(s.NT) == maxTimers || t.Kind == TimerBackoff && s.Snap.Armed > maxWaits {
		m.overflow = true
		return
	}
	t.Late = !m.firing
	i := int(s.NT)
	for i > 0 && (s.T[i-1].Rem > t.Rem || s.T[i-1].Rem == t.Rem && s.T[i-1].Late && !t.Late) {
		i--
	}
	copy(s.T[i+1:s.NT+1], s.T[i:s.NT])
	s.T[i] = t
	if m.track {
		copy(m.dues[i+1:s.NT+1], m.dues[i:s.NT])
		d := t.Rem
		if t.Kind == TimerCompaction {
			d = compactionDelayMs
		}
		m.dues[i] = m.now + d
		if i > 0 && m.dues[i-1] > m.dues[i] || i < int(s.NT) && m.dues[i+1] < m.dues[i] {
			m.fail("timer order: abstract order differs from real due times")
		}
	}
	s.NT++
}

func (m *model) removeTimer(s *State, i int) {
	copy(s.T[i:], s.T[i+1:s.NT])
	if m.track {
		copy(m.dues[i:], m.dues[i+1:s.NT])
	}
	s.NT--
	s.T[s.NT] = Timer{}
}

func (m *model) dropTimer(s *State, k TimerKind) {
	for i := 0; i < int(s.NT); i++ {
		if s.T[i].Kind == k {
			m.removeTimer(s, i)
			return
		}
	}
}

func (m *model) fail(msg string) {
	if m.bad == "" {
		m.bad = msg
	}
}

func (m *model) canContinue(s *State) bool {
	return s.Run == RunNone && s.Started && !s.CtxAsst
}

// continueAgent is policy.Controller's continueAgent with sim's agent.
func (m *model) continueAgent(s *State) {
	if !m.canContinue(s) {
		m.note(ObsContinueRejected)
		m.decide(s, policy.InputContinueFailed, m.continueError(s))
		return
	}
	m.startRun(s, RunRetry)
}

func (m *model) continueError(s *State) msgID {
	switch {
	case s.Run != RunNone:
		return msgContinueStreaming
	case !s.Started:
		return msgContinueEmpty
	}
	return msgContinueAssistant
}

func (m *model) startRun(s *State, k RunKind) {
	if !m.lean {
		m.obs = append(m.obs, Obs{Kind: ObsRun, Run: k})
	}
	s.Run = k
	s.RunMsg = false
	m.note(ObsCall)
}

// reply is sim's Session.reply: the call in flight ends with a reply.
func (m *model) reply(s *State, k replyKind) {
	c := &m.replies[k]
	s.CtxAsst = true
	if m.extended {
		s.RunMsg = true
	}
	if c.success {
		m.decide(s, policy.InputSuccess, msgNone)
	}
	if c.stop == policy.StopReasonToolUse {
		s.CtxAsst = false // the tool result
		m.note(ObsCall)
		return
	}
	m.endRun(s, k)
}

// endRun is sim's Session.endRun; k is the run's last reply (replyNone:
// the run has no assistant message).
func (m *model) endRun(s *State, k replyKind) {
	c := &m.replies[k]
	kind := s.Run
	s.Run = RunNone
	retry := false
	if c.endOK {
		retry = m.decide(s, c.endIn, c.msg).retry
	}
	if !retry && c.compact {
		// Compaction hand-off (enabled, succeeding): the reply leaves the
		// context and a continue is due 100 ms later; an older pending
		// compaction continue becomes inert.
		s.CtxAsst = false
		m.note(ObsCompaction)
		m.dropTimer(s, TimerCompaction)
		m.addTimer(s, Timer{Kind: TimerCompaction, Rem: compactionRem})
	}
	if kind == RunPrompt && !m.v.Session.PromptWaitsForRun {
		if s.Snap.Open {
			s.Waiting = true
		} else {
			m.resolve(s)
		}
	}
}

func (m *model) resolve(s *State) {
	if s.Pending {
		s.Pending, s.Waiting = false, false
		m.note(ObsResolved)
	}
}

// prompt is sim's Session.Prompt.
func (m *model) prompt(s *State) {
	if s.Run != RunNone || s.Pending || (m.v.Session.RejectPromptDuringChain && s.Snap.Open) {
		m.note(ObsRejected)
		return
	}
	m.note(ObsAccepted)
	if m.v.Session.CancelCompactionContinue {
		m.dropTimer(s, TimerCompaction)
	}
	s.Pending, s.Waiting = true, false
	// Session.PrePromptCompactionCheck looks at the last assistant message
	// of the runtime context. With this alphabet it never overflows: every
	// overflow reply is compacted (and dropped) at its own agent_end, and
	// aborted replies carry no usage. So the check never fires here.
	m.decide(s, policy.InputPrompt, msgNone)
	s.CtxAsst = false
	s.Started = true
	m.startRun(s, RunPrompt)
}

// fire fires the first pending timer.
func (m *model) fire(s *State) {
	t := s.T[0]
	if m.track {
		m.now = m.dues[0]
	}
	m.removeTimer(s, 0)
	if t.Kind != TimerCompaction { // the compaction delay takes no abstract time
		for i := 0; i < int(s.NT); i++ {
			s.T[i].Rem -= t.Rem
		}
	}
	switch t.Kind {
	case TimerBackoff:
		m.decide(s, policy.InputElapsed, msgNone)
	case TimerContinue:
		m.continueAgent(s)
	case TimerCompaction:
		if !m.canContinue(s) {
			m.note(ObsContinueRejected)
			return
		}
		m.startRun(s, RunCompaction)
	}
}
