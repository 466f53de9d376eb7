package sim_test

// Model-based test: the engine (sim.Session on the sound variant) against a
// small reference model of the rules written from SPEC.md §3.1 and §6 only.
// The model shares no code with sim or policy: it trusts the class each
// reply was drawn as (pbClass), computes delays, the usage-limit question and
// the retry-after value from the test's own tables, and keeps its own event
// queue in virtual milliseconds.
//
// Both are driven by the same rapid actions (pbActions, without the
// single-event step, whose effect depends on inert queue entries the model
// does not keep: time moves by RunUntil to a drawn time or to the engine's
// next due event). After every action the filtered trace lines (agent_run
// kind, auto_retry_start, auto_retry_end, prompt_resolved,
// mark_usage_limit_reached) and the responses (get_state data included) must
// be equal, "t" included; at the end both run dry and their final states
// must be equal too.

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// mdlFields are the compared lines and their compared fields, in order.
var mdlFields = map[string][]string{
	"agent_run":                {"kind"},
	"auto_retry_start":         {"attempt", "maxAttempts", "delayMs", "errorMessage"},
	"auto_retry_end":           {"success", "attempt", "finalError"},
	"prompt_resolved":          {"prompt"},
	"mark_usage_limit_reached": {"retryAfterMs", "returns"},
	"response":                 {"id", "command", "success", "error", "data"},
}

// mdlCanon gives the canonical form of a compared line; ok is false for a
// line that is not compared.
func mdlCanon(t int64, typ string, fields map[string]any) (string, bool) {
	names, ok := mdlFields[typ]
	if !ok {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "t=%d %s", t, typ)
	for _, f := range names {
		if v, ok := fields[f]; ok {
			j, err := json.Marshal(v)
			if err != nil {
				panic(err)
			}
			fmt.Fprintf(&b, " %s=%s", f, j)
		}
	}
	return b.String(), true
}

// Model states (SPEC §3).
const (
	mIdle       = "idle"
	mBackoff    = "backoff"
	mContinuing = "continuing"
	mExhausted  = "exhausted"
	mCancelled  = "cancelled"
)

// Model texts (SPEC §6, §3.1).
const (
	mErrBusy          = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message."
	mErrContBusy      = "Agent is already processing. Wait for completion before continuing."
	mErrContEmpty     = "No messages to continue from"
	mErrContAssistant = "Cannot continue from message role: assistant"
	mRetryCancelled   = "Retry cancelled"
	mNoMessage        = "Agent run ended without an assistant message"
	mAborted          = "Request was aborted"
	mCompactionDelay  = 100
)

type mdlEvent struct {
	at, seq int64
	kind    int // 0 call done, 1 backoff timer, 2 compaction continue
	gen     int
	turn    pbTurn
}

// mdl is the reference model: one retry machine and one session.
type mdl struct {
	now int64
	// retryAt is when the last backoff wait ends.
	retryAt int64
	seq     int64
	queue   []mdlEvent
	out     []string

	turns                    []pbTurn
	turnIdx                  int
	compEnabled, compSucceed bool
	enabled                  bool
	maxRetries               int
	baseMs                   int64

	// Retry machine.
	state   string
	attempt int
	timer   int // the live backoff timer, 0 if none
	timers  int

	// Session.
	inFlight   bool
	runKind    string // "prompt" or "continue"
	calling    bool
	callGen    int
	hasLast    bool
	last       pbTurn // the run's last reply
	lastSwitch bool   // switchModel of the last scripted reply
	ctx        []byte // roles of the runtime context: u, a, t
	prompts    int
	pending    []int
	compWait   bool
	compGen    int
}

func newMdl(plan pbPlan) *mdl {
	return &mdl{turns: plan.Turns, compEnabled: plan.CompEnabled, compSucceed: plan.CompSucceed,
		enabled: plan.Settings.Enabled, maxRetries: plan.Settings.MaxRetries,
		baseMs: plan.Settings.BaseDelay.Milliseconds(), state: mIdle}
}

func (m *mdl) emit(typ string, kv ...any) {
	f := map[string]any{}
	for i := 0; i < len(kv); i += 2 {
		f[kv[i].(string)] = kv[i+1]
	}
	s, _ := mdlCanon(m.now, typ, f)
	m.out = append(m.out, s)
}

func (m *mdl) open() bool { return m.state == mBackoff || m.state == mContinuing }

func (m *mdl) schedule(d int64, e mdlEvent) {
	m.seq++
	e.at, e.seq = m.now+d, m.seq
	m.queue = append(m.queue, e)
}

// --- the retry machine (SPEC §3.1, sound) ---

func (m *mdl) endChain(state string, success bool, final string) {
	m.state = state
	if success {
		m.emit("auto_retry_end", "success", true, "attempt", m.attempt)
	} else {
		m.emit("auto_retry_end", "success", false, "attempt", m.attempt, "finalError", final)
	}
	m.attempt = 0
}

// retryable is agent_end of a retryable error; it reports whether a retry
// was scheduled.
func (m *mdl) retryable(msg string) bool {
	switch m.state {
	case mBackoff:
		return false
	case mContinuing:
		if m.enabled && m.attempt < m.maxRetries {
			m.retry(msg)
			return true
		}
		m.endChain(mExhausted, false, msg)
		return false
	}
	switch {
	case !m.enabled:
	case m.attempt >= m.maxRetries:
		m.endChain(mExhausted, false, msg)
	default:
		m.retry(msg)
		return true
	}
	return false
}

func (m *mdl) retry(msg string) {
	m.attempt++
	m.state = mBackoff
	delay := m.baseMs << (m.attempt - 1)
	if m.last.Class == clUsageLimit {
		var after any
		if m.last.HasAfter {
			after = m.last.After
		}
		m.emit("mark_usage_limit_reached", "retryAfterMs", after, "returns", m.lastSwitch)
		if m.lastSwitch {
			delay = 0
		}
	}
	m.emit("auto_retry_start", "attempt", m.attempt, "maxAttempts", m.maxRetries, "delayMs", delay, "errorMessage", msg)
	m.dropAssistant()
	m.timers++
	m.timer = m.timers
	m.retryAt = m.now + delay
	m.schedule(delay, mdlEvent{kind: 1, gen: m.timer})
}

// endInput is any other agent_end outcome or continue_failed: in
// continuing it ends the chain, at rest nothing happens.
func (m *mdl) endInput(state, final string) {
	if m.state == mContinuing {
		m.endChain(state, false, final)
	}
}

func (m *mdl) success() {
	if m.state == mContinuing {
		m.endChain(mIdle, true, "")
	}
}

func (m *mdl) cancel() {
	if m.open() {
		m.timer = 0
		m.endChain(mCancelled, false, mRetryCancelled)
	}
}

func (m *mdl) elapsed(id int) {
	if id != m.timer || m.state != mBackoff {
		return
	}
	m.timer = 0
	m.state = mContinuing
	if err := m.canContinue(); err != "" {
		m.endInput(mExhausted, err)
		return
	}
	m.startRun("continue")
}

// --- the session (SPEC §6) ---

func (m *mdl) canContinue() string {
	switch {
	case m.inFlight:
		return mErrContBusy
	case len(m.ctx) == 0:
		return mErrContEmpty
	case m.ctx[len(m.ctx)-1] == 'a':
		return mErrContAssistant
	}
	return ""
}

func (m *mdl) dropAssistant() {
	if n := len(m.ctx); n > 0 && m.ctx[n-1] == 'a' {
		m.ctx = m.ctx[:n-1]
	}
}

func (m *mdl) startRun(kind string) {
	m.emit("agent_run", "kind", kind)
	m.inFlight, m.runKind, m.hasLast, m.calling = true, kind, false, false
	m.call()
}

func (m *mdl) call() {
	var p pbTurn
	if m.turnIdx < len(m.turns) {
		p = m.turns[m.turnIdx]
	} else {
		p = pbTurn{Class: clSuccess, Stop: policy.StopReasonStop}
	}
	m.turnIdx++
	if p.DurMs <= 0 {
		m.reply(p, true)
		return
	}
	m.callGen++
	m.calling = true
	m.schedule(p.DurMs, mdlEvent{kind: 0, gen: m.callGen, turn: p})
}

func (m *mdl) reply(p pbTurn, scripted bool) {
	m.ctx = append(m.ctx, 'a')
	if scripted {
		m.lastSwitch = p.Switch
	}
	m.hasLast, m.last = true, p
	switch p.Class {
	case clSuccess, clSuccessOver, clToolUse:
		m.success()
	}
	if p.Class == clToolUse {
		m.ctx = append(m.ctx, 't')
		m.call()
		return
	}
	m.endRun()
}

func (m *mdl) endRun() {
	m.inFlight = false
	retried := false
	if !m.hasLast {
		m.endInput(mExhausted, mNoMessage)
	} else {
		switch m.last.Class {
		case clRetryable, clUsageLimit:
			retried = m.retryable(m.last.Msg)
		case clOverflowMsg, clOverflowUsage, clFatal:
			m.endInput(mExhausted, m.last.Msg)
		case clAborted:
			m.endInput(mCancelled, mRetryCancelled)
		}
	}
	if !retried {
		m.compaction()
	}
}

// compaction is the hand-off stub: an overflow (by message or usage, error
// or success, never aborted) drops the reply and continues 100 ms later.
func (m *mdl) compaction() {
	if !m.hasLast || !m.compEnabled {
		return
	}
	switch m.last.Class {
	case clOverflowMsg, clOverflowUsage, clSuccessOver:
	default:
		return
	}
	m.dropAssistant()
	if !m.compSucceed {
		return
	}
	m.compGen++
	m.compWait = true
	m.schedule(mCompactionDelay, mdlEvent{kind: 2, gen: m.compGen})
}

func (m *mdl) cancelCompaction() {
	if m.compWait {
		m.compWait = false
		m.compGen++
	}
}

func (m *mdl) prompt(id string) {
	m.prompts++
	n := m.prompts
	if m.inFlight || len(m.pending) > 0 || m.open() {
		m.emit("response", "id", id, "command", "prompt", "success", false, "error", mErrBusy)
		return
	}
	m.emit("response", "id", id, "command", "prompt", "success", true)
	m.cancelCompaction()
	m.pending = append(m.pending, n)
	if m.state == mExhausted || m.state == mCancelled {
		m.state = mIdle
	}
	m.ctx = append(m.ctx, 'u')
	m.startRun("prompt")
}

func (m *mdl) abort(id string) {
	m.cancel()
	m.cancelCompaction()
	if m.inFlight && m.calling {
		m.callGen++
		m.calling = false
		m.reply(pbTurn{Class: clAborted, Stop: policy.StopReasonAborted, Msg: mAborted}, false)
	}
	m.emit("response", "id", id, "command", "abort", "success", true)
}

func (m *mdl) getState() map[string]any {
	return map[string]any{
		"isStreaming": m.inFlight || len(m.pending) > 0, "messageCount": len(m.ctx),
		"autoCompactionEnabled": m.compEnabled, "sessionId": "session-1", "autoRetryEnabled": m.enabled,
		"isRetrying": m.open(), "retryAttempt": m.attempt, "retryState": m.state,
		"nextRetryAt": m.nextRetryAt(), "profile": policy.DefaultProfile,
		"model":         map[string]any{"id": "claude-sonnet-4-5", "provider": "anthropic", "api": "anthropic-messages"},
		"thinkingLevel": "off", "isCompacting": m.compWait, "steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time",
		"interruptMode": "immediate", "queuedMessageCount": 0,
	}
}

// nextRetryAt is when the running backoff wait ends, nil outside one.
func (m *mdl) nextRetryAt() any {
	if m.state != mBackoff {
		return nil
	}
	return m.retryAt
}

// checkPrompts resolves the prompts when no run is in flight and no chain
// is open; it runs after every event and command.
func (m *mdl) checkPrompts() {
	if len(m.pending) == 0 || m.inFlight || m.open() {
		return
	}
	for _, p := range m.pending {
		m.emit("prompt_resolved", "prompt", p)
	}
	m.pending = m.pending[:0]
}

func (m *mdl) do(a pbAction, id string) {
	switch a.Kind {
	case pbPrompt:
		m.prompt(id)
	case pbAbort:
		m.abort(id)
	case pbAbortRetry:
		m.emit("response", "id", id, "command", "abort_retry", "success", true)
		m.cancel()
	case pbSetAutoRetry:
		m.enabled = a.Enabled
		m.emit("response", "id", id, "command", "set_auto_retry", "success", true)
	case pbSettings:
		m.enabled, m.maxRetries, m.baseMs = a.Settings.Enabled, a.Settings.MaxRetries, a.Settings.BaseDelay.Milliseconds()
		return
	case pbGetState:
		m.emit("response", "id", id, "command", "get_state", "success", true, "data", m.getState())
	}
	m.checkPrompts()
}

// advanceTo fires every event due at or before t, in time order (ties in
// scheduling order), then moves time to t.
func (m *mdl) advanceTo(t int64) {
	for {
		i := -1
		for j, e := range m.queue {
			if e.at <= t && (i < 0 || e.at < m.queue[i].at || (e.at == m.queue[i].at && e.seq < m.queue[i].seq)) {
				i = j
			}
		}
		if i < 0 {
			break
		}
		e := m.queue[i]
		m.queue = append(m.queue[:i], m.queue[i+1:]...)
		m.now = e.at
		switch e.kind {
		case 0:
			if e.gen == m.callGen && m.calling {
				m.calling = false
				m.reply(e.turn, true)
			}
		case 1:
			m.elapsed(e.gen)
		case 2:
			if e.gen == m.compGen && m.compWait {
				m.compWait = false
				if m.canContinue() == "" {
					m.startRun("continue")
				}
			}
		}
		m.checkPrompts()
	}
	if t > m.now {
		m.now = t
	}
}

// mdlEngineLines collects the engine's compared lines as they are written
// to the sink it returns.
func mdlEngineLines() (trace.Sink, *[]string) {
	var lines []string
	return trace.SinkFunc(func(r *trace.Record) {
		raw := trace.AppendJSON(nil, r)
		var f map[string]any
		if err := json.Unmarshal(raw, &f); err != nil {
			panic(err)
		}
		typ, _ := f["type"].(string)
		if c, ok := mdlCanon(int64(f["t"].(float64)), typ, f); ok {
			lines = append(lines, c)
		}
	}), &lines
}

func mdlDiff(got, want []string, from int) string {
	var b strings.Builder
	n := max(len(got), len(want))
	for i := max(0, from-5); i < n; i++ {
		g, w := "", ""
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := "  "
		if g != w {
			mark = "!="
		}
		fmt.Fprintf(&b, "%s engine: %s\n   model:  %s\n", mark, g, w)
	}
	return b.String()
}

// TestModelSound: the engine and the reference model give the same filtered
// trace lines and responses, at the same times, under random interleavings,
// and end in the same state.
func TestModelSound(t *testing.T) {
	pbBudget(t)
	rapid.Check(t, func(t *rapid.T) {
		plan := pbDrawPlan(t)
		sink, got := mdlEngineLines()
		s, err := sim.NewSession(pbScenario(plan), sim.Options{Variant: "sound", Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		m := newMdl(plan)
		ids, compared := 0, 0
		compare := func(t *rapid.T) {
			if len(*got) != len(m.out) || strings.Join((*got)[compared:], "\n") != strings.Join(m.out[compared:], "\n") {
				for compared < len(*got) && compared < len(m.out) && (*got)[compared] == m.out[compared] {
					compared++
				}
				t.Fatalf("engine and model differ at line %d:\n%s", compared+1, mdlDiff(*got, m.out, compared))
			}
			compared = len(m.out)
		}
		actions := pbActions(func(a pbAction) {
			ids++
			id := fmt.Sprintf("a%d", ids)
			if a.Kind == pbNext {
				at, ok := s.Scheduler().NextAt()
				if !ok {
					return
				}
				a = pbAction{Kind: pbAdvance, Ms: at.Milliseconds() - s.Scheduler().Elapsed().Milliseconds()}
			}
			pbApply(s, a, id)
			if a.Kind == pbAdvance {
				m.advanceTo(m.now + a.Ms)
			} else {
				m.do(a, id)
			}
		}, false)
		actions[""] = compare
		t.Repeat(actions)

		for i := 0; i < pbMaxDrain && s.Scheduler().Step(); i++ {
		}
		m.advanceTo(math.MaxInt64 / 2)
		compare(t)
		f := s.Final()
		wantUnresolved := append([]int{}, m.pending...)
		if string(f.State) != m.state || f.Attempt != m.attempt || f.IsRetrying != m.open() ||
			fmt.Sprint(f.UnresolvedPrompts) != fmt.Sprint(wantUnresolved) {
			t.Fatalf("final: engine %s/%d/%v/%v, model %s/%d/%v/%v", f.State, f.Attempt, f.IsRetrying, f.UnresolvedPrompts,
				m.state, m.attempt, m.open(), wantUnresolved)
		}
	})
}
