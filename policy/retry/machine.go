package retry

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// State is a state of the retry machine.
type State string

// The five states of the retry machine. idle, exhausted and cancelled are
// rest states (no chain open in the sound variant); backoff and continuing
// belong to an open chain.
const (
	StateIdle       State = "idle"
	StateBackoff    State = "backoff"
	StateContinuing State = "continuing"
	StateExhausted  State = "exhausted"
	StateCancelled  State = "cancelled"
)

// allStates lists every state in display order (States returns a copy).
var allStates = [...]State{StateIdle, StateBackoff, StateContinuing, StateExhausted, StateCancelled}

// States lists the five states in display order (a fresh slice).
func States() []State { return slices.Clone(allStates[:]) }

// AtRest reports whether s is a rest state (idle, exhausted, cancelled).
func (s State) AtRest() bool {
	return s == StateIdle || s == StateExhausted || s == StateCancelled
}

// Input is one input of the retry machine: a classified agent_end, an
// assistant success at message_end, the backoff timer, or a command.
type Input int

// Inputs of the retry machine.
const (
	// InputRetryable: agent_end whose last assistant reply is a retryable error.
	InputRetryable Input = iota
	// InputOverflow: agent_end whose last reply is a context overflow.
	InputOverflow
	// InputFatal: agent_end whose last reply is an error neither retryable nor overflow.
	InputFatal
	// InputAborted: agent_end whose last reply was aborted.
	InputAborted
	// InputNoMessage: agent_end with no assistant message in the run.
	InputNoMessage
	// InputSuccess: message_end of an assistant reply whose stopReason is
	// neither error nor aborted.
	InputSuccess
	// InputElapsed: the backoff timer fired.
	InputElapsed
	// InputContinueFailed: the agent's continue after a backoff could not start.
	InputContinueFailed
	// InputAbortRetry: the abort_retry command.
	InputAbortRetry
	// InputAbort: the general abort command.
	InputAbort
	// InputPrompt: a new prompt was accepted.
	InputPrompt
	numInputs
)

var inputNames = [numInputs]string{
	"agent_end:retryable", "agent_end:overflow", "agent_end:fatal", "agent_end:aborted",
	"agent_end:no_message", "message_end:success", "backoff_elapsed", "continue_failed",
	"abort_retry", "abort", "prompt",
}

// Inputs lists every input in its fixed order (the explorer's tie-break order).
func Inputs() []Input {
	in := make([]Input, numInputs)
	for i := range in {
		in[i] = Input(i)
	}
	return in
}

// String returns the input's name, e.g. "agent_end:retryable".
func (i Input) String() string {
	if i < 0 || i >= numInputs {
		return fmt.Sprintf("Input(%d)", int(i))
	}
	return inputNames[i]
}

// Snapshot is the retry machine's data: its state, the attempt counter and
// whether a chain is open (the original's pending retry promise; what
// IsRetrying reports).
type Snapshot struct {
	State   State
	Attempt int
	// Armed is the number of backoff waits running (0 or 1 in the sound
	// variant; the original can run two at once).
	Armed int
	// Model is the model in use: 0 the session's own, i the i-th of
	// Settings.Fallback (a chain that falls back moves it on; it stays).
	Model int
	Open  bool
	// Controlled reports whether the newest running wait can be cancelled
	// (the original's abort controller is set).
	Controlled bool
}

// cause is what Decide works out about a retryable failure before it picks
// a rule, in the order of SPEC §1's operations; the guards read it (its
// fields are the Decision's). For other inputs it is zero.
type cause struct {
	// Attempt is the attempt a retry would be: the snapshot's attempt + 1.
	Attempt int
	// Allowed: Attempt <= MaxRetries, or persistent mode and not a usage
	// limit.
	Allowed bool
	// Wait is the wait before that retry: the backoff (factor, cap,
	// jitter with the reply's draw), then the provider's hint as
	// RetryAfter.Use says; 0 after a credential switch. Only when Allowed.
	Wait time.Duration
	// Switched: auth storage switched credentials (answered yes).
	Switched bool
	// TooLong: RetryAfter.MaxWait > 0 and Wait exceeds it (never after a
	// switch).
	TooLong bool
	// FallbackLeft: a model of Settings.Fallback is left to fall back to.
	FallbackLeft bool
}

// Guard is a named condition on a rule. Holds must be pure; d is the
// decision being taken, whose fields from Attempt to FallbackLeft (what
// Decide worked out about a retryable failure; zero for other inputs) are
// set.
type Guard struct {
	Name  string
	Holds func(s Snapshot, set *Settings, d *Decision) bool
}

// The guards the tables use. A retryable failure goes one of five ways
// (SPEC §1): retry is off; the chain is exhausted (no model left to fall
// back to); the retry is made; the chain falls back to the next model
// (exhausted, or the wait too long); it ends at once because the wait is
// too long (fail-fast).
var (
	always        = Guard{"", func(Snapshot, *Settings, *Decision) bool { return true }}
	guardDisabled = Guard{"!enabled", func(_ Snapshot, set *Settings, _ *Decision) bool { return disabled(set) }}
	guardRetry    = Guard{"enabled && attempt < maxRetries", func(_ Snapshot, set *Settings, c *Decision) bool {
		return retries(set, &c.cause)
	}}
	guardExhaust = Guard{"enabled && attempt >= maxRetries", func(_ Snapshot, set *Settings, c *Decision) bool {
		return exhausts(set, &c.cause)
	}}
	guardFallback = Guard{"enabled && (attempt >= maxRetries || wait > maxWaitMs) && fallback left", func(_ Snapshot, set *Settings, c *Decision) bool {
		return fallsBack(set, &c.cause)
	}}
	guardFailFast = Guard{"enabled && wait > maxWaitMs && no fallback left", func(_ Snapshot, set *Settings, c *Decision) bool {
		return failsFast(set, &c.cause)
	}}
)

// The conditions of the sound guards, which Decide evaluates in place
// (guardKind) rather than through Holds.
func disabled(set *Settings) bool           { return !set.Enabled }
func retries(set *Settings, c *cause) bool  { return set.Enabled && c.Allowed && !c.TooLong }
func exhausts(set *Settings, c *cause) bool { return set.Enabled && !c.Allowed && !c.FallbackLeft }
func fallsBack(set *Settings, c *cause) bool {
	return set.Enabled && c.FallbackLeft && (!c.Allowed || c.TooLong)
}
func failsFast(set *Settings, c *cause) bool {
	return set.Enabled && c.Allowed && c.TooLong && !c.FallbackLeft
}

// guardKind says how Decide evaluates a rule's guard: not at all (the
// unconditional one), by calling Holds, or in place for the guards above.
type guardKind uint8

const (
	guardNone guardKind = iota // always: not called
	guardCall                  // any other guard: Holds is called
	guardIsDisabled
	guardIsRetry
	guardIsExhaust
	guardIsFallback
	guardIsFailFast
)

// kindOf is the guardKind of g: a guard is one of those above when it
// has its name and its function.
func kindOf(g Guard) guardKind {
	same := func(h Guard) bool {
		return g.Name == h.Name && reflect.ValueOf(g.Holds).Pointer() == reflect.ValueOf(h.Holds).Pointer()
	}
	switch {
	case same(always):
		return guardNone
	case same(guardDisabled):
		return guardIsDisabled
	case same(guardRetry):
		return guardIsRetry
	case same(guardExhaust):
		return guardIsExhaust
	case same(guardFallback):
		return guardIsFallback
	case same(guardFailFast):
		return guardIsFailFast
	}
	return guardCall
}

// Step is one effect template of a rule, expanded by Decide into an Effect.
type Step int

// Effect templates, performed in the order a rule lists them.
const (
	StepIncAttempt    Step = iota // attempt = attempt + 1
	StepOpen                      // a chain is open (IsRetrying becomes true)
	StepAskAuth                   // usage-limit error: ask auth storage to switch credentials; yes makes the delay 0
	StepEmitStart                 // emit auto_retry_start
	StepDropError                 // drop the trailing assistant error from the runtime context
	StepArmTimer                  // arm a backoff timer; it becomes the cancellable one
	StepCancelTimer               // the cancellable backoff timer is stopped (inert if it still fires)
	StepContinue                  // continue the agent from the runtime context, now
	StepEmitEnd                   // emit auto_retry_end (rule's Success / FinalError)
	StepResetAttempt              // attempt = 0
	StepRelease                   // the chain is closed: release WaitForRetry waiters
	StepWake                      // a backoff timer fired: one wait fewer, none cancellable
	StepUncontrol                 // the running wait can no longer be cancelled (original)
	StepContinueLater             // continue the agent from a 0 ms timer (original's setTimeout 0)
	StepFallback                  // emit retry_fallback, move to the next model, attempt = 0 (the retry then waits 0)
)

var stepNames = []string{"attempt++", "open chain", "ask auth storage (usage limit)", "emit auto_retry_start",
	"drop error from context", "arm backoff timer", "disarm backoff timer", "continue agent",
	"emit auto_retry_end", "attempt = 0", "release waiters", "wait over", "forget abort controller",
	"continue agent after a 0 ms timer", "fall back to the next model"}

// String describes the step, as SPEC.md's table does.
func (s Step) String() string { return stepNames[s] }

// FinalError says where auto_retry_end's finalError comes from.
type FinalError int

// Sources of finalError.
const (
	FinalNone      FinalError = iota // success: no finalError
	FinalMessage                     // the reply's errorMessage (or the continue error)
	FinalCancelled                   // "Retry cancelled"
	FinalNoMessage                   // "Agent run ended without an assistant message"
	// FinalMessageOrUnknown is the error, or "Unknown error" when it has
	// no text (sound: a chain never ends with an empty finalError).
	FinalMessageOrUnknown
	// FinalWaitTooLong is the fail-fast text: "Provider requested <wait>ms
	// wait, exceeds retry.maxDelayMs (<maxWaitMs>ms). Original error:
	// <error>".
	FinalWaitTooLong
)

// Rule is one row of a transition table: in any state of From, on Input,
// when Guard holds, fire Event (moving to To) and perform Steps. A rule with
// an empty Event is an explicitly ignored pair: nothing changes.
type Rule struct {
	Input   Input
	From    []State
	Guard   Guard
	Event   string
	To      State
	Steps   []Step
	Success bool       // for StepEmitEnd
	Final   FinalError // for StepEmitEnd
	// Reason says why the chain gives up, on every rule that emits
	// auto_retry_end with success false and a finalError other than
	// "Retry cancelled" (and only there): what WaitForRetry reports in
	// ExhaustedError.Reason.
	Reason Reason
	Note   string // why, for SPEC.md
}

// givesUp reports whether r ends a chain by giving up (its Reason applies).
func (r *Rule) givesUp() bool {
	return !r.Success && r.Final != FinalCancelled && slices.Contains(r.Steps, StepEmitEnd)
}

// Ignored reports whether r declares its pairs ignored.
func (r *Rule) Ignored() bool { return r.Event == "" }

// Variant is one retry policy's transition table (a session variant,
// session.Variant, pairs it with the session's rules). Build one with
// NewVariant.
type Variant struct {
	Name    string
	rules   []Rule
	machine *fsm.Machine
	byPair  [numInputs][numStates][]int // rule indexes per (input, state)
	// guard[i] is how Decide evaluates rule i's guard (an unconditional
	// one is not evaluated).
	guard []guardKind
	// first[in][s] is the rule of (input, state) Decide takes without
	// calling a guard: the pair's first rule when it is unconditional,
	// else -1 (the guards are called in order, up to the first
	// unconditional rule).
	first [numInputs][numStates]int
	// ignores[in][s]: the rule Decide takes for (input, state) is always
	// an ignored one (Ignores).
	ignores [numInputs][numStates]bool
	// byFacts[in][s][f] is the rule Decide takes for (input, state) when
	// the pair's guards, up to its first unconditional one, are all
	// evaluated in place: for each combination f of the facts they read
	// (factsOf), the first that holds (-1: none); nil otherwise.
	byFacts [numInputs][numStates]*[numFacts]int16
	// asksAuth[i]: rule i has a StepAskAuth (DecideAnswered takes its
	// decision again with auth storage's answer, as Resume would).
	asksAuth []bool
}

// numFacts is the number of combinations of the four facts the in-place
// guards read: retry enabled, and the cause's Allowed, TooLong and
// FallbackLeft.
const numFacts = 16

// factsOf is the combination of the facts the in-place guards read.
func factsOf(set *Settings, c *cause) int {
	f := 0
	if set.Enabled {
		f |= 1
	}
	if c.Allowed {
		f |= 2
	}
	if c.TooLong {
		f |= 4
	}
	if c.FallbackLeft {
		f |= 8
	}
	return f
}

// compileFacts fills byFacts: each pair whose guards, up to its first
// unconditional one, are all evaluated in place gets the rule
// firstHolding takes for each combination of their facts.
func (v *Variant) compileFacts() {
	for in := range v.byPair {
		for si, rs := range v.byPair[in] {
			if v.first[in][si] >= 0 || !v.inPlace(rs) {
				continue
			}
			t := new([numFacts]int16)
			for f := range t {
				set := Settings{Enabled: f&1 != 0}
				d := Decision{cause: cause{Allowed: f&2 != 0, TooLong: f&4 != 0, FallbackLeft: f&8 != 0}}
				t[f] = int16(v.firstHolding(&d, &Snapshot{}, rs, &set))
			}
			v.byFacts[in][si] = t
		}
	}
}

// inPlace reports whether the guards of rules rs, up to the first
// unconditional one, are all evaluated in place.
func (v *Variant) inPlace(rs []int) bool {
	for _, k := range rs {
		switch v.guard[k] {
		case guardNone:
			return true
		case guardCall:
			return false
		}
	}
	return true
}

// Ignores reports whether the decision on input in in state s is always
// an ignored pair's, whatever the snapshot's other fields, the reply and
// the settings: the first rule of (s, in) is unconditional and ignored.
// Such a decision changes nothing and has no effect, so a shell may skip
// Decide.
func (v *Variant) Ignores(s State, in Input) bool {
	si := s.Index()
	return si >= 0 && uint(in) < uint(numInputs) && v.ignores[in][si]
}

// Rules returns the table's rules, in order (a copy: the table cannot be
// changed once built).
func (v *Variant) Rules() []Rule { return slices.Clone(v.rules) }

const numStates = 5

// maxEffects bounds the effects of one decision (NewVariant rejects a rule
// with more steps), so a Decision needs no allocation.
const maxEffects = 12

// Index is the position of s in States, or -1 for an unknown state. It is
// on the hot path of every decision: the states' lengths tell them apart
// (but exhausted and cancelled, by their first letter), then one
// comparison with a constant confirms it.
func (s State) Index() int {
	switch len(s) {
	case len(StateIdle):
		if s == StateIdle {
			return 0
		}
	case len(StateBackoff):
		if s == StateBackoff {
			return 1
		}
	case len(StateContinuing):
		if s == StateContinuing {
			return 2
		}
	case len(StateExhausted): // and StateCancelled
		if s == StateExhausted {
			return 3
		}
		if s == StateCancelled {
			return 4
		}
	}
	return -1
}

// checkRule checks rule i of variant name on its own: a known input, a
// guard with Holds, known states, a Reason exactly on a rule that gives up
// its chain, at most maxEffects steps.
func checkRule(name string, i int, r *Rule) error {
	if r.Input < 0 || r.Input >= numInputs {
		return fmt.Errorf("variant %s: rule %d: unknown input %d", name, i, int(r.Input))
	}
	if r.Guard.Holds == nil {
		return fmt.Errorf("variant %s: rule %d (%s): a guard without Holds", name, i, r.Input)
	}
	for _, s := range r.From {
		if s.Index() < 0 {
			return fmt.Errorf("variant %s: rule %d (%s): unknown state %q (allowed: %v)", name, i, r.Input, s, allStates)
		}
	}
	if r.givesUp() != (r.Reason != "") {
		if r.Reason == "" {
			return fmt.Errorf("variant %s: rule %d (%s from %v): gives up the chain without a Reason", name, i, r.Input, r.From)
		}
		return fmt.Errorf("variant %s: rule %d (%s from %v): Reason %q on a rule that does not give up a chain", name, i, r.Input, r.From, r.Reason)
	}
	if len(r.Steps) > maxEffects {
		return fmt.Errorf("variant %s: rule %d (%s): %d steps, at most %d allowed", name, i, r.Input, len(r.Steps), maxEffects)
	}
	if !r.Ignored() && r.To.Index() < 0 {
		return fmt.Errorf("variant %s: rule %d (%s): unknown target state %q", name, i, r.Input, r.To)
	}
	return nil
}

// NewVariant validates a table and builds its machine: every rule names
// known states, every (state, input) pair has at least one rule, and one
// event always leads to one state.
func NewVariant(name string, rules []Rule) (*Variant, error) {
	v := &Variant{Name: name, rules: slices.Clone(rules), guard: make([]guardKind, len(rules)), asksAuth: make([]bool, len(rules))}
	type tr struct {
		event string
		dst   State
		srcs  []string
	}
	var trs []*tr
	dstOf := map[[2]string]State{}
	for i, r := range rules {
		if err := checkRule(name, i, &r); err != nil {
			return nil, err
		}
		v.guard[i] = kindOf(r.Guard)
		v.asksAuth[i] = slices.Contains(r.Steps, StepAskAuth)
		for _, s := range r.From {
			si := s.Index()
			v.byPair[r.Input][si] = append(v.byPair[r.Input][si], i)
		}
		if r.Ignored() {
			continue
		}
		var t *tr
		for _, x := range trs {
			if x.event == r.Event && x.dst == r.To {
				t = x
			}
		}
		if t == nil {
			t = &tr{event: r.Event, dst: r.To}
			trs = append(trs, t)
		}
		for _, s := range r.From {
			k := [2]string{r.Event, string(s)}
			if d, ok := dstOf[k]; ok {
				if d != r.To {
					return nil, fmt.Errorf("variant %s: rule %d: event %q from %s leads to both %s and %s", name, i, r.Event, s, d, r.To)
				}
				continue
			}
			dstOf[k] = r.To
			t.srcs = append(t.srcs, string(s))
		}
	}
	for _, s := range allStates {
		for in := Input(0); in < numInputs; in++ {
			if len(v.byPair[in][s.Index()]) == 0 {
				return nil, fmt.Errorf("variant %s: (%s, %s) has no rule: declare it as a transition or as ignored", name, s, in)
			}
		}
	}
	for in := range v.byPair {
		for si, rs := range v.byPair[in] {
			v.first[in][si] = -1
			if v.guard[rs[0]] == guardNone {
				v.first[in][si] = rs[0]
				v.ignores[in][si] = rules[rs[0]].Ignored()
			}
		}
	}
	v.compileFacts()
	def := fsm.Definition{Name: "retry_" + name, Initial: string(StateIdle)}
	for _, s := range allStates {
		def.States = append(def.States, string(s))
	}
	for _, t := range trs {
		def.Transitions = append(def.Transitions, fsm.Transition{Event: t.event, Src: t.srcs, Dst: string(t.dst)})
	}
	m, err := fsm.New(def)
	if err != nil {
		return nil, fmt.Errorf("variant %s: %w", name, err)
	}
	// Decisions are taken on the integer-indexed table (byPair); it is
	// the looplab declaration's, edge for edge (TestControllerAgreesWithLooplab
	// fires every one on looplab).
	for i, r := range rules {
		if r.Ignored() {
			continue
		}
		for _, src := range r.From {
			if to, ok := m.Lookup(string(src), r.Event); !ok || to != string(r.To) {
				return nil, fmt.Errorf("variant %s: rule %d: the machine has no edge %s -%s-> %s", name, i, src, r.Event, r.To)
			}
		}
	}
	v.machine = m
	return v, nil
}

// Machine returns the fsm declaration derived from the table.
func (v *Variant) Machine() *fsm.Machine { return v.machine }

// RulesFor returns the indexes (in Rules) of the rules for (state, input),
// in the order they are tried.
func (v *Variant) RulesFor(s State, in Input) []int {
	si := s.Index()
	if si < 0 || in < 0 || in >= numInputs {
		return nil
	}
	return slices.Clone(v.byPair[in][si])
}

// Decide is the retry policy: a pure function of the snapshot, the input,
// the input's classified reply o (nil for an input without one; for
// InputContinueFailed, an Outcome whose Message is the continue's error)
// and the policy of this moment. It writes the result into d (no
// allocation) and never fails: every (state, input) pair has a rule, and
// the guards of a pair cover every case. Rules are found by integer index
// in the table compiled from the declaration; no text is examined. For a
// retryable failure it first works out its wait and ways out (SPEC §1's order of
// operations), which the guards read. A Policy is read-only, so Resume
// reads p's settings as they were, and so must *o (the decision
// reads it, not a copy: its events carry its text).
func (v *Variant) Decide(d *Decision, s Snapshot, in Input, o *classify.Outcome, p *Policy) {
	v.DecideFrom(d, &s, in, o, p)
}

// DecideFrom is Decide with the snapshot read through s, which it does not
// keep (Next and Resume have their own copies): a shell that holds the
// snapshot in place saves copying it in. s must not point into d.
func (v *Variant) DecideFrom(d *Decision, s *Snapshot, in Input, o *classify.Outcome, p *Policy) {
	if o == nil {
		o = &noReply
	}
	d.out = o
	v.decide(d, s, &d.Next, in, &p.set, false, false)
}

// DecideAnswered is DecideFrom with auth storage's answer given beforehand
// (switched: it switched credentials), for a shell that knows it before it
// performs anything (the session core: the event carries it), and with
// the snapshot moved in place: it takes the decision Decide then Resume
// would take, final (AsksAuth is false), *s becoming its next snapshot
// (Next is not set). Apply performs its effects.
func (v *Variant) DecideAnswered(d *Decision, s *Snapshot, in Input, o *classify.Outcome, p *Policy, switched bool) {
	if o == nil {
		o = &noReply
	}
	d.out = o
	v.decide(d, s, s, in, &p.set, true, switched)
}

// noReply is the reply of an input without one (Decide's o nil): the
// zero Outcome, never written.
var noReply classify.Outcome

// of works out a retryable failure's cause, in place: SPEC §1 steps 1 to
// 6 (the count, the backoff with its cap and jitter, the credential
// switch, the hint, the ceiling).
func (c *cause) of(s *Snapshot, o *classify.Outcome, set *Settings, switched bool) {
	*c = cause{Attempt: s.Attempt + 1, Switched: switched, FallbackLeft: s.Model < len(set.Fallback)}
	c.Allowed = s.Attempt < set.MaxRetries || (set.Persistent && !o.UsageLimit)
	if !c.Allowed || switched {
		return
	}
	w := set.backoff(c.Attempt, o.Draw)
	if ra := &set.RetryAfter; o.HasWaitHint && ra.Use != "" && ra.Use != HintIgnore {
		h := floatMs(o.WaitHintMs)
		if ra.MaxHint <= 0 || h <= ra.MaxHint {
			if ra.Use == HintReplace || h > w {
				w = h
			}
		}
	}
	c.Wait = w
	c.TooLong = set.RetryAfter.MaxWait > 0 && w > set.RetryAfter.MaxWait
}

// firstHolding is the first of the rules ks whose guard holds, or -1: the
// sound guards evaluated in place (guardKind), the others by their Holds
// (TestDecideTakesTheFirstRuleThatHolds).
func (v *Variant) firstHolding(d *Decision, s *Snapshot, ks []int, set *Settings) int {
	for _, k := range ks {
		var holds bool
		switch v.guard[k] {
		case guardNone:
			holds = true
		case guardIsDisabled:
			holds = disabled(set)
		case guardIsRetry:
			holds = retries(set, &d.cause)
		case guardIsExhaust:
			holds = exhausts(set, &d.cause)
		case guardIsFallback:
			holds = fallsBack(set, &d.cause)
		case guardIsFailFast:
			holds = failsFast(set, &d.cause)
		default:
			holds = v.rules[k].Guard.Holds(*s, set, d)
		}
		if holds {
			return k
		}
	}
	return -1
}

// decide is Decide, Resume and DecideAnswered: answered says whether auth
// storage has answered (switched). next is where the next snapshot goes:
// &d.Next, or s itself for DecideAnswered, whose answer was given before
// the rule is chosen (then answered is true, and switched applies only to
// a rule that asks, as Resume would). It is the hot path of every session
// step that consults the retry machine: the rules of (state, input) are
// found by index, an unconditional guard is not evaluated and the sound
// ones are evaluated in place (Variant.guard). A step that only changes
// the snapshot is not an effect; the others fill their effect in full, and
// each step writes only what it changes. Auth storage is asked only about
// a usage limit, and only once the count allows a retry (SPEC §1, steps 1
// and 4).
func (v *Variant) decide(d *Decision, s, next *Snapshot, in Input, set *Settings, answered, switched bool) {
	d.From, d.n, d.asks, d.arms = s.State, 0, false, false
	d.v, d.in, d.set = v, in, set
	inPlace := next == s
	sw := answered && switched && !inPlace
again:
	if in == InputRetryable {
		d.cause.of(s, d.out, set, sw)
	} else {
		d.cause = cause{}
	}
	j := -1
	if si := s.State.Index(); si >= 0 && uint(in) < uint(numInputs) {
		if j = v.first[in][si]; j < 0 {
			if t := v.byFacts[in][si]; t != nil {
				j = int(t[factsOf(set, &d.cause)])
			} else {
				j = v.firstHolding(d, s, v.byPair[in][si], set)
			}
		}
	}
	if inPlace && switched && !sw && j >= 0 && v.asksAuth[j] && d.out.UsageLimit && d.Allowed {
		sw = true // the decision Resume takes
		goto again
	}
	if !inPlace {
		*next = *s
	}
	if j < 0 { // guards not exhaustive: treat as ignored (NewVariant tests prevent it)
		d.Rule, d.RuleIndex = nil, -1
		return
	}
	r := &v.rules[j]
	d.Rule, d.RuleIndex = r, j
	if !r.Ignored() {
		next.State = r.To
	}
	fx := &d.effects
	n := 0
	delay := d.Wait
	pending := false
	for _, st := range r.Steps {
		switch st {
		case StepIncAttempt:
			next.Attempt++
			continue
		case StepResetAttempt:
			next.Attempt = 0
			continue
		case StepOpen:
			next.Open = true
			continue
		case StepFallback:
			next.Model++
			next.Attempt = 0
			delay = 0
			fx[n] = Effect{Kind: st, Model: next.Model}
		case StepRelease:
			next.Open = false
			fx[n] = Effect{Kind: st}
		case StepWake:
			next.Armed--
			next.Controlled = false
			fx[n] = Effect{Kind: st}
		case StepUncontrol:
			next.Controlled = false
			fx[n] = Effect{Kind: st}
		case StepCancelTimer:
			if !next.Controlled {
				continue
			}
			next.Armed--
			next.Controlled = false
			fx[n] = Effect{Kind: st}
		case StepAskAuth:
			if !d.out.UsageLimit || !d.Allowed {
				continue
			}
			if !answered {
				pending = true
				d.asks = true
				d.snap = *s // what Resume takes the decision again from
			}
			fx[n] = Effect{Kind: st}
		case StepEmitStart:
			fx[n] = Effect{Kind: st, Attempt: next.Attempt, Delay: delay, Pending: pending}
		case StepArmTimer:
			fx[n] = Effect{Kind: st, Delay: delay, Pending: pending}
			d.arms = true
			next.Armed++
			next.Controlled = true
		case StepEmitEnd:
			fx[n] = Effect{Kind: st, Attempt: next.Attempt}
		default:
			fx[n] = Effect{Kind: st}
		}
		n++
	}
	d.n = n
}

// ModelName is the name of model i (Snapshot.Model): primary for 0, else
// the i-th of s.Fallback.
func (s *Settings) ModelName(primary string, i int) string {
	if i <= 0 || i > len(s.Fallback) {
		return primary
	}
	return s.Fallback[i-1]
}

// floatMs converts a number of milliseconds to a Duration, to the
// nearest nanosecond, saturating.
func floatMs(ms float64) time.Duration {
	ns := math.Round(ms * float64(time.Millisecond))
	switch {
	case !(ns < math.MaxInt64):
		return math.MaxInt64
	case ns < 0:
		return 0
	}
	return time.Duration(ns)
}
