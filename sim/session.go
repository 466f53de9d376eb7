package sim

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// MaxEvents bounds one simulation, so that no scenario runs forever.
const MaxEvents = 1_000_000

// ErrTooManyEvents is returned when a simulation fires more than MaxEvents
// queue events.
var ErrTooManyEvents = errors.New("sim: simulation exceeded MaxEvents queue events")

// Final is the session's state at the end of a simulation.
type Final struct {
	State             policy.State
	Attempt           int
	IsRetrying        bool
	UnresolvedPrompts []int
	At                time.Duration
}

// Session is a simulated agent session driven by a scenario: the session
// core (package session) stepped on a discrete-event Scheduler, with a
// scripted provider (the scenario's turns) and auth storage (each turn's
// switchModel), writing the trace. It holds no session rule of its own.
type Session struct {
	sc      *scenario.Scenario
	variant *session.Variant
	core    session.Core
	st      session.State
	sched   *Scheduler
	pol     *policy.Policy // the policy in force (set_auto_retry changes Enabled)
	initial *policy.Policy // the scenario's settings, compiled once
	final   trace.Record   // the final line's record (kept to write it without allocating)
	buf     session.Buffer
	json    *trace.Writer // nil with Options.NoJSON
	sink    trace.Sink
	// ev is the event the core is given: a command's is set whole (Step);
	// a reply, a timer and a settle set only what the core reads of them
	// (Kind, and Call, Reply and Switch, or Timer; At in step), as the
	// fleet's runner does.
	ev       session.Event
	turn     int                // turns taken
	replies  []classify.Outcome // each turn classified once (a usage limit again at its time)
	stop     classify.Outcome   // the reply when the turns have run out
	inFlight int                // the turn of the call in flight with a duration (-1: none)
	// clsFresh: replies were classified by pol's classifier.
	clsFresh bool
	// pcg and rng are the random source of jitter draws (the scenario's
	// seed), reseeded by Reset; see draw.
	pcg rand.PCG
	rng *rand.Rand
	// cancelled lists the timers cancelled that have not fired yet: the
	// scheduler cannot take an event back, so their firing is dropped here
	// (it still moves virtual time, as the original's abandoned timers do).
	cancelled []uint64
	// pendingCall is the model call a step's effects asked for, made once
	// they are performed.
	pendingCall uint64
}

// Options adjust a simulation.
type Options struct {
	// Variant overrides the scenario's variant when not empty.
	Variant string
	// NoJSON turns the JSON trace off: no line is formatted, and Trace
	// returns an empty trace. Records still reach Sink.
	NoJSON bool
	// Sink, when set, receives every trace record as it is written (the
	// RPC server and the terminal player stream from it).
	Sink trace.Sink
}

// Kinds of the events a session posts to its scheduler.
const (
	postPrompt uint8 = iota + 1 // the scenario's initial prompt
	postAction                  // scenario action N
	postReply                   // the reply of call ID (turn N)
	postTimer                   // timer ID of kind N
)

// NewSession builds a session for sc. Nothing runs until Start or Run.
func NewSession(sc *scenario.Scenario, opt Options) (*Session, error) {
	name := sc.Variant
	if opt.Variant != "" {
		name = opt.Variant
	}
	v, err := session.VariantByName(name)
	if err != nil {
		return nil, err
	}
	pol, err := sc.Policy() // the loader's, compiled once
	if err != nil {
		return nil, err
	}
	if err := v.Retry.CheckSettings(&sc.Settings); err != nil {
		return nil, err
	}
	s := &Session{sc: sc, variant: v, st: session.Initial(), sched: NewScheduler(time.UnixMilli(sc.EpochMs).UTC()), sink: opt.Sink, inFlight: -1}
	s.core = session.Core{Variant: v, Config: session.Config{
		CompactionEnabled: sc.Compaction.Enabled, CompactionSucceeds: sc.Compaction.Succeed,
		Provider: sc.Provider, SessionID: sc.SessionID, BaseURL: sc.BaseURL, Model: sc.ModelID, Profile: scenarioProfile(sc),
	}}
	if !opt.NoJSON {
		s.json = &trace.Writer{}
		s.json.Grow(4096) // a chain's trace, without growing it line by line
	}
	s.pol, s.initial = pol, pol
	s.buf.Effects = make([]session.Effect, 0, 8) // a step makes a few effects
	s.sched.AfterEach = s.settle
	s.rng = rand.New(&s.pcg)
	s.seed()
	s.clsFresh = true
	s.replies = make([]classify.Outcome, len(sc.Turns))
	for i, t := range sc.Turns {
		s.replies[i] = s.pol.Reply(t.Reply(), sc.ContextWindow, s.sched.Now())
	}
	s.stop = classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonStop}, sc.ContextWindow, s.sched.Now())
	return s, nil
}

// setPolicy puts p in force, with its classifier.
func (s *Session) setPolicy(p *policy.Policy) {
	if !p.SameClassification(s.pol) {
		s.clsFresh = false
	}
	s.pol = p
}

// Reset returns the session to its state before Start, keeping its memory
// (for running the same scenario many times, as the benchmarks do). The
// settings and whether compaction is enabled go back to the scenario's.
func (s *Session) Reset() {
	s.sched.Reset(time.UnixMilli(s.sc.EpochMs).UTC())
	s.pol = s.initial
	s.core.Config.CompactionEnabled = s.sc.Compaction.Enabled
	s.clsFresh = true
	s.seed()
	if s.json != nil {
		s.json.Reset()
	}
	s.st = session.Initial()
	s.turn, s.inFlight = 0, -1
	s.cancelled = s.cancelled[:0]
}

// Scheduler returns the session's discrete-event scheduler.
func (s *Session) Scheduler() *Scheduler { return s.sched }

// Settings returns the settings in force: the scenario's, as set_auto_retry
// and SetSettings changed them.
func (s *Session) Settings() policy.Settings { return s.pol.Settings() }

// Policy returns the policy in force (see Settings).
func (s *Session) Policy() *policy.Policy { return s.pol }

// SetPolicy puts p in force from the next step on; nil changes nothing.
func (s *Session) SetPolicy(p *policy.Policy) {
	if p != nil {
		s.setPolicy(p)
	}
}

// Trace returns the JSON trace written so far (empty with NoJSON).
func (s *Session) Trace() *trace.Writer {
	if s.json == nil {
		return &trace.Writer{}
	}
	return s.json
}

// Variant returns the variant the session runs.
func (s *Session) Variant() *session.Variant { return s.variant }

// State returns the session core's state now.
func (s *Session) State() session.State { return s.st }

// Snapshot returns the retry machine's snapshot now.
func (s *Session) Snapshot() retry.Snapshot { return s.st.Retry }

// Start schedules the initial prompt (when the scenario has one) and then
// every action, in list order.
func (s *Session) Start() {
	if s.sc.InitialPrompt {
		s.sched.Post(0, s, Posted{Kind: postPrompt})
	}
	for i := range s.sc.Actions {
		s.sched.Post(s.sc.Actions[i].At, s, Posted{Kind: postAction, N: i})
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
	return Final{State: s.st.Retry.State, Attempt: s.st.Retry.Attempt, IsRetrying: s.st.Retry.Open,
		UnresolvedPrompts: s.Unresolved(), At: s.sched.now}
}

// WriteFinal writes the trace's closing "final" line.
func (s *Session) WriteFinal() {
	r := &s.final
	prompts := r.Final.UnresolvedPrompts[:0]
	if s.st.Pending != 0 {
		prompts = append(prompts, s.st.Pending)
	}
	// r holds a final line alone: its time, type and payload are all there
	// is to set (a Sink reads no other field).
	r.T, r.Type, r.Final = s.sched.now, trace.Final, trace.FinalRecord{State: s.st.Retry.State,
		Attempt: s.st.Retry.Attempt, IsRetrying: s.st.Retry.Open, UnresolvedPrompts: prompts, TurnsConsumed: s.turn}
	s.write(r)
}

// Busy reports whether a prompt would be rejected now.
func (s *Session) Busy() bool { return s.st.Busy(&s.variant.Rules) }

// IsStreaming is the original's isStreaming: a run in flight or a prompt
// not yet resolved.
func (s *Session) IsStreaming() bool { return s.st.IsStreaming() }

// Quiescent reports whether nothing is in flight and nothing is scheduled.
func (s *Session) Quiescent() bool { return s.st.Run.Kind == session.NoRun && s.sched.Pending() == 0 }

// Unresolved returns the numbers of the prompts not yet resolved.
func (s *Session) Unresolved() []int {
	if s.st.Pending == 0 {
		return []int{}
	}
	return []int{s.st.Pending}
}

// Do runs scenario action a now: the session event of its command
// (Step), with its arguments; settings are merged over those in force and
// validated (MergeSettings), and refused ones fail the command as on the
// wire. An action that names no command does nothing.
func (s *Session) Do(a scenario.Action) {
	cmd, ok := session.CommandByName(a.Do)
	if !ok {
		return
	}
	ev := cmd.Event(a.ID)
	for _, arg := range cmd.Args {
		switch arg.Kind {
		case session.ArgBool:
			ev.Enabled = a.Enabled != nil && *a.Enabled
		case session.ArgSettings:
			if p, err := s.MergeSettings(a.Settings); err != nil {
				ev.Error = cmd.Name + ": " + arg.Name + ": " + err.Error()
			} else {
				ev.Policy = p
			}
		}
	}
	s.Step(ev)
}

// MergeSettings returns patch (a JSON object of retry settings) merged
// key by key over the settings in force and compiled (policy.Compile):
// set_retry_settings' policy.
func (s *Session) MergeSettings(patch json.RawMessage) (*policy.Policy, error) {
	merged, err := s.Settings().Apply(patch)
	if err != nil {
		return nil, err
	}
	return policy.Compile(merged)
}

// Step runs command event ev now (Prompt, Abort, AbortRetry, SetAutoRetry,
// GetState, SetRetrySettings with its Policy merged over the settings in
// force and compiled by the caller, SetAutoCompaction): the session core steps
// and the session performs its effects. An Abort ends the call in flight,
// if any, with an aborted reply.
func (s *Session) Step(ev session.Event) {
	s.ev = ev
	if ev.Kind == session.Abort && s.inFlight >= 0 {
		// The call in flight ends with an aborted reply; it used up its
		// turn, and carries the turn's usage (the provider reports the
		// input usage when the stream starts).
		s.ev.Reply = s.classify(policy.AssistantMessage{StopReason: policy.StopReasonAborted, ErrorMessage: session.AbortedMessage,
			InputTokens: s.sc.Turns[s.inFlight].Usage.Input, CacheReadTokens: s.sc.Turns[s.inFlight].Usage.CacheRead})
		s.inFlight = -1
	}
	s.step()
}

// Prompt issues a prompt now, answered with id when respond is true. It
// returns the prompt's number and whether it was accepted; a rejected
// prompt gets a prompt_rejected line and, when respond is true, a failed
// response.
func (s *Session) Prompt(id string, respond bool) (n int, accepted bool) {
	accepted = !s.Busy()
	s.Step(session.Event{Kind: session.Prompt, ID: id, Respond: respond})
	return s.st.Prompts, accepted
}

// HandleEvent runs an event the session posted to its scheduler.
func (s *Session) HandleEvent(e Posted) {
	switch e.Kind {
	case postPrompt:
		s.Prompt("", false)
	case postAction:
		s.Do(s.sc.Actions[e.N])
	case postReply:
		if s.inFlight != e.N || e.ID != s.st.Run.Call {
			return // aborted
		}
		s.inFlight = -1
		s.reply(e.ID, e.N)
	case postTimer:
		for i, id := range s.cancelled {
			if id == e.ID {
				s.cancelled = append(s.cancelled[:i], s.cancelled[i+1:]...)
				return
			}
		}
		s.ev.Kind, s.ev.Timer = session.TimerFired, session.Timer{Kind: session.TimerKind(e.N), ID: e.ID}
		s.step()
	}
}

// settle ends every queue event (Scheduler.AfterEach).
func (s *Session) settle() {
	s.ev.Kind = session.Settle
	s.step()
}

// reply delivers the reply of call id, from turn n.
func (s *Session) reply(id uint64, n int) {
	s.ev.Kind, s.ev.Call = session.Reply, id
	if n < len(s.sc.Turns) {
		t := &s.sc.Turns[n]
		s.ev.Reply, s.ev.Switch = s.replies[n], t.SwitchModel
		if !s.clsFresh || s.ev.Reply.UsageLimit || s.ev.Reply.HasWaitHint {
			s.ev.Reply = s.classify(t.Reply()) // in the settings' mode now; a date hint is relative to now
		}
		if s.ev.Reply.Class == classify.ClassRetryable && s.pol.Jittered() {
			s.ev.Reply.Draw = s.draw()
		}
	} else {
		s.ev.Reply, s.ev.Switch = s.stop, false
	}
	s.step()
}

// classify classifies a reply now.
func (s *Session) classify(m policy.AssistantMessage) classify.Outcome {
	return s.pol.Reply(m, s.sc.ContextWindow, s.sched.Now())
}

// step steps the core with s.ev at the current time and performs the
// effects. A model call is a step's last effect: an instant one is
// answered at once, in the same queue event.
func (s *Session) step() {
	s.ev.At = s.sched.now
	s.buf.Effects = s.buf.Effects[:0]
	s.pendingCall = 0
	session.Perform(s.core.Apply(&s.st, s.pol, &s.ev, &s.buf), (*effects)(s))
	if call := s.pendingCall; call != 0 {
		s.pendingCall = 0
		s.call(call)
	}
}

// effects is the session as the session.Shell of its core's effects.
type effects Session

func (e *effects) Record(r *trace.Record) {
	if e.json != nil {
		e.json.Record(r)
	}
	if e.sink != nil {
		e.sink.Record(r)
	}
}
func (e *effects) Arm(t session.Timer) {
	e.sched.PostIn(t.Delay, (*Session)(e), Posted{Kind: postTimer, ID: t.ID, N: int(t.Kind)})
}
func (e *effects) Cancel(t session.Timer)       { e.cancelled = append(e.cancelled, t.ID) }
func (e *effects) SetEnabled(enabled bool)      { e.pol = e.pol.WithEnabled(enabled) }
func (e *effects) SetSettings(p *policy.Policy) { (*Session)(e).setPolicy(p) }
func (e *effects) SetCompaction(enabled bool)   { e.core.Config.CompactionEnabled = enabled }

// Call is made once the effects are performed (s.call may step again: a
// reply that takes no time is delivered at once).
func (e *effects) Call(id uint64) { e.pendingCall = id }

// call makes model call id: it takes the next turn and replies at once
// (durationMs 0) or as a scheduled event.
func (s *Session) call(id uint64) {
	n := s.turn
	s.turn++
	if n < len(s.sc.Turns) && s.sc.Turns[n].Duration > 0 {
		s.inFlight = n
		s.sched.PostIn(s.sc.Turns[n].Duration, s, Posted{Kind: postReply, ID: id, N: n})
		return
	}
	s.reply(id, n)
}

func (s *Session) write(r *trace.Record) { (*effects)(s).Record(r) }

// seed seeds the source of jitter draws with the scenario's seed (1 when
// not set).
func (s *Session) seed() {
	seed := s.sc.Seed
	if seed == 0 {
		seed = 1
	}
	s.pcg.Seed(uint64(seed), 0)
}

// draw is the next jitter draw: random.fixed when the scenario gives it,
// else from math/rand/v2's PCG seeded with the scenario's seed.
func (s *Session) draw() float64 {
	if s.sc.HasRandomFixed {
		return s.sc.RandomFixed
	}
	return s.rng.Float64()
}

// scenarioProfile is the name of the scenario's profile.
func scenarioProfile(sc *scenario.Scenario) string {
	if sc.Profile == "" {
		return policy.DefaultProfile
	}
	return sc.Profile
}
