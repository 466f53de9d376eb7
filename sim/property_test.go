package sim_test

// Property-based tests of the whole simulated session (pgregory.net/rapid,
// state-machine style with t.Repeat).
//
// Each check draws a plan (retry settings, compaction stub settings and a
// list of pbTurns scripted LLM replies of every class, with and without
// durationMs), builds a Session with no initial prompt and then lets rapid
// interleave the actions: prompt, abort, abort_retry, set_auto_retry,
// settings changes (Session.SetSettings), get_state, and time: advance by a drawn amount
// (Scheduler.RunUntil), fire one queue event (Scheduler.Step), or jump to the
// next due event. Commands are performed directly between queue steps and are
// followed by the scheduler's own post-event hook (Scheduler.AfterEach), so a
// command is observed exactly as a queue event would be.
//
// The invariants (pbHarness.observe and pbHarness.check) are stated on what
// can be observed: the trace records as they are written (Options.Sink),
// Session.State (its context summary), Snapshot, Unresolved and Quiescent. They are checked while the
// lines stream and after every action; at the end of a check the queue is
// run dry and everything is checked once more. "Open chain" is isRetrying;
// "at rest" is !isRetrying:
//
//   - no auto_retry_start follows an overflow reply (by message or usage), nor
//     any reply but a retryable error, and its errorMessage is that reply's;
//   - attempt is 0 whenever isRetrying is false, and right after every
//     auto_retry_end (checked on the snapshot when no transition followed the
//     end, and by the next auto_retry_start having attempt 1);
//   - each auto_retry_start has 1 <= attempt <= maxRetries = maxAttempts,
//     attempts are consecutive from 1 within a chain, and delayMs is
//     baseDelayMs * 2^(attempt-1), or 0 right after a mark_usage_limit_reached
//     that returned true (auth storage is asked only about usage limits);
//   - every chain ends with exactly one auto_retry_end (with the chain's last
//     attempt): the trace's chain state equals isRetrying after every action,
//     and no chain is open at quiescence; an auto_retry_end outside a chain
//     is allowed only as the maxRetries-0 end (attempt 0, the error, at once);
//   - no continue starts before the last delay has elapsed; a chain that does
//     not end by cancellation lasts exactly the sum of its delays and of the
//     durationMs of its continue runs' calls, a cancelled one no longer;
//   - with retry disabled (set_auto_retry or settings) no chain starts;
//   - at quiescence (no queued event, no run in flight) no prompt is
//     unresolved;
//   - a retried error has left the runtime context by the next observation
//     (the context is exactly what it was without it) and is still in the
//     history;
//   - subscribers get exactly the retry events the trace shows, in order,
//     and the whole trace passes sim.CheckSoundTrace at the end.
//
// Budget: README's `go test ./...` runs pbChecks x pbSteps (200 checks,
// about 60 actions each) per rapid test, and CI's soak step
// (RETRYSIM_SOAK=1, internal/testkit) pbSoakChecks (1000); nothing waits
// (virtual time), so the whole of `go test -race ./sim` stays well under
// 20 s on 2 cores. The budget is applied only when neither the
// -rapid.checks/-rapid.steps flags nor the RAPID_CHECKS/RAPID_STEPS
// variables are given, so a longer run is:
//
//	go test ./sim -run 'Properties|Model' -timeout 60m -rapid.checks=20000 -rapid.steps=200
//
// (or RAPID_CHECKS=20000 RAPID_STEPS=200 go test ./sim -run 'Properties|Model' -timeout 60m;
// rapid stops early, and passes, when the test deadline comes near).
// -short divides the checks by 5 and the steps by 2, as rapid does.

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// The budget: checks x average steps per check, for each rapid test
// (pbSoakChecks with RETRYSIM_SOAK=1).
const (
	pbChecks     = 200
	pbSoakChecks = 1000
	pbSteps      = 60
	// pbTurns scripted replies are drawn per check; calls beyond them get
	// {stopReason: stop}.
	pbTurns = 64
	// pbMaxDrain bounds the final run of the queue to quiescence.
	pbMaxDrain = 100_000
	// pbWindow is the context window of every plan (the scenario default).
	pbWindow = 200_000
)

var (
	pbUserSetOnce sync.Once
	pbUserSet     map[string]bool
)

// pbBudget applies the budget (pbChecks x pbSteps, pbSoakChecks with
// RETRYSIM_SOAK=1) to rapid's flags for the duration of t, unless the run
// gave them on the command line or in the environment.
func pbBudget(t *testing.T) {
	pbUserSetOnce.Do(func() {
		pbUserSet = map[string]bool{}
		flag.Visit(func(f *flag.Flag) { pbUserSet[f.Name] = true })
	})
	apply := func(name, env, value string) {
		f := flag.Lookup(name)
		if f == nil || pbUserSet[name] || os.Getenv(env) != "" {
			return
		}
		old := f.Value.String()
		if err := f.Value.Set(value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Value.Set(old) })
	}
	checks := pbChecks
	if os.Getenv(testkit.Soak) == "1" {
		checks = pbSoakChecks
	}
	apply("rapid.checks", "RAPID_CHECKS", strconv.Itoa(checks))
	apply("rapid.steps", "RAPID_STEPS", strconv.Itoa(pbSteps))
}

// pbClass is the class a scripted reply was drawn as. The tests trust the
// class they drew, not the engine's classifier (TestPropertiesSound checks
// the message tables against policy once, as a sanity check of the tables).
type pbClass int

const (
	clRetryable     pbClass = iota // error matching one alternative of the retryable regex
	clUsageLimit                   // retryable usage-limit error: auth storage is asked
	clOverflowMsg                  // error whose message is a context overflow
	clOverflowUsage                // retryable or fatal message, usage over the window
	clFatal                        // any other error
	clAborted                      // stopReason aborted (scripted, or an abort)
	clSuccess                      // stop or length
	clSuccessOver                  // stop over the window: compaction hand-off
	clToolUse                      // toolUse: the run calls again
)

var pbClassNames = []string{"retryable", "usageLimit", "overflowMsg", "overflowUsage", "fatal",
	"aborted", "success", "successOver", "toolUse"}

func (c pbClass) String() string { return pbClassNames[c] }

func (c pbClass) retryable() bool { return c == clRetryable || c == clUsageLimit }

// Every alternative of the retryable regex, including the documented "500"
// substring false positive.
var pbRetryableMsgs = []string{
	"529 overloaded_error: Overloaded",
	"rate_limit_error: rate limit hit",
	"Too Many Requests",
	"HTTP 429",
	"500 Internal Server Error",
	"502 Bad Gateway",
	"503",
	"504 Gateway Timeout",
	"service unavailable",
	"upstream server error",
	"internal error",
	"connection error: ECONNRESET",
	"fetch failed",
	"retry delay",
	"quota of 65000 units used",
}

// Usage-limit errors and the retryAfterMs auth storage must be told.
type pbUsageMsg struct {
	msg   string
	after float64
	has   bool
}

var pbUsageMsgs = []pbUsageMsg{
	{"You have reached your usage limit", 0, false},
	{"usage limit reached; retry-after-ms: 1500", 1500, true},
	{"usage_limit_reached, retry-after: 2", 2000, true},
	{"usage limit hit x-ratelimit-reset-ms: 2500", 2500, true},
	{"Usage limit; x-ratelimit-reset: 30", 30000, true},
}

var pbOverflowMsgs = []string{
	"prompt is too long: 213462 tokens > 200000 maximum",
	"context_length_exceeded",
	"request_too_large",
	"Your input exceeds the context window of this model",
	"400 (no body)",
	"This model's maximum context length is 128000 tokens",
}

var pbFatalMsgs = []string{
	"invalid_request_error: bad request",
	"authentication_error: invalid x-api-key",
	"permission denied",
	"model not found",
}

var pbOverUsage = scenario.Usage{Input: 190_000, CacheRead: 20_000} // 210 000 > pbWindow

// pbTurn is one scripted reply and what the tests know about it.
type pbTurn struct {
	Class      pbClass
	Stop       policy.StopReason
	Msg        string
	DurMs      int64
	Switch     bool    // switchModel: auth storage switches credentials
	After      float64 // usage limit: the retryAfterMs auth storage is told
	HasAfter   bool
	OverWindow bool
}

func (p pbTurn) String() string {
	s := p.Class.String()
	if p.Msg != "" {
		s += fmt.Sprintf("(%q)", p.Msg)
	}
	if p.DurMs > 0 {
		s += fmt.Sprintf("+%dms", p.DurMs)
	}
	if p.Switch {
		s += "+switch"
	}
	return s
}

// GoString keeps rapid's logs of drawn turns short.
func (p pbTurn) GoString() string { return p.String() }

func (p pbTurn) simTurn() scenario.Turn {
	t := scenario.Turn{StopReason: p.Stop, ErrorMessage: p.Msg, SwitchModel: p.Switch,
		Duration: time.Duration(p.DurMs) * time.Millisecond}
	if p.OverWindow {
		t.Usage = pbOverUsage
	}
	return t
}

// The classes are drawn with weights (retryable errors most often, so that
// chains are long enough to be interesting).
var pbClassWeights = []pbClass{
	clRetryable, clRetryable, clRetryable, clRetryable, clUsageLimit, clUsageLimit,
	clSuccess, clSuccess, clToolUse, clToolUse, clFatal, clOverflowMsg, clOverflowUsage,
	clAborted, clSuccessOver,
}

func pbTurnGen() *rapid.Generator[pbTurn] {
	return rapid.Custom(func(t *rapid.T) pbTurn {
		p := pbTurn{Class: rapid.SampledFrom(pbClassWeights).Draw(t, "class")}
		switch p.Class {
		case clRetryable:
			p.Stop, p.Msg = policy.StopReasonError, rapid.SampledFrom(pbRetryableMsgs).Draw(t, "msg")
		case clUsageLimit:
			u := rapid.SampledFrom(pbUsageMsgs).Draw(t, "usageMsg")
			p.Stop, p.Msg, p.After, p.HasAfter = policy.StopReasonError, u.msg, u.after, u.has
			p.Switch = rapid.Bool().Draw(t, "switchModel")
		case clOverflowMsg:
			p.Stop, p.Msg = policy.StopReasonError, rapid.SampledFrom(pbOverflowMsgs).Draw(t, "msg")
		case clOverflowUsage:
			p.Stop, p.OverWindow = policy.StopReasonError, true
			p.Msg = rapid.SampledFrom(append(append([]string{}, pbRetryableMsgs...), pbFatalMsgs...)).Draw(t, "msg")
		case clFatal:
			p.Stop, p.Msg = policy.StopReasonError, rapid.SampledFrom(pbFatalMsgs).Draw(t, "msg")
		case clAborted:
			p.Stop = policy.StopReasonAborted
			p.Msg = rapid.SampledFrom([]string{"", session.AbortedMessage}).Draw(t, "msg")
		case clSuccess:
			p.Stop = rapid.SampledFrom([]policy.StopReason{policy.StopReasonStop, policy.StopReasonLength}).Draw(t, "stop")
		case clSuccessOver:
			p.Stop, p.OverWindow = policy.StopReasonStop, true
		case clToolUse:
			p.Stop = policy.StopReasonToolUse
		}
		if rapid.Bool().Draw(t, "timed") {
			p.DurMs = int64(rapid.IntRange(1, 3000).Draw(t, "durationMs"))
		}
		return p
	})
}

// pbPlan is what a check draws before its actions.
type pbPlan struct {
	Settings    policy.Settings
	CompEnabled bool
	CompSucceed bool
	Turns       []pbTurn
}

func pbSettingsGen() *rapid.Generator[policy.Settings] {
	return rapid.Custom(func(t *rapid.T) policy.Settings {
		return policy.Settings{
			Enabled:    rapid.IntRange(0, 7).Draw(t, "disabledIf7") < 7,
			MaxRetries: rapid.IntRange(0, 6).Draw(t, "maxRetries"),
			BaseDelay:  time.Duration(rapid.IntRange(0, 5000).Draw(t, "baseDelayMs")) * time.Millisecond,
		}
	})
}

func pbDrawPlan(t *rapid.T) pbPlan {
	return pbPlan{
		Settings:    pbSettingsGen().Draw(t, "settings"),
		CompEnabled: rapid.IntRange(0, 3).Draw(t, "compactionDisabledIf3") < 3,
		CompSucceed: rapid.IntRange(0, 3).Draw(t, "compactionFailsIf3") < 3,
		Turns:       rapid.SliceOfN(pbTurnGen(), pbTurns, pbTurns).Draw(t, "turns"),
	}
}

func pbScenario(plan pbPlan) *scenario.Scenario {
	sc, err := scenario.Parse("property", []byte(`{"initialPrompt": false}`))
	if err != nil {
		panic(err)
	}
	sc.Settings = plan.Settings
	sc.ContextWindow = pbWindow
	sc.Compaction = scenario.Compaction{Enabled: plan.CompEnabled, Succeed: plan.CompSucceed}
	for _, p := range plan.Turns {
		sc.Turns = append(sc.Turns, p.simTurn())
	}
	return sc
}

// pbKind is a driving action.
type pbKind int

var pbKindNames = []string{"prompt", "abort", "abort_retry", "set_auto_retry", "settings", "get_state", "advance", "step", "next"}

func (k pbKind) String() string { return pbKindNames[k] }

// GoString keeps rapid's logs short.
func (k pbKind) GoString() string { return k.String() }

const (
	pbPrompt pbKind = iota
	pbAbort
	pbAbortRetry
	pbSetAutoRetry
	pbSettings
	pbGetState
	pbAdvance // RunUntil(now + Ms)
	pbStep    // fire one queue event
	pbNext    // RunUntil(the next due event's time)
)

type pbAction struct {
	Kind     pbKind
	Enabled  bool            // pbSetAutoRetry
	Settings policy.Settings // pbSettings
	Ms       int64           // pbAdvance
}

// pbApply performs a on the session: commands directly, followed by the
// scheduler's post-event hook, time through the scheduler. id is the
// command's response id.
func pbApply(s *sim.Session, a pbAction, id string) {
	sch := s.Scheduler()
	direct := func(f func()) {
		f()
		if hook := sch.AfterEach; hook != nil {
			hook()
		}
	}
	switch a.Kind {
	case pbPrompt:
		direct(func() { s.Do(scenario.Action{Do: "prompt", ID: id, Message: "p" + id}) })
	case pbAbort:
		direct(func() { s.Do(scenario.Action{Do: "abort", ID: id}) })
	case pbAbortRetry:
		direct(func() { s.Do(scenario.Action{Do: "abort_retry", ID: id}) })
	case pbSetAutoRetry:
		en := a.Enabled
		direct(func() { s.Do(scenario.Action{Do: "set_auto_retry", ID: id, Enabled: &en}) })
	case pbSettings:
		s.SetPolicy(policy.MustCompile(a.Settings))
	case pbGetState:
		direct(func() { s.Do(scenario.Action{Do: "get_state", ID: id}) })
	case pbAdvance:
		sch.RunUntil(sch.Elapsed() + time.Duration(a.Ms)*time.Millisecond)
	case pbStep:
		sch.Step()
	case pbNext:
		if at, ok := sch.NextAt(); ok {
			sch.RunUntil(at)
		}
	}
}

// pbActions returns the rapid actions, which draw a pbAction and pass it to
// do. The commands share one key so that time moves more often than
// commands interrupt it (rapid picks keys uniformly); withStep adds the
// single-event step.
func pbActions(do func(pbAction), withStep bool) map[string]func(*rapid.T) {
	m := map[string]func(*rapid.T){
		"prompt": func(*rapid.T) { do(pbAction{Kind: pbPrompt}) },
		"command": func(t *rapid.T) {
			a := pbAction{Kind: rapid.SampledFrom([]pbKind{pbAbort, pbAbortRetry, pbSetAutoRetry, pbSettings, pbGetState}).Draw(t, "command")}
			switch a.Kind {
			case pbSetAutoRetry:
				a.Enabled = rapid.Bool().Draw(t, "enabled")
			case pbSettings:
				a.Settings = pbSettingsGen().Draw(t, "settings")
			}
			do(a)
		},
		"advance": func(t *rapid.T) {
			do(pbAction{Kind: pbAdvance, Ms: int64(rapid.IntRange(0, 20000).Draw(t, "ms"))})
		},
		"next": func(*rapid.T) { do(pbAction{Kind: pbNext}) },
	}
	if withStep {
		m["step"] = func(*rapid.T) { do(pbAction{Kind: pbStep}) }
	}
	return m
}

// pbLine is the part of a trace line the checker reads.
type pbLine struct {
	T            int64  `json:"t"`
	Type         string `json:"type"`
	Kind         string `json:"kind"`
	Attempt      int    `json:"attempt"`
	MaxAttempts  int    `json:"maxAttempts"`
	DelayMs      int64  `json:"delayMs"`
	ErrorMessage string `json:"errorMessage"`
	Success      bool   `json:"success"`
	FinalError   string `json:"finalError"`
	Returns      bool   `json:"returns"`
	Message      struct {
		StopReason   string `json:"stopReason"`
		ErrorMessage string `json:"errorMessage"`
	} `json:"message"`
}

// pbHarness drives one session and checks the invariants.
type pbHarness struct {
	variant string
	plan    pbPlan
	s       *sim.Session
	set     policy.Settings // the settings in force (the test wrote them)
	ids     int

	// Chain bookkeeping from the trace.
	open       bool
	attempt    int   // attempt of the chain's last auto_retry_start
	chainStart int64 // t of the chain's first auto_retry_start
	budget     int64 // sum of the chain's delays and of its continue calls' durationMs
	lastStartT int64
	lastDelay  int64
	afterEnd   bool // an auto_retry_end with no transition after it yet
	switched   bool // the last mark_usage_limit_reached returned true

	// Replies: the n-th message_end is the n-th call, which took turn n.
	nME       int
	haveME    bool
	lastClass pbClass
	lastMsg   string
	lastMET   int64

	err error // first violation
}

func pbNewHarness(plan pbPlan, variant string) *pbHarness {
	h := &pbHarness{variant: variant, plan: plan, set: plan.Settings}
	s, err := sim.NewSession(pbScenario(plan), sim.Options{Variant: variant, Sink: trace.SinkFunc(func(r *trace.Record) {
		h.observe(trace.AppendJSON(nil, r))
	})})
	if err != nil {
		panic(err)
	}
	h.s = s
	s.Start()
	return h
}

func (h *pbHarness) fail(format string, args ...any) {
	if h.err == nil {
		h.err = fmt.Errorf(format, args...)
	}
}

func (h *pbHarness) apply(a pbAction) {
	h.ids++
	switch a.Kind {
	case pbSetAutoRetry:
		h.set.Enabled = a.Enabled
	case pbSettings:
		h.set = a.Settings
	}
	pbApply(h.s, a, "a"+strconv.Itoa(h.ids))
}

func (h *pbHarness) turn(i int) pbTurn {
	if i < len(h.plan.Turns) {
		return h.plan.Turns[i]
	}
	return pbTurn{Class: clSuccess, Stop: policy.StopReasonStop}
}

// classOf is the class of the n-th reply: its turn's, or aborted when an
// abort ended the call.
func (h *pbHarness) classOf(n int, l *pbLine) pbClass {
	p := h.turn(n)
	if string(p.Stop) == l.Message.StopReason && p.Msg == l.Message.ErrorMessage {
		return p.Class
	}
	if l.Message.StopReason == string(policy.StopReasonAborted) && l.Message.ErrorMessage == session.AbortedMessage {
		return clAborted
	}
	h.fail("message_end #%d %+v matches neither turn %d (%v) nor an abort", n+1, l.Message, n, p)
	return clFatal
}

// delayMs is baseDelayMs * 2^(attempt-1), computed here.
func pbDelayMs(base time.Duration, attempt int) int64 {
	d := base.Milliseconds()
	for i := 1; i < attempt; i++ {
		d *= 2
	}
	return d
}

// observe checks each trace line as it is written (it may run with the
// Controller locked: it reads only the session's context and history).
func (h *pbHarness) observe(raw []byte) {
	var l pbLine
	if err := json.Unmarshal(raw, &l); err != nil {
		h.fail("trace line %q: %v", raw, err)
		return
	}
	switch l.Type {
	case "transition":
		h.afterEnd = false
	case "message_end":
		c := h.classOf(h.nME, &l)
		h.nME++
		h.haveME, h.lastClass, h.lastMsg, h.lastMET = true, c, l.Message.ErrorMessage, l.T
	case "agent_run":
		if l.Kind == "continue" && h.open {
			if l.T < h.lastStartT+h.lastDelay {
				h.fail("t=%d: continue before its delay elapsed (auto_retry_start at %d, delayMs %d)",
					l.T, h.lastStartT, h.lastDelay)
			}
			// The run's first call takes the next turn.
			h.budget += h.turn(h.nME).DurMs
		}
	case "mark_usage_limit_reached":
		if !h.haveME || h.lastClass != clUsageLimit {
			h.fail("t=%d: auth storage asked about a reply that is not a usage-limit error (%v %q)", l.T, h.lastClass, h.lastMsg)
		}
		h.switched = l.Returns
	case "auto_retry_start":
		h.onStart(&l)
	case "auto_retry_end":
		h.onEnd(&l)
	}
}

func (h *pbHarness) onStart(l *pbLine) {
	switch {
	case !h.set.Enabled:
		h.fail("t=%d: auto_retry_start attempt %d while retry is disabled", l.T, l.Attempt)
	case !h.haveME:
		h.fail("t=%d: auto_retry_start with no reply before it", l.T)
	case h.lastClass == clOverflowMsg || h.lastClass == clOverflowUsage:
		h.fail("t=%d: auto_retry_start triggered by an overflow reply (%v %q)", l.T, h.lastClass, h.lastMsg)
	case !h.lastClass.retryable():
		h.fail("t=%d: auto_retry_start triggered by a %v reply %q", l.T, h.lastClass, h.lastMsg)
	case l.ErrorMessage != h.lastMsg:
		h.fail("t=%d: auto_retry_start errorMessage %q, the reply was %q", l.T, l.ErrorMessage, h.lastMsg)
	}
	if l.Attempt < 1 || l.Attempt > h.set.MaxRetries || l.MaxAttempts != h.set.MaxRetries {
		h.fail("t=%d: auto_retry_start attempt %d maxAttempts %d, want 1 <= attempt <= maxRetries = %d",
			l.T, l.Attempt, l.MaxAttempts, h.set.MaxRetries)
	}
	want := 1
	if h.open {
		want = h.attempt + 1
	}
	if l.Attempt != want {
		h.fail("t=%d: auto_retry_start attempt %d, want %d (attempts are consecutive within a chain)", l.T, l.Attempt, want)
	}
	wantDelay := pbDelayMs(h.set.BaseDelay, l.Attempt)
	if h.switched {
		wantDelay = 0
	}
	if l.DelayMs != wantDelay {
		h.fail("t=%d: auto_retry_start attempt %d delayMs %d, want %d (base %d ms, credential switch %v)",
			l.T, l.Attempt, l.DelayMs, wantDelay, h.set.BaseDelay.Milliseconds(), h.switched)
	}
	h.switched = false
	if !h.open {
		h.open, h.chainStart, h.budget = true, l.T, 0
	}
	h.attempt = l.Attempt
	h.budget += l.DelayMs
	h.lastStartT, h.lastDelay = l.T, l.DelayMs
	h.afterEnd = false

	// The retried error has left the runtime context (the history, the
	// trace's message_end lines, keeps it): records are written once the
	// step that retries is over.
	if ctx := h.s.State().Context; ctx.Last == session.RoleAssistant {
		h.fail("t=%d: at auto_retry_start the runtime context still ends with an assistant message (%d messages)", l.T, ctx.Count)
	}
}

func (h *pbHarness) onEnd(l *pbLine) {
	h.afterEnd = true
	if !h.open {
		// The one documented exception: maxRetries 0 ends at once with
		// attempt 0 and the error.
		if l.Success || l.Attempt != 0 || !h.set.Enabled || h.set.MaxRetries != 0 ||
			!h.haveME || !h.lastClass.retryable() || l.FinalError != h.lastMsg || l.T != h.lastMET {
			h.fail("t=%d: auto_retry_end (success %v, attempt %d, %q) outside a chain", l.T, l.Success, l.Attempt, l.FinalError)
		}
		return
	}
	if l.Attempt != h.attempt {
		h.fail("t=%d: auto_retry_end attempt %d, the chain's last attempt is %d", l.T, l.Attempt, h.attempt)
	}
	lasted := l.T - h.chainStart
	if !l.Success && l.FinalError == policy.RetryCancelled {
		if lasted > h.budget {
			h.fail("t=%d: cancelled chain lasted %d ms, more than its delays and continue calls (%d ms)", l.T, lasted, h.budget)
		}
	} else if lasted != h.budget {
		h.fail("t=%d: chain (success %v, %q) lasted %d ms, want exactly its delays plus its continue calls: %d ms",
			l.T, l.Success, l.FinalError, lasted, h.budget)
	}
	h.open, h.attempt = false, 0
}

// check is the invariant run after every action.
func (h *pbHarness) check() error {
	if h.err != nil {
		return h.err
	}
	snap := h.s.Snapshot()
	switch {
	case !snap.Open && snap.Attempt != 0:
		return fmt.Errorf("attempt %d while isRetrying is false (state %s)", snap.Attempt, snap.State)
	case h.afterEnd && snap.Attempt != 0:
		return fmt.Errorf("attempt %d right after auto_retry_end", snap.Attempt)
	case snap.Open != h.open:
		return fmt.Errorf("isRetrying %v but the trace says a chain is open: %v (state %s)", snap.Open, h.open, snap.State)
	case snap.Open && snap.Attempt != h.attempt:
		return fmt.Errorf("attempt %d during a chain whose last auto_retry_start had attempt %d", snap.Attempt, h.attempt)
	}
	if h.s.Quiescent() {
		if snap.Open || h.open {
			return fmt.Errorf("quiescent with a chain still open (attempt %d, state %s): it never ends", snap.Attempt, snap.State)
		}
		if u := h.s.Unresolved(); len(u) > 0 {
			return fmt.Errorf("quiescent with unresolved prompts %v", u)
		}
	}
	return nil
}

// finish runs the queue dry and checks once more, then the whole trace.
func (h *pbHarness) finish() error {
	sch := h.s.Scheduler()
	for i := 0; i < pbMaxDrain && sch.Step(); i++ {
	}
	if sch.Pending() > 0 {
		return fmt.Errorf("the session did not quiesce within %d events", pbMaxDrain)
	}
	if err := h.check(); err != nil {
		return err
	}
	h.s.WriteFinal()
	if err := h.check(); err != nil {
		return err
	}
	records, err := trace.Parse(h.s.Trace().Bytes())
	if err != nil {
		return err
	}
	return sim.CheckSoundTrace(records)
}

// tail is the end of the trace, for failure messages.
func (h *pbHarness) tail(n int) string {
	lines := strings.Split(strings.TrimRight(string(h.s.Trace().Bytes()), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// pbProperty is the property: a drawn plan, then rapid's interleaving of
// actions with the invariants after each, then quiescence.
func pbProperty(variant string) func(*rapid.T) {
	return func(t *rapid.T) {
		h := pbNewHarness(pbDrawPlan(t), variant)
		fail := func(t *rapid.T, err error) {
			t.Fatalf("%s: %v\n--- trace (end)\n%s", variant, err, h.tail(40))
		}
		actions := pbActions(h.apply, true)
		actions[""] = func(t *rapid.T) {
			if err := h.check(); err != nil {
				fail(t, err)
			}
		}
		t.Repeat(actions)
		if err := h.finish(); err != nil {
			fail(t, err)
		}
	}
}

// TestPropertiesSound: on the sound variant, under random interleavings of
// replies of every class, time, commands, new prompts and settings changes,
// every invariant of the issue holds after every action and at quiescence.
func TestPropertiesSound(t *testing.T) {
	t.Run("message-tables", pbCheckTables)
	pbBudget(t)
	rapid.Check(t, pbProperty("sound"))
}

// pbCheckTables checks that the drawn messages are of the class the tests
// believe (a sanity check of the test data against the classifier).
func pbCheckTables(t *testing.T) {
	now := time.UnixMilli(1771200000000)
	out := func(msg string, u scenario.Usage) classify.Outcome {
		return classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: msg, InputTokens: u.Input, CacheReadTokens: u.CacheRead}, pbWindow, now)
	}
	for _, m := range pbRetryableMsgs {
		if o := out(m, scenario.Usage{}); o.Class != classify.ClassRetryable || o.UsageLimit {
			t.Errorf("%q: class %v, usage limit %v; want retryable, not a usage limit", m, o.Class, o.UsageLimit)
		}
		if o := out(m, pbOverUsage); o.Class != classify.ClassOverflow {
			t.Errorf("%q over the window: class %v, want overflow", m, o.Class)
		}
	}
	for _, u := range pbUsageMsgs {
		o := out(u.msg, scenario.Usage{})
		if o.Class != classify.ClassRetryable || !o.UsageLimit {
			t.Errorf("%q: class %v, want a retryable usage limit", u.msg, o.Class)
		}
		if o.HasRetryAfter != u.has || (o.HasRetryAfter && o.RetryAfterMs != u.after) {
			t.Errorf("%q: retryAfterMs %v %v, want %v %v", u.msg, o.RetryAfterMs, o.HasRetryAfter, u.after, u.has)
		}
	}
	for _, m := range pbOverflowMsgs {
		if o := out(m, scenario.Usage{}); o.Class != classify.ClassOverflow {
			t.Errorf("%q: class %v, want overflow", m, o.Class)
		}
	}
	for _, m := range pbFatalMsgs {
		if o := out(m, scenario.Usage{}); o.Class != classify.ClassFatal {
			t.Errorf("%q: class %v, want fatal", m, o.Class)
		}
		if o := out(m, pbOverUsage); o.Class != classify.ClassOverflow {
			t.Errorf("%q over the window: class %v, want overflow", m, o.Class)
		}
	}
	over := classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonStop, InputTokens: pbOverUsage.Input, CacheReadTokens: pbOverUsage.CacheRead}, pbWindow, now)
	if !over.Overflow {
		t.Errorf("a stop reply over the window is not an overflow")
	}
}

// pbRunPlan runs fixed actions on a fixed plan and returns the first
// violation, or nil.
func pbRunPlan(plan pbPlan, variant string, actions []pbAction) (err error, trace string) {
	h := pbNewHarness(plan, variant)
	if err := h.check(); err != nil {
		return err, h.tail(40)
	}
	for _, a := range actions {
		h.apply(a)
		if err := h.check(); err != nil {
			return err, h.tail(40)
		}
	}
	return h.finish(), h.tail(40)
}

// pbRecorder is a rapid.TB that records a failure instead of failing the
// test, so a test can assert that rapid finds one.
type pbRecorder struct {
	name   string
	failed bool
	out    strings.Builder
}

func (r *pbRecorder) Helper()      {}
func (r *pbRecorder) Name() string { return r.name }
func (r *pbRecorder) Logf(format string, args ...any) {
	fmt.Fprintf(&r.out, format+"\n", args...)
}
func (r *pbRecorder) Log(args ...any)                  { fmt.Fprintln(&r.out, args...) }
func (r *pbRecorder) Skipf(format string, args ...any) { r.Logf("skip: "+format, args...) }
func (r *pbRecorder) Skip(args ...any)                 { r.Log(args...) }
func (r *pbRecorder) SkipNow()                         {}
func (r *pbRecorder) Errorf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}
func (r *pbRecorder) Error(args ...any) { r.failed = true; r.Log(args...) }
func (r *pbRecorder) Fatalf(format string, args ...any) {
	r.failed = true
	r.Logf(format, args...)
}
func (r *pbRecorder) Fatal(args ...any) { r.failed = true; r.Log(args...) }
func (r *pbRecorder) FailNow()          { r.failed = true }
func (r *pbRecorder) Fail()             { r.failed = true }
func (r *pbRecorder) Failed() bool      { return r.failed }

// pbWithFlags sets rapid flags for the duration of f.
func pbWithFlags(t *testing.T, values map[string]string, f func()) {
	for name, v := range values {
		fl := flag.Lookup(name)
		if fl == nil {
			t.Fatalf("no flag %s", name)
		}
		old := fl.Value.String()
		if err := fl.Value.Set(v); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = fl.Value.Set(old) }()
	}
	f()
}

// pbShrinkTime is the shrinking budget (rapid.shrinktime) of a test that
// requires rapid to find a counterexample and only logs it: d with -v,
// where the log is shown, else none. Shrinking cannot change the verdict:
// rapid keeps a smaller case only if it fails at the same place (the same
// traceback), and the test has passed once the first one is found.
func pbShrinkTime(d string) string {
	if testing.Verbose() {
		return d
	}
	return "0s"
}

// TestPropertiesFailOnOriginal: the same properties fail on the original
// variant, so they can fail. Two parts, each of which must find a
// violation:
//   - hazards: fixed interleavings of the original's documented hazards (H1
//     fatal error in a retried run, H2/H8 abort_retry during the retried
//     run, H3 retry switched off mid-chain, H1 overflow in a retried run);
//     each must violate an invariant on original and none on sound;
//   - rapid: the very property of TestPropertiesSound, run by rapid.Check
//     on the original variant against a recording rapid.TB; rapid must
//     report a failure (its counterexample is logged). Fail files are
//     not written (-rapid.nofailfile for this run only) and shrinking is
//     bounded to a second, and done only with -v (pbShrinkTime).
//
// The test fails if the original stops violating the properties.
func TestPropertiesFailOnOriginal(t *testing.T) {
	pbBudget(t)
	ok := func(msg string) pbTurn { return pbTurn{Class: clSuccess, Stop: policy.StopReasonStop, Msg: msg} }
	retry := pbTurn{Class: clRetryable, Stop: policy.StopReasonError, Msg: "529 overloaded_error: Overloaded"}
	def := policy.DefaultSettings()
	hazards := []struct {
		name    string
		plan    pbPlan
		actions []pbAction
	}{
		{"H1-fatal-in-retried-run", pbPlan{Settings: def, CompEnabled: true, CompSucceed: true, Turns: []pbTurn{
			retry, {Class: clFatal, Stop: policy.StopReasonError, Msg: "invalid_request_error: bad request"}}},
			[]pbAction{{Kind: pbPrompt}, {Kind: pbAdvance, Ms: 3000}}},
		{"H2-abort-retry-during-retried-run", pbPlan{Settings: def, CompEnabled: true, CompSucceed: true, Turns: []pbTurn{
			retry, func() pbTurn { p := ok(""); p.DurMs = 1000; return p }()}},
			[]pbAction{{Kind: pbPrompt}, {Kind: pbAdvance, Ms: 2500}, {Kind: pbAbortRetry}, {Kind: pbAdvance, Ms: 1000}}},
		{"H3-retry-disabled-mid-chain", pbPlan{Settings: def, CompEnabled: true, CompSucceed: true, Turns: []pbTurn{retry, retry}},
			[]pbAction{{Kind: pbPrompt}, {Kind: pbSetAutoRetry, Enabled: false}, {Kind: pbAdvance, Ms: 3000}}},
		{"H1-overflow-in-retried-run", pbPlan{Settings: def, CompEnabled: false, Turns: []pbTurn{
			retry, {Class: clOverflowMsg, Stop: policy.StopReasonError, Msg: "context_length_exceeded"}}},
			[]pbAction{{Kind: pbPrompt}, {Kind: pbAdvance, Ms: 3000}}},
	}
	t.Run("hazards", func(t *testing.T) {
		for _, hz := range hazards {
			if err, tr := pbRunPlan(hz.plan, "sound", hz.actions); err != nil {
				t.Errorf("%s: sound violates: %v\n%s", hz.name, err, tr)
			}
			err, tr := pbRunPlan(hz.plan, "original", hz.actions)
			if err == nil {
				t.Errorf("%s: original no longer violates any property\n%s", hz.name, tr)
				continue
			}
			t.Logf("%s: original violates: %v", hz.name, err)
		}
	})
	t.Run("rapid", func(t *testing.T) {
		rec := &pbRecorder{name: t.Name()}
		pbWithFlags(t, map[string]string{"rapid.nofailfile": "true", "rapid.shrinktime": pbShrinkTime("1s"), "rapid.failfile": ""}, func() {
			rapid.Check(rec, pbProperty("original"))
		})
		if !rec.failed {
			t.Fatalf("rapid found no violation of the properties on the original variant\n%s", rec.out.String())
		}
		out := rec.out.String()
		if len(out) > 6000 {
			out = out[:6000] + "\n... (cut)"
		}
		t.Logf("rapid's counterexample on original:\n%s", out)
	})
}
