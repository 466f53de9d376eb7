package retry_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// tblNow is the wall clock Decide is given (only retry hints read it).
var tblNow = time.Unix(1_700_000_000, 0)

const (
	tblRetryMsg = "529 overloaded_error"
	tblUsageMsg = "usage limit reached; retry-after-ms: 1500" // hint: 1500 ms
)

// tblMessages are the messages an input is decided with. Cancelling inputs
// get a message too, to show it is not used as finalError.
func tblMessages(in retry.Input) []string {
	switch in {
	case retry.InputRetryable:
		return []string{tblRetryMsg, tblUsageMsg}
	case retry.InputOverflow:
		return []string{"prompt is too long: 213462 tokens > 200000 maximum"}
	case retry.InputFatal:
		return []string{"401 invalid x-api-key"}
	case retry.InputContinueFailed:
		return []string{"cannot continue from an assistant message"}
	case retry.InputAborted:
		return []string{"Request was aborted"}
	}
	return []string{""}
}

// tblCase is one (snapshot, settings, message) a rule is decided with.
type tblCase struct {
	snap retry.Snapshot
	set  retry.Settings
	msg  string
}

func (c tblCase) String() string {
	return fmt.Sprintf("snapshot %+v, settings %+v, message %q", c.snap, c.set, c.msg)
}

// holds reports whether g holds for c (with the Cause Decide works out).
func (c tblCase) holds(g retry.Guard, in retry.Input) bool {
	o := tblOutcome(c.msg)
	return g.Holds(c.snap, &c.set, retry.DecisionForTest(c.snap, in, &o, &c.set))
}

// tblOutcome is msg as the error reply it is, classified as the
// Controller classifies it.
func tblOutcome(msg string) classify.Outcome {
	return classify.ClassifyReply(classify.AssistantMessage{StopReason: classify.StopReasonError, ErrorMessage: msg}, 0, tblNow)
}

// tblExtras are the opt-in settings the enumeration adds to each base:
// none, a fallback model, a 1 s ceiling on the wait, both.
var tblExtras = []func(*retry.Settings){
	func(*retry.Settings) {},
	func(s *retry.Settings) { s.Fallback = []string{"model-b"} },
	func(s *retry.Settings) { s.RetryAfter.MaxWait = time.Second },
	func(s *retry.Settings) { s.Fallback = []string{"model-b"}; s.RetryAfter.MaxWait = time.Second },
}

// tblCases enumerates snapshots of state st (attempt 0 in the rest states,
// where the sound variant keeps it; 1..5 with an open chain in backoff and
// continuing; the session's model or the fallback model) and settings
// (enabled or not, maxRetries 0..4, two base delays, each of tblExtras),
// with every message of in.
func tblCases(st retry.State, in retry.Input) []tblCase {
	attempts := []int{0}
	if !st.AtRest() {
		attempts = []int{1, 2, 3, 4, 5}
	}
	var out []tblCase
	for _, enabled := range []bool{true, false} {
		for maxRetries := 0; maxRetries <= 4; maxRetries++ {
			for _, base := range []time.Duration{2 * time.Second, 750 * time.Millisecond} {
				for _, extra := range tblExtras {
					for _, model := range []int{0, 1} {
						for _, a := range attempts {
							for _, msg := range tblMessages(in) {
								c := tblCase{
									snap: tblSnap(st, a, !st.AtRest()),
									set:  retry.Settings{Enabled: enabled, MaxRetries: maxRetries, BaseDelay: base},
									msg:  msg,
								}
								c.snap.Model = model
								extra(&c.set)
								out = append(out, c)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// tblSnap is a snapshot of state st as the sound variant has it: one
// cancellable backoff wait running in backoff, none elsewhere.
func tblSnap(st retry.State, attempt int, open bool) retry.Snapshot {
	s := retry.Snapshot{State: st, Attempt: attempt, Open: open}
	if st == retry.StateBackoff {
		s.Armed, s.Controlled = 1, true
	}
	return s
}

// tblWant is what the policy must decide, written from the seed document
// and the sound variant's contract, independently of the table.
type tblWant struct {
	event   string // "" when the pair is ignored
	next    retry.Snapshot
	effects []tblEffect
}

// tblOracle is the sound policy written as code: the expected event, next
// snapshot and exact effects for any snapshot (any attempt), input,
// message and settings.
func tblOracle(s retry.Snapshot, in retry.Input, msg string, set retry.Settings) tblWant {
	k := s.Attempt
	ignored := tblWant{next: s}
	end := func(event string, to retry.State, success bool, attempt int, final string, release bool) tblWant {
		w := tblWant{event: event, next: s}
		w.next.State, w.next.Attempt = to, 0
		w.effects = append(w.effects, tblEffect{Kind: retry.StepEmitEnd, End: retry.AutoRetryEnd{Success: success, Attempt: attempt, FinalError: final}})
		if release {
			w.next.Open = false
			w.effects = append(w.effects, tblEffect{Kind: retry.StepRelease})
		}
		return w
	}
	ask := msg == tblUsageMsg // the start and the wait wait for auth storage's answer
	retryAt := func(attempt int) tblWant {
		delay := set.BaseDelay << (attempt - 1)
		w := tblWant{event: "retry", next: retry.Snapshot{State: retry.StateBackoff, Attempt: attempt, Open: true, Armed: s.Armed + 1, Controlled: true, Model: s.Model}}
		if ask {
			w.effects = append(w.effects, tblEffect{Kind: retry.StepAskAuth, RetryAfterMs: 1500, HasRetryAfter: true})
		}
		w.effects = append(w.effects,
			tblEffect{Kind: retry.StepEmitStart, Start: retry.AutoRetryStart{Attempt: attempt, MaxAttempts: set.MaxRetries, DelayMs: float64(delay.Milliseconds()), ErrorMessage: msg}, Pending: ask},
			tblEffect{Kind: retry.StepDropError},
			tblEffect{Kind: retry.StepArmTimer, Delay: delay, Pending: ask},
		)
		return w
	}
	// The opt-in ways out: the next model (retry_fallback, then attempt 1
	// with no wait), or the end at once when the wait is too long.
	fallback := func(askFirst bool) tblWant {
		w := tblWant{event: "fallback", next: retry.Snapshot{State: retry.StateBackoff, Attempt: 1, Open: true, Armed: s.Armed + 1, Controlled: true, Model: s.Model + 1}}
		pending := askFirst && ask
		if pending {
			w.effects = append(w.effects, tblEffect{Kind: retry.StepAskAuth, RetryAfterMs: 1500, HasRetryAfter: true})
		}
		w.effects = append(w.effects,
			tblEffect{Kind: retry.StepFallback, Model: s.Model + 1},
			tblEffect{Kind: retry.StepEmitStart, Start: retry.AutoRetryStart{Attempt: 1, MaxAttempts: set.MaxRetries, ErrorMessage: msg}, Pending: pending},
			tblEffect{Kind: retry.StepDropError},
			tblEffect{Kind: retry.StepArmTimer, Pending: pending},
		)
		return w
	}
	failFast := func(wait time.Duration, release bool) tblWant {
		text := fmt.Sprintf("Provider requested %dms wait, exceeds retry.maxDelayMs (%dms). Original error: %s", wait.Milliseconds(), set.RetryAfter.MaxWait.Milliseconds(), msg)
		w := end("fail_fast", retry.StateExhausted, false, k+1, text, release)
		if ask {
			w.effects = append([]tblEffect{{Kind: retry.StepAskAuth, RetryAfterMs: 1500, HasRetryAfter: true}}, w.effects...)
		}
		return w
	}
	// optIn decides a retryable failure the opt-in settings change, ok
	// false when they do not apply.
	optIn := func(release bool) (tblWant, bool) {
		left := s.Model < len(set.Fallback)
		allowed := k < set.MaxRetries
		wait := set.BaseDelay << k
		tooLong := set.RetryAfter.MaxWait > 0 && wait > set.RetryAfter.MaxWait
		switch {
		case !set.Enabled:
			return tblWant{}, false
		case !allowed && left:
			return fallback(false), true
		case allowed && tooLong && left:
			return fallback(true), true
		case allowed && tooLong:
			return failFast(wait, release), true
		}
		return tblWant{}, false
	}
	switch s.State {
	case retry.StateIdle, retry.StateExhausted, retry.StateCancelled:
		switch in {
		case retry.InputRetryable:
			if w, ok := optIn(false); ok {
				return w
			}
			switch {
			case !set.Enabled:
				return ignored
			case k >= set.MaxRetries: // maxRetries 0: ends at once, no start, chain never opened
				return end("exhaust", retry.StateExhausted, false, k, msg, false)
			default:
				return retryAt(k + 1)
			}
		case retry.InputPrompt:
			if s.State != retry.StateIdle {
				w := tblWant{event: "prompt", next: s}
				w.next.State = retry.StateIdle
				return w
			}
		}
		return ignored
	case retry.StateBackoff:
		switch in {
		case retry.InputElapsed:
			// The wait is over (none cancellable); the agent continues now.
			w := tblWant{event: "elapse", next: s, effects: []tblEffect{{Kind: retry.StepWake}, {Kind: retry.StepContinue}}}
			w.next.State, w.next.Armed, w.next.Controlled = retry.StateContinuing, s.Armed-1, false
			return w
		case retry.InputAbortRetry, retry.InputAbort:
			w := end("cancel", retry.StateCancelled, false, k, retry.RetryCancelled, true)
			if s.Controlled { // the running wait is disarmed
				w.next.Armed, w.next.Controlled = s.Armed-1, false
				w.effects = append([]tblEffect{{Kind: retry.StepCancelTimer}}, w.effects...)
			}
			return w
		}
		return ignored
	case retry.StateContinuing:
		switch in {
		case retry.InputSuccess:
			return end("succeed", retry.StateIdle, true, k, "", true)
		case retry.InputRetryable:
			if w, ok := optIn(true); ok {
				return w
			}
			switch {
			case !set.Enabled:
				return end("fail", retry.StateExhausted, false, k, msg, true)
			case k >= set.MaxRetries:
				return end("exhaust", retry.StateExhausted, false, k, msg, true)
			default:
				return retryAt(k + 1)
			}
		case retry.InputFatal, retry.InputOverflow, retry.InputContinueFailed:
			return end("fail", retry.StateExhausted, false, k, msg, true)
		case retry.InputNoMessage:
			return end("fail", retry.StateExhausted, false, k, "Agent run ended without an assistant message", true)
		case retry.InputAborted, retry.InputAbortRetry, retry.InputAbort:
			return end("cancel", retry.StateCancelled, false, k, "Retry cancelled", true)
		}
		return ignored
	}
	panic("unknown state " + string(s.State))
}

// tblFirstRule returns the index of the rule whose guard holds first for
// (state, input), as the table's order defines it (-1: none).
func tblFirstRule(c tblCase, in retry.Input) int {
	rules := tblRules
	for _, i := range retry.Sound().RulesFor(c.snap.State, in) {
		if c.holds(rules[i].Guard, in) {
			return i
		}
	}
	return -1
}

// tblRules are the sound table's rules, copied once: Rules returns a new
// copy at every call, and the enumeration reads them per case.
var tblRules = retry.Sound().Rules()

// tblEffect is an effect with the event it emits spelled out.
type tblEffect struct {
	Kind          retry.Step
	Start         retry.AutoRetryStart
	End           retry.AutoRetryEnd
	Delay         time.Duration
	RetryAfterMs  float64
	HasRetryAfter bool
	Pending       bool
	Model         int
}

// tblView spells out d's effects.
func tblView(d *retry.Decision) []tblEffect {
	var out []tblEffect
	fx := d.Effects()
	for i := range fx {
		e := &fx[i]
		v := tblEffect{Kind: e.Kind, Pending: e.Pending}
		switch e.Kind {
		case retry.StepAskAuth:
			v.RetryAfterMs, v.HasRetryAfter = d.RetryAfter()
		case retry.StepEmitStart:
			v.Start = d.Start(e)
		case retry.StepEmitEnd:
			v.End = d.End(e)
		case retry.StepArmTimer:
			v.Delay = e.Delay
		case retry.StepFallback:
			v.Model = e.Model
		}
		out = append(out, v)
	}
	return out
}

// tblDecide decides msg as the error reply it is, classified as the
// Controller classifies it.
func tblDecide(s retry.Snapshot, in retry.Input, msg string, set retry.Settings) retry.Decision {
	var d retry.Decision
	o := tblOutcome(msg)
	retry.Sound().Decide(&d, s, in, &o, retry.MustCompile(set))
	return d
}

// tblCheck decides c and compares the decision with the oracle.
func tblCheck(t *testing.T, c tblCase, in retry.Input) retry.Decision {
	t.Helper()
	d := tblDecide(c.snap, in, c.msg, c.set)
	w := tblOracle(c.snap, in, c.msg, c.set)
	if d.Rule == nil {
		t.Fatalf("%s on %s: no rule applied", in, c)
	}
	if d.Rule.Event != w.event {
		t.Errorf("%s on %s: rule event %q, want %q", in, c, d.Rule.Event, w.event)
	}
	if d.Next != w.next {
		t.Errorf("%s on %s: next %+v, want %+v", in, c, d.Next, w.next)
	}
	wantEdge := fsm.Edge{From: string(c.snap.State), Event: w.event, To: string(w.next.State)}
	if d.Edge() != wantEdge {
		t.Errorf("%s on %s: edge %v, want %v", in, c, d.Edge(), wantEdge)
	}
	if got := tblView(&d); !slices.Equal(got, w.effects) {
		t.Errorf("%s on %s: effects\n got %+v\nwant %+v", in, c, got, w.effects)
	}
	return d
}

// TestSoundEveryRule exercises every rule of the sound table (transitions
// and ignored pairs) from every state in its From, with every snapshot and
// settings the enumeration has for which that rule is the one that applies:
// Decide must pick exactly that rule, and its edge, next state, attempt
// change, open flag and effects (kinds and payloads) must be the oracle's.
// A rule that no case reaches (shadowed by an earlier guard) fails.
func TestSoundEveryRule(t *testing.T) {
	if len(retry.Sound().Rules()) == 0 {
		t.Fatal("empty table")
	}
	for i := range retry.Sound().Rules() {
		r := &tblRules[i]
		for _, st := range r.From {
			name := fmt.Sprintf("%02d/%s/%s/%s", i, st, r.Input, r.Guard.Name)
			t.Run(name, func(t *testing.T) {
				applied := 0
				for _, c := range tblCases(st, r.Input) {
					if !c.holds(r.Guard, r.Input) || tblFirstRule(c, r.Input) != i {
						continue
					}
					applied++
					d := tblCheck(t, c, r.Input)
					if d.RuleIndex != i {
						t.Fatalf("Decide applied rule %+v, want rule %d", *d.Rule, i)
					}
					if r.Ignored() {
						if d.Next != c.snap || len(tblView(&d)) != 0 {
							t.Errorf("ignored rule changed something: next %+v, effects %+v", d.Next, tblView(&d))
						}
						continue
					}
					if d.Next.State != r.To {
						t.Errorf("next state %s, rule's To %s", d.Next.State, r.To)
					}
					if to, ok := retry.Sound().Machine().Lookup(string(st), r.Event); !ok || to != string(r.To) {
						t.Errorf("machine: Lookup(%s, %s) = %q, %v; want %s", st, r.Event, to, ok, r.To)
					}
					if d.Next.State.AtRest() && d.Next.Attempt != 0 {
						t.Errorf("rest state %s with attempt %d", d.Next.State, d.Next.Attempt)
					}
				}
				if applied == 0 {
					t.Errorf("rule %d (%s from %s, guard %q) never applies: an earlier rule or its guard shadows it", i, r.Input, st, r.Guard.Name)
				}
			})
		}
	}
}

// TestSoundKeyDecisions spells out a few key decisions literally, as a
// readable complement to the enumeration.
func TestSoundKeyDecisions(t *testing.T) {
	def := retry.DefaultSettings()
	idle := retry.Snapshot{State: retry.StateIdle}
	d := tblDecide(idle, retry.InputRetryable, tblRetryMsg, def)
	want := []tblEffect{
		{Kind: retry.StepEmitStart, Start: retry.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: tblRetryMsg}},
		{Kind: retry.StepDropError},
		{Kind: retry.StepArmTimer, Delay: 2 * time.Second},
	}
	if d.Edge().String() != "idle --retry--> backoff" || d.Next != (retry.Snapshot{State: retry.StateBackoff, Attempt: 1, Open: true, Armed: 1, Controlled: true}) || !slices.Equal(tblView(&d), want) {
		t.Errorf("idle + retryable: %v %+v %+v", d.Edge(), d.Next, tblView(&d))
	}
	d = tblDecide(idle, retry.InputRetryable, tblUsageMsg, def)
	if e := tblView(&d); len(e) != 4 || e[0] != (tblEffect{Kind: retry.StepAskAuth, RetryAfterMs: 1500, HasRetryAfter: true}) {
		t.Errorf("usage limit: effects %+v", e)
	}
	cont := retry.Snapshot{State: retry.StateContinuing, Attempt: 3, Open: true}
	d = tblDecide(cont, retry.InputRetryable, "500", def)
	if d.Edge().String() != "continuing --exhaust--> exhausted" || d.Next != (retry.Snapshot{State: retry.StateExhausted}) ||
		!slices.Equal(tblView(&d), []tblEffect{{Kind: retry.StepEmitEnd, End: retry.AutoRetryEnd{Attempt: 3, FinalError: "500"}}, {Kind: retry.StepRelease}}) {
		t.Errorf("continuing(3) + retryable: %v %+v %+v", d.Edge(), d.Next, tblView(&d))
	}
	back := retry.Snapshot{State: retry.StateBackoff, Attempt: 2, Open: true, Armed: 1, Controlled: true}
	d = tblDecide(back, retry.InputAbortRetry, "", def)
	if d.Edge().String() != "backoff --cancel--> cancelled" || d.Next != (retry.Snapshot{State: retry.StateCancelled}) ||
		!slices.Equal(tblView(&d), []tblEffect{{Kind: retry.StepCancelTimer}, {Kind: retry.StepEmitEnd, End: retry.AutoRetryEnd{Attempt: 2, FinalError: "Retry cancelled"}}, {Kind: retry.StepRelease}}) {
		t.Errorf("backoff(2) + abort_retry: %v %+v %+v", d.Edge(), d.Next, tblView(&d))
	}
}

// TestSoundTotal: every (state, input) pair has a rule, and for every
// settings combination (enabled or not, maxRetries 0..4) and attempt 0..5
// some rule's guard holds; Decide then agrees with the oracle (which also
// covers attempts the sound variant never reaches).
func TestSoundTotal(t *testing.T) {
	if len(retry.States()) != 5 {
		t.Fatalf("States = %v, want 5 states", retry.States())
	}
	for _, st := range retry.States() {
		for _, in := range retry.Inputs() {
			rules := retry.Sound().RulesFor(st, in)
			if len(rules) == 0 {
				t.Errorf("(%s, %s) has no rule", st, in)
				continue
			}
			for _, enabled := range []bool{true, false} {
				for maxRetries := 0; maxRetries <= 4; maxRetries++ {
					for attempt := 0; attempt <= 5; attempt++ {
						for _, open := range []bool{false, true} {
							c := tblCase{
								snap: tblSnap(st, attempt, open),
								set:  retry.Settings{Enabled: enabled, MaxRetries: maxRetries, BaseDelay: 2 * time.Second},
								msg:  tblMessages(in)[0],
							}
							holds := 0
							for _, ri := range rules {
								if c.holds(tblRules[ri].Guard, in) {
									holds++
								}
							}
							if holds == 0 {
								t.Errorf("(%s, %s) with %s: no guard holds", st, in, c)
								continue
							}
							tblCheck(t, c, in)
						}
					}
				}
			}
		}
	}
	if n := len(retry.Inputs()); n != 11 {
		t.Errorf("Inputs() has %d inputs, want 11", n)
	}
	for i, in := range retry.Inputs() {
		if int(in) != i || strings.HasPrefix(in.String(), "Input(") {
			t.Errorf("Inputs()[%d] = %v", i, in)
		}
	}
}

// TestSoundStatesAndDiagrams: each of the five states has an outgoing and
// an incoming transition in the table, the derived machine declares them in
// order with idle initial, and DOT and Mermaid name every state and edge.
func TestSoundStatesAndDiagrams(t *testing.T) {
	out := map[retry.State]int{}
	in := map[retry.State]int{}
	for _, r := range retry.Sound().Rules() {
		if r.Ignored() {
			continue
		}
		for _, s := range r.From {
			out[s]++
		}
		in[r.To]++
	}
	for _, s := range retry.States() {
		if out[s] == 0 || in[s] == 0 {
			t.Errorf("state %s: %d outgoing and %d incoming transitions, want both > 0", s, out[s], in[s])
		}
	}
	m := retry.Sound().Machine()
	want := []string{"idle", "backoff", "continuing", "exhausted", "cancelled"}
	if got := m.States(); !slices.Equal(got, want) || m.Initial() != "idle" {
		t.Errorf("machine states %v initial %q", got, m.Initial())
	}
	for _, s := range want {
		if len(m.Available(s)) == 0 {
			t.Errorf("machine: no event available in %s", s)
		}
	}
	if got := m.Reachable("idle"); !slices.Equal(got, want) {
		t.Errorf("reachable from idle: %v", got)
	}
	dot, mer := m.DOT(), m.Mermaid()
	for _, s := range want {
		if !strings.Contains(dot, `"`+s+`"`) {
			t.Errorf("DOT does not name %s:\n%s", s, dot)
		}
		if !strings.Contains(mer, "\n    "+s+"\n") {
			t.Errorf("Mermaid does not declare %s:\n%s", s, mer)
		}
	}
	if !strings.Contains(mer, "[*] --> idle") || !strings.Contains(dot, `"idle" [style=bold]`) {
		t.Error("diagrams do not mark idle initial")
	}
	for _, r := range retry.Sound().Rules() {
		if r.Ignored() {
			continue
		}
		for _, s := range r.From {
			if e := fmt.Sprintf("%q -> %q [label=%q]", s, r.To, r.Event); !strings.Contains(dot, e) {
				t.Errorf("DOT lacks %s", e)
			}
			if e := fmt.Sprintf("    %s --> %s: %s\n", s, r.To, r.Event); !strings.Contains(mer, e) {
				t.Errorf("Mermaid lacks %q", e)
			}
		}
	}
	if md := retry.Sound().TableMarkdown(); strings.Count(md, "\n") != len(retry.Sound().Rules())+2 {
		t.Errorf("TableMarkdown has %d lines for %d rules", strings.Count(md, "\n"), len(retry.Sound().Rules()))
	}
	if v, err := retry.VariantByName(""); err != nil || v != retry.Sound() {
		t.Errorf(`VariantByName("") = %v, %v`, v, err)
	}
	if _, err := retry.VariantByName("nope"); err == nil || !strings.Contains(err.Error(), "sound") {
		t.Errorf(`VariantByName("nope") error %v should list the allowed names`, err)
	}
}

// TestNewVariantRejectsPartialTables: a table missing a pair, naming an
// unknown state, or sending one event to two states is refused.
func TestNewVariantRejectsPartialTables(t *testing.T) {
	partial := slices.Clone(retry.Sound().Rules())
	partial = slices.DeleteFunc(partial, func(r retry.Rule) bool {
		return r.Input == retry.InputPrompt && slices.Contains(r.From, retry.StateBackoff)
	})
	if _, err := retry.NewVariant("partial", partial); err == nil || !strings.Contains(err.Error(), "(backoff, prompt) has no rule") {
		t.Errorf("missing pair: err = %v", err)
	}
	bad := append(slices.Clone(retry.Sound().Rules()), retry.Rule{Input: retry.InputAbort, From: []retry.State{"nowhere"}, Guard: tblAlways})
	if _, err := retry.NewVariant("bad", bad); err == nil || !strings.Contains(err.Error(), "nowhere") {
		t.Errorf("unknown state: err = %v", err)
	}
	twoDst := append(slices.Clone(retry.Sound().Rules()), retry.Rule{Input: retry.InputAbort, From: []retry.State{retry.StateIdle}, Guard: tblAlways, Event: "retry", To: retry.StateIdle})
	if _, err := retry.NewVariant("two", twoDst); err == nil || !strings.Contains(err.Error(), `"retry"`) {
		t.Errorf("nondeterministic event: err = %v", err)
	}
	if v, err := retry.NewVariant("copy", slices.Clone(retry.Sound().Rules())); err != nil || v.Machine().DOT() == "" {
		t.Errorf("a copy of the sound table: %v", err)
	}
}

// tblAlways is a guard that always holds (the package's own are unexported).
var tblAlways = retry.Guard{Holds: func(retry.Snapshot, *retry.Settings, *retry.Decision) bool { return true }}
