package explore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// Input is one input of the explorer's alphabet. The order is fixed: it is
// the tie-break order of shortest counterexamples.
type Input uint8

// The alphabet. Replies complete the model call in flight; actions are
// client commands; FireTimer fires the pending timer due first. The two
// usage-limit replies come last so that the counterexamples of the other
// inputs keep their tie-break order.
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
	// ReplyUsageLimitSwitch is a usage-limit error ("usage limit reached",
	// retryable) for which auth storage switches credentials: the retry
	// waits 0 ms.
	ReplyUsageLimitSwitch
	// ReplyUsageLimitStay is the same error when auth storage does not
	// switch: the retry waits its backoff.
	ReplyUsageLimitStay
	// ReplyHintLong is ReplyRetryable's error with a hint (e.g. "529
	// overloaded_error, retry-after-ms=N") that makes the wait too long
	// where the settings have a ceiling: N is retryAfter.maxWaitMs + 1 s,
	// but at most maxHintMs (a hint above it is not used); an hour without
	// either. In the alphabet only when retryAfter.use is floor or replace
	// (SPEC.md §12.6).
	ReplyHintLong
	// ReplyHintShort is the same error with a 2 ms hint: floor keeps the
	// backoff, replace shortens the wait to 2 ms. In the alphabet with
	// ReplyHintLong.
	ReplyHintShort
	// ReplyRetryableShortDraw is ReplyRetryable's error whose jitter draw
	// makes the shortest wait (ShortJitterDraw; ReplyRetryable's makes the
	// longest): in the alphabet only when the settings jitter, so that a
	// jitter range is explored at both ends (SPEC.md §12.6).
	ReplyRetryableShortDraw
	numInputs
)

// commandInputs are the alphabet's commands: the row of session's
// command table each one sends, with its ArgBool argument (the
// explorer's choice of commands and arguments; their names, events and
// scenario actions come from the rows).
var commandInputs = [numInputs]struct {
	kind    session.EventKind
	enabled bool
}{
	ActAbortRetry: {kind: session.AbortRetry},
	ActAbort:      {kind: session.Abort},
	ActEnable:     {kind: session.SetAutoRetry, enabled: true},
	ActDisable:    {kind: session.SetAutoRetry},
	ActPrompt:     {kind: session.Prompt},
}

// inputNames are the inputs' names: a command's is its name, with
// ":true" or ":false" for its ArgBool argument.
var inputNames = func() [numInputs]string {
	names := [numInputs]string{
		"reply:retryable", "reply:overflow", "reply:fatal", "reply:aborted", "reply:stop", "reply:toolUse",
		FireTimer:             "fire_timer",
		ReplyUsageLimitSwitch: "reply:usage_limit:switch", ReplyUsageLimitStay: "reply:usage_limit:stay",
		ReplyHintLong: "reply:hint:long", ReplyHintShort: "reply:hint:short",
		ReplyRetryableShortDraw: "reply:retryable:short-draw",
	}
	for in, c := range commandInputs {
		if cmd, ok := session.CommandOf(c.kind); ok {
			names[in] = cmd.Name
			if hasArg(&cmd, session.ArgBool) {
				names[in] += ":" + strconv.FormatBool(c.enabled)
			}
		}
	}
	return names
}()

// hasArg reports whether command c has an argument of kind k.
func hasArg(c *session.Command, k session.ArgKind) bool {
	for _, a := range c.Args {
		if a.Kind == k {
			return true
		}
	}
	return false
}

// commandEvent is the event of command input in (ok false: in is no
// command); an abort ends a call in flight with reply aborted.
func commandEvent(in Input, aborted classify.Outcome) (session.Event, bool) {
	c := commandInputs[in]
	cmd, ok := session.CommandOf(c.kind)
	if !ok {
		return session.Event{}, false
	}
	ev := cmd.Event("")
	ev.Enabled = c.enabled
	if c.kind == session.Abort {
		ev.Reply = aborted
	}
	return ev, true
}

// commandAction is command input in as a scenario action at at.
func commandAction(in Input, at time.Duration) (scenario.Action, bool) {
	c := commandInputs[in]
	cmd, ok := session.CommandOf(c.kind)
	if !ok {
		return scenario.Action{}, false
	}
	a := scenario.Action{At: at, Do: cmd.Name}
	if hasArg(&cmd, session.ArgBool) {
		enabled := c.enabled
		a.Enabled = &enabled
	}
	return a, true
}

// String returns the input's name, e.g. "reply:retryable".
func (i Input) String() string {
	if i >= numInputs {
		return fmt.Sprintf("Input(%d)", int(i))
	}
	return inputNames[i]
}

// Messages of the error replies of the default alphabet (settings whose
// classification gives one another class pick another: see candidates).
const (
	MsgRetryable  = "529 overloaded_error"
	MsgOverflow   = "prompt is too long: 213462 tokens > 200000 maximum"
	MsgFatal      = "invalid api key"
	MsgUsageLimit = "usage limit reached"
)

// The exploration's fixed settings and bounds (SPEC.md §12).
const (
	baseDelay     = 2000 * time.Millisecond
	contextWindow = 200000
	// compactionRem is the compaction continue's abstract wait: shorter
	// than any backoff wait left, and firing it takes no abstract time.
	compactionRem = 1
	maxTimers     = 4
	// maxWaits bounds the backoff waits running at once (the original can
	// run several; SPEC.md §9 describes two). A step that would arm a
	// third is pruned and counted in Result.Pruned.
	maxWaits = 2
	// remBits is the width of a timer's Rem in the state key.
	remBits = 30
	maxRem  = 1<<remBits - 1
)

// replyOf is the reply (and auth storage's answer) of each reply input of
// the default settings' alphabet (the hinted replies are made per
// exploration: newConfig).
var replyOf = [numInputs]replyInput{
	ReplyRetryable:        {msg: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: MsgRetryable}},
	ReplyOverflow:         {msg: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: MsgOverflow}},
	ReplyFatal:            {msg: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: MsgFatal}},
	ReplyAborted:          {msg: policy.AssistantMessage{StopReason: policy.StopReasonAborted}},
	ReplyStop:             {msg: policy.AssistantMessage{StopReason: policy.StopReasonStop}},
	ReplyToolUse:          {msg: policy.AssistantMessage{StopReason: policy.StopReasonToolUse}},
	ReplyUsageLimitSwitch: {msg: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: MsgUsageLimit}, switched: true},
	ReplyUsageLimitStay:   {msg: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: MsgUsageLimit}},
}

// isReply reports whether in is a reply input.
func (i Input) isReply() bool {
	return i <= ReplyToolUse || i >= ReplyUsageLimitSwitch && i < numInputs
}

// isHint reports whether in is one of the hinted replies, which are in
// the alphabet only when the settings read hints.
func (i Input) isHint() bool { return i == ReplyHintLong || i == ReplyHintShort }

// classifiedAlphabet is what the shell gives the core: every reply
// classified once, as sim classifies a turn (in the settings' mode, at the
// epoch; the alphabet has no date hint), and the aborted reply of the
// abort command.
type classifiedAlphabet struct {
	reply   [numInputs]classify.Outcome
	aborted classify.Outcome
	// outcomes lists the distinct outcomes, for the state key (of the
	// default alphabet: see classify).
	outcomes []classify.Outcome
}

// alphabet is the default settings' alphabet.
var alphabet = func() *classifiedAlphabet {
	a, err := classifyAlphabet(nil, &replyOf, 0, 0, false, nil)
	if err != nil {
		panic(err)
	}
	return a
}()

// classifyAlphabet classifies the replies msgs with cls (nil: the original's
// message classification); jittered gives each retryable reply the draw
// (ReplyRetryableShortDraw shortDraw).
// A message with no stop reason is not in the alphabet (config.off: a
// hinted reply of settings that ignore hints, a reply no candidate
// message gives its class).
// The state key stores a reply only if it overflows, by its index in the
// default alphabet's outcomes (ref): an overflow reply that classifies
// otherwise under cls (which no mode does: overflow comes first in each)
// is an error.
func classifyAlphabet(cls *classify.Classifier, msgs *[numInputs]replyInput, draw, shortDraw float64, jittered bool, ref *classifiedAlphabet) (*classifiedAlphabet, error) {
	a := &classifiedAlphabet{}
	add := func(o classify.Outcome) error {
		for _, x := range a.outcomes {
			if x == o {
				return nil
			}
		}
		if ref != nil && o.Overflow && !slices.Contains(ref.outcomes, o) {
			return fmt.Errorf("the overflow reply %q classifies as %+v under the settings, not as the state key stores it", o.Message, o)
		}
		a.outcomes = append(a.outcomes, o)
		return nil
	}
	for in := Input(0); in < numInputs; in++ {
		if in.isReply() && msgs[in].msg.StopReason != "" {
			o := cls.Reply(msgs[in].msg, contextWindow, epoch)
			if jittered && o.Class == classify.ClassRetryable {
				o.Draw = draw
				if in == ReplyRetryableShortDraw {
					o.Draw = shortDraw
				}
			}
			a.reply[in] = o
			if err := add(o); err != nil {
				return nil, err
			}
		}
	}
	a.aborted = cls.Reply(policy.AssistantMessage{StopReason: policy.StopReasonAborted, ErrorMessage: session.AbortedMessage}, contextWindow, epoch)
	return a, add(a.aborted)
}

// Timer is a pending timer of the abstract queue: what the core armed
// (Kind, ID) and Rem, its due time relative to the abstract now in ms.
// Actions and replies take no abstract time; only firing a timer other
// than a compaction continue advances it. The compaction continue's
// 100 ms is an infinitesimal compactionRem: shorter than any remaining
// backoff wait, and firing it advances no abstract time (so repeated
// compaction cycles during one wait do not make the space infinite).
// Timers are kept ordered by (Rem, not Late first, arming order).
type Timer struct {
	Kind session.TimerKind
	ID   uint64
	Rem  int64 // ms until due
	// Late: armed by an action (a client command or a reply), which comes
	// an instant after the last timer fired; a timer armed while a timer
	// fires is due before a Late one with the same Rem.
	Late bool
}

// State is the explorer's state: the session core's state, the settings'
// enabled flag, the chain as the trace shows it, and the pending timers.
type State struct {
	Session session.State
	Enabled bool // retry.enabled
	// The chain as the trace records show it (auto_retry_start/end).
	ChainOpen    bool
	ChainAttempt int16
	NT           uint8
	T            [maxTimers]Timer
}

// Quiescent reports whether nothing is in flight and no timer is pending.
func (s *State) Quiescent() bool { return s.NT == 0 && s.Session.Run.Kind == session.NoRun }

// String renders the state compactly.
func (s State) String() string {
	var t strings.Builder
	for i := 0; i < int(s.NT); i++ {
		c := ""
		if s.T[i].ID == s.Session.Ctl {
			c = "*"
		}
		fmt.Fprintf(&t, " %s%s#%d@%d", s.T[i].Kind, c, s.T[i].ID, s.T[i].Rem)
	}
	ss := &s.Session
	return fmt.Sprintf("{%s attempt=%d open=%t armed=%d ctl=%t enabled=%t run=%s call=%d ctx=%d/%s pending=%d waiting=%t chain=%t/%d timers=[%s]}",
		ss.Retry.State, ss.Retry.Attempt, ss.Retry.Open, ss.Retry.Armed, ss.Retry.Controlled, s.Enabled, ss.Run.Kind,
		ss.Run.Call, ss.Context.Count, ss.Context.Last, ss.Pending, ss.Waiting, s.ChainOpen, s.ChainAttempt, t.String())
}

// initial is the session before anything happened, retry enabled.
func initial() State { return State{Session: session.Initial(), Enabled: true} }

// shell steps explorer states through the session core. It is not safe
// for concurrent use; each BFS worker has its own.
type shell struct {
	_    [128]byte // see expander
	core session.Core
	cfg  *config
	set  policy.Settings // cfg.set; Enabled comes from the State
	buf  session.Buffer
	cur  *State // the state apply steps
	ev   session.Event
	// raw: replay mode. The core is given real times (now) and every
	// record type, and the records are kept; due times are tracked.
	raw bool
	// keep: append the records written to records (raw, and the replay's
	// abstract check).
	keep    bool
	records []trace.Record
	now     time.Duration            // raw: the time of the step
	dues    [maxTimers]time.Duration // raw: each pending timer's real due time
	calls   int                      // model calls started so far
	// logging: append the timers armed and calls started to posts.
	logging bool
	posts   []post
	// recording: append the timers cancelled and armed to ops (the
	// templates' operations: memo.go).
	recording bool
	ops       []timerOp

	// Per step.
	in     Input       // the step's input
	firing bool        // the step fires a timer: the timers it arms are not Late
	pruned bool        // the step needed more than the timer bounds
	fails  invSet      // invariants the step violates
	lastIn retry.Input // the input of the step's last transition record
	lastEv string      // the event of the step's last transition record
	endAt  bool        // the step's last retry record is auto_retry_end
	// compacted: the step compacted an overflow and a continue will follow
	// (auto_compaction_end with willRetry).
	compacted bool
	fellBack  bool  // a retry_fallback waits for its auto_retry_start
	units     []int // (rule, from-state) units of the transitions recorded
	_         [128]byte
}

// invariantRecords are the records the invariants read.
var invariantRecords = session.RecordMask(trace.Transition, trace.AutoRetryStart, trace.AutoRetryEnd, trace.RetryFallback, trace.AutoCompactionEnd)

// newShell returns a shell for v and maxRetries with the default settings:
// enabled at first, base delay 2 s, compaction enabled and succeeding. raw
// is the replay mode.
func newShell(v *session.Variant, maxRetries int, raw bool) *shell {
	return newConfigShell(v, defaultConfig(maxRetries), raw)
}

// newConfigShell returns a shell for v and the configuration c.
func newConfigShell(v *session.Variant, c *config, raw bool) *shell {
	sh := new(shell)
	sh.init(v, c, raw)
	return sh
}

// init makes sh the shell newConfigShell(v, c, raw) returns.
func (sh *shell) init(v *session.Variant, c *config, raw bool) {
	*sh = shell{raw: raw, keep: raw, cfg: c, set: c.set}
	sh.core = session.Core{Variant: v, Config: session.Config{CompactionEnabled: true, CompactionSucceeds: true}}
	if !raw {
		sh.core.Records = invariantRecords
	}
}

// reuse is init keeping the buffers sh has grown, emptied: its records,
// the core's buffer (effects and scratch), the posts and the units. Not
// the timer operations, which a BFS shell shares with its memo.
func (sh *shell) reuse(v *session.Variant, c *config, raw bool) {
	records, buf, posts, units := sh.records[:0], sh.buf, sh.posts[:0], sh.units[:0]
	sh.init(v, c, raw)
	sh.records, sh.buf, sh.posts, sh.units = records, buf, posts, units
	sh.buf.Effects = sh.buf.Effects[:0]
}

// enabled reports whether input in can happen in s.
func (sh *shell) enabled(s *State, in Input) bool {
	if s.NT > 0 && s.T[0].Rem == 0 {
		return in == FireTimer // a due timer fires before anything else
	}
	switch in {
	case ActEnable:
		return !s.Enabled
	case ActDisable:
		return s.Enabled
	case FireTimer:
		return s.NT > 0
	case ActAbortRetry, ActAbort, ActPrompt:
		return true
	}
	return in.isReply() && s.Session.Run.Call != 0 && sh.cfg.off&(1<<in) == 0
}

// step applies in to s, which must enable it: one queue event, the core
// stepped with its event and then with Settle, as sim's scheduler does.
func (sh *shell) step(s *State, in Input) {
	sh.fails, sh.pruned, sh.endAt, sh.lastIn, sh.lastEv, sh.fellBack, sh.in = 0, false, false, -1, "", false, in
	sh.compacted = false
	sh.units = sh.units[:0]
	sh.firing = in == FireTimer
	ev := &sh.ev
	*ev = session.Event{}
	cmd, isCmd := commandEvent(in, sh.cfg.alpha.aborted)
	switch {
	case isCmd:
		*ev = cmd
	case in == FireTimer:
		t := sh.pop(s)
		ev.Kind, ev.Timer = session.TimerFired, session.Timer{Kind: t.Kind, ID: t.ID}
	default: // a reply to the call in flight
		ev.Kind, ev.Call, ev.Reply, ev.Switch = session.Reply, s.Session.Run.Call, sh.cfg.alpha.reply[in], sh.cfg.msgs[in].switched
	}
	sh.apply(s)
	*ev = session.Event{Kind: session.Settle}
	sh.apply(s)
	if sh.endAt && s.Session.Retry.Attempt != 0 {
		sh.fails |= 1 << InvAttemptZero
	}
	if sh.fellBack {
		sh.fails |= 1 << InvStartAttempts
	}
	if sh.compacted && s.Session.Context.Last == session.RoleAssistant {
		// The continue 100 ms later cannot start from an assistant
		// message (H19).
		sh.fails |= 1 << InvCompactionContinues
	}
}

// reply is the classified reply of the step's input, nil when the input
// is not a reply.
func (sh *shell) reply() *classify.Outcome {
	if !sh.in.isReply() {
		return nil
	}
	return &sh.cfg.alpha.reply[sh.in]
}

// apply steps the core with sh.ev and performs its effects.
func (sh *shell) apply(s *State) {
	if sh.raw {
		sh.ev.At = sh.now
	}
	sh.buf.Effects = sh.buf.Effects[:0]
	sh.cur = s
	session.Perform(sh.core.Apply(&s.Session, sh.cfg.pol[b2i(s.Enabled)], &sh.ev, &sh.buf), (*shellEffects)(sh))
	sh.cur = nil
}

// shellEffects is the shell as the session.Shell of its core's effects, on
// the state being stepped (cur). The explored inputs include no
// set_retry_settings or set_auto_compaction: their effects never occur.
type shellEffects shell

func (e *shellEffects) Record(r *trace.Record) { (*shell)(e).record(e.cur, r) }
func (e *shellEffects) Arm(t session.Timer) {
	if e.recording {
		e.ops = append(e.ops, timerOp{arm: true, kind: t.Kind, id: opID(t.ID), rem: uint32(abstractRem(t)), late: !e.firing})
	}
	(*shell)(e).arm(e.cur, t)
	if e.logging {
		e.posts = append(e.posts, post{id: t.ID, delay: t.Delay})
	}
}
func (e *shellEffects) Cancel(t session.Timer) {
	if e.recording {
		e.ops = append(e.ops, timerOp{id: opID(t.ID)})
	}
	(*shell)(e).cancel(e.cur, t.ID)
}
func (e *shellEffects) SetEnabled(enabled bool) { e.cur.Enabled = enabled }
func (e *shellEffects) SetSettings(*policy.Policy) {
	panic("explore: set_retry_settings is not an explored input")
}
func (e *shellEffects) SetCompaction(bool) {
	panic("explore: set_auto_compaction is not an explored input")
}

// Call: the call is in flight (State.Session.Run.Call): its reply is a
// later input.
func (e *shellEffects) Call(id uint64) {
	e.calls++
	if e.logging {
		e.posts = append(e.posts, post{call: true, id: id})
	}
}

// record reads one trace record: the per-step invariants, the chain as
// the trace shows it, and the units of coverage.
func (sh *shell) record(s *State, r *trace.Record) {
	if sh.keep {
		sh.records = append(sh.records, r.Clean())
	}
	switch r.Type {
	case trace.Transition:
		sh.lastIn, sh.lastEv = r.Edge.Input, r.Edge.Event
		if r.Edge.Rule >= 0 {
			sh.units = append(sh.units, r.Edge.Rule*len(states)+policy.State(r.Edge.From).Index())
		}
	case trace.AutoRetryStart:
		a := r.Start.Attempt
		if sh.lastIn == retry.InputOverflow {
			sh.fails |= 1 << InvOverflowNotRetried
		}
		want := 1
		if s.ChainOpen {
			want = int(s.ChainAttempt) + 1
		}
		o := sh.reply()
		// Persistent mode retries all but usage limits with no count
		// limit; a fallback restarts the count at 1 whatever maxRetries.
		unbounded := sh.set.Persistent && o != nil && !o.UsageLimit || sh.fellBack && a == 1
		if a != want || a < 1 || a > sh.set.MaxRetries && !unbounded {
			sh.fails |= 1 << InvStartAttempts
		}
		if !s.Enabled {
			sh.fails |= 1 << InvDisabledNoStart
		}
		if !sh.waitWithinBound(r.Start.DelayMs, o) {
			sh.fails |= 1 << InvWaitBound
		}
		s.ChainOpen, s.ChainAttempt = true, int16(a)
		sh.endAt, sh.fellBack = false, false
	case trace.AutoCompactionEnd:
		sh.compacted = sh.compacted || r.CompactionEnd.WillRetry
	case trace.RetryFallback:
		// The next model: the count restarts, the next start is attempt 1.
		s.ChainAttempt, sh.fellBack = 0, true
	case trace.AutoRetryEnd:
		a := r.End.Attempt
		// A fail-fast end (the wait too long, SPEC.md §1.1 step 6).
		failFast := !r.End.Success && sh.lastEv == failFastEvent
		switch {
		case !s.ChainOpen:
			// At once, with no start: maxRetries 0 (attempt 0), or a
			// first wait too long (fail-fast, attempt 1).
			if r.End.Success || !(a == 0 || a == 1 && failFast) {
				sh.fails |= 1 << InvEndInChain
			}
		case a != int(s.ChainAttempt) && !(failFast && a == int(s.ChainAttempt)+1):
			// A fail-fast end reports the retry it did not make.
			sh.fails |= 1 << InvEndInChain
		}
		if sh.fellBack {
			sh.fails |= 1 << InvStartAttempts
		}
		s.ChainOpen, s.ChainAttempt = false, 0
		sh.endAt, sh.fellBack = true, false
	}
}

// failFastEvent is the event of the rules that end a chain because its
// wait is too long (sound's fail_fast).
const failFastEvent = "fail_fast"

// waitWithinBound reports whether a retry's wait (delayMs) is within
// maxBackoffMs*(1+ratio), or within a hint that o carries and the
// settings use (floor or replace, not above maxHintMs).
func (sh *shell) waitWithinBound(delayMs float64, o *classify.Outcome) bool {
	bound := sh.cfg.waitBound
	if bound == 0 {
		return true
	}
	if ra := &sh.set.RetryAfter; o != nil && o.HasWaitHint && (ra.Use == policy.HintFloor || ra.Use == policy.HintReplace) &&
		(ra.MaxHint <= 0 || o.WaitHintMs <= msOf(ra.MaxHint)) {
		bound = max(bound, o.WaitHintMs)
	}
	return delayMs <= bound*(1+1e-12)
}

// arm adds a timer the core armed, after every timer due no later (FIFO
// among equals), or prunes the step beyond the bounds.
func (sh *shell) arm(s *State, tm session.Timer) {
	waits := 0
	for i := 0; i < int(s.NT); i++ {
		if s.T[i].Kind == session.BackoffTimer {
			waits++
		}
	}
	if int(s.NT) == maxTimers || tm.Kind == session.BackoffTimer && waits >= maxWaits {
		sh.pruned = true
		return
	}
	t := Timer{Kind: tm.Kind, ID: tm.ID, Rem: abstractRem(tm), Late: !sh.firing}
	i := int(s.NT)
	for i > 0 && (s.T[i-1].Rem > t.Rem || s.T[i-1].Rem == t.Rem && s.T[i-1].Late && !t.Late) {
		i--
	}
	copy(s.T[i+1:s.NT+1], s.T[i:s.NT])
	s.T[i] = t
	if sh.raw {
		copy(sh.dues[i+1:s.NT+1], sh.dues[i:s.NT])
		sh.dues[i] = sh.now + tm.Delay
	}
	s.NT++
}

// abstractRem is the abstract wait of a timer the core arms: its delay
// in ms, compactionRem for a compaction continue.
func abstractRem(tm session.Timer) int64 {
	if tm.Kind == session.CompactionTimer {
		return compactionRem
	}
	return tm.Delay.Milliseconds()
}

// opID is a timer id as a template keeps it: the ids of one step are
// the queue's places (at most maxTimers), the call's and the few the step
// makes.
func opID(id uint64) uint8 {
	if id > 255 {
		panic(fmt.Sprintf("explore: timer id %d in one step of a canonical state", id))
	}
	return uint8(id)
}

// cancel drops the timer id: a cancelled timer is never delivered.
func (sh *shell) cancel(s *State, id uint64) {
	for i := 0; i < int(s.NT); i++ {
		if s.T[i].ID == id {
			sh.remove(s, i)
			return
		}
	}
}

func (sh *shell) remove(s *State, i int) {
	copy(s.T[i:], s.T[i+1:s.NT])
	if sh.raw {
		copy(sh.dues[i:], sh.dues[i+1:s.NT])
	}
	s.NT--
	s.T[s.NT] = Timer{}
}

// pop removes the first timer and advances the abstract time to it.
func (sh *shell) pop(s *State) Timer {
	t := s.T[0]
	if sh.raw {
		sh.now = sh.dues[0]
	}
	sh.remove(s, 0)
	if t.Kind != session.CompactionTimer { // the compaction delay takes no abstract time
		for i := 0; i < int(s.NT); i++ {
			s.T[i].Rem -= t.Rem
		}
	}
	return t
}

// post is a timer armed or a call started, as a real scheduler would
// post its event.
type post struct {
	call  bool
	id    uint64
	delay time.Duration // a timer's
}

// b2i is 1 for true, 0 for false (an index into config.pol).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
