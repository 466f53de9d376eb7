package policy

import (
	"context"
	"errors"
	"sync"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/fsm"
)

// Agent is the part of an agent loop the Controller drives.
type Agent interface {
	// Continue resumes the agent from its runtime context after a backoff.
	// It returns an error when the run cannot start (for example when the
	// context ends with an assistant message); the chain then ends.
	Continue() error
	// DropLastAssistant removes the trailing assistant message from the
	// runtime context (the persisted history keeps it).
	DropLastAssistant()
}

// UsageLimitOptions is what the Controller tells auth storage about a
// usage-limit error.
type UsageLimitOptions struct {
	// RetryAfterMs is the retry hint parsed from the error message, in
	// milliseconds, with any fraction kept; meaningful only when
	// HasRetryAfter is true.
	RetryAfterMs  float64
	HasRetryAfter bool
	BaseURL       string
}

// AuthStorage is asked to switch credentials when a usage-limit error is
// about to be retried; a true answer makes that retry's delay 0.
type AuthStorage interface {
	MarkUsageLimitReached(provider, sessionID string, opts UsageLimitOptions) (switched bool)
}

// SettingsSource gives the retry settings of this moment. The Controller
// reads it at every decision, so changes take effect at the next attempt.
type SettingsSource interface {
	RetrySettings() Settings
	SetRetryEnabled(enabled bool)
}

// SettingsStore is a concurrency-safe SettingsSource holding one value.
type SettingsStore struct {
	mu sync.Mutex
	s  Settings
}

// NewSettingsStore returns a store holding s.
func NewSettingsStore(s Settings) *SettingsStore { return &SettingsStore{s: s} }

// RetrySettings implements SettingsSource.
func (st *SettingsStore) RetrySettings() Settings {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.s
}

// SetRetryEnabled implements SettingsSource.
func (st *SettingsStore) SetRetryEnabled(enabled bool) {
	st.mu.Lock()
	st.s.Enabled = enabled
	st.mu.Unlock()
}

// Set replaces the whole settings group. An invalid value (see
// Settings.Validate) is rejected with its error and changes nothing.
func (st *SettingsStore) Set(s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	st.mu.Lock()
	st.s = s
	st.mu.Unlock()
	return nil
}

// Config configures a Controller. Agent is required; everything else has a
// default.
type Config struct {
	Clock    clock.Clock    // default clock.New()
	Agent    Agent          // required
	Auth     AuthStorage    // optional: without it usage-limit errors never switch
	Settings SettingsSource // default NewSettingsStore(DefaultSettings())
	Variant  *Variant       // default Sound
	// Provider, SessionID and BaseURL are passed to AuthStorage.
	Provider, SessionID, BaseURL string
	// ContextWindow is the model's context window in tokens, for the
	// overflow usage rule; 0 turns the rule off.
	ContextWindow int64
}

// ErrNoAgent is returned by NewController without an Agent.
var ErrNoAgent = errors.New("policy: Config.Agent is required")

// Controller is the retry engine a Go agent embeds. Feed it the agent's
// events (OnMessageEnd, OnAgentEnd) and the user's commands (AbortRetry,
// Abort, OnPrompt); it decides with the variant's table and performs the
// effects: events to subscribers, the backoff timer on the injected clock,
// Agent.DropLastAssistant and Agent.Continue, AuthStorage questions.
//
// It is safe for concurrent use. Decisions are serialised. Subscribers,
// transition observers, AuthStorage and Agent.DropLastAssistant are called
// synchronously with the Controller locked, in the goroutine that caused
// them, so they must not call the Controller back synchronously;
// Agent.Continue is called after the lock is released and may re-enter.
type Controller struct {
	mu      sync.Mutex
	cfg     Config
	clk     clock.Clock
	snap    Snapshot
	gen     uint64      // last backoff timer id
	live    []liveTimer // running backoff waits; a timer not in it is inert
	ctl     uint64      // the cancellable wait (the original's abort controller), 0 if none
	waiters chan struct{}
	subs    []sub
	obs     []transObs
	rel     []func()
	// lastValid are the last settings that passed Validate.
	lastValid Settings
	nextID    int
}

type liveTimer struct {
	id uint64
	t  *clock.Timer
}

type sub struct {
	id int
	f  func(Event)
}

type transObs struct {
	id int
	f  func(fsm.Edge)
}

// NewController returns a Controller in state idle. It fails without an
// Agent and when the settings source's current settings are invalid.
func NewController(cfg Config) (*Controller, error) {
	if cfg.Agent == nil {
		return nil, ErrNoAgent
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Settings == nil {
		cfg.Settings = NewSettingsStore(DefaultSettings())
	}
	initial := cfg.Settings.RetrySettings()
	if err := initial.Validate(); err != nil {
		return nil, err
	}
	if cfg.Variant == nil {
		cfg.Variant = Sound
	}
	return &Controller{cfg: cfg, clk: cfg.Clock, snap: Snapshot{State: StateIdle}, lastValid: initial}, nil
}

// Reset returns the machine to idle with attempt 0 and no chain open. It
// stops every backoff timer (on a clock that cannot stop them, such as
// sim.Scheduler, they fire inertly) and drops an open chain silently:
// WaitForRetry waiters are released, but no auto_retry_end is emitted and
// OnRelease callbacks are not called. Subscribers and observers stay.
func (c *Controller) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snap = Snapshot{State: StateIdle}
	for _, l := range c.live {
		stopTimer(l.t)
	}
	c.live = c.live[:0]
	c.ctl = 0
	if c.waiters != nil {
		close(c.waiters)
		c.waiters = nil
	}
}

// Variant returns the policy variant the Controller runs.
func (c *Controller) Variant() *Variant { return c.cfg.Variant }

// OnMessageEnd feeds the message_end of an assistant reply. A successful
// reply (stopReason neither error nor aborted) ends a chain that is
// waiting for its retried run.
func (c *Controller) OnMessageEnd(m AssistantMessage) {
	if m.IsSuccess() {
		c.step(InputSuccess, "", 0)
	}
}

// AgentEndInput classifies the last assistant reply of a run for the retry
// machine; ok is false for a successful reply (nothing to decide at
// agent_end).
func AgentEndInput(last *AssistantMessage, contextWindow int64) (in Input, ok bool) {
	if last == nil {
		return InputNoMessage, true
	}
	switch Classify(*last, contextWindow) {
	case ClassRetryable:
		return InputRetryable, true
	case ClassOverflow:
		return InputOverflow, true
	case ClassFatal:
		return InputFatal, true
	case ClassAborted:
		return InputAborted, true
	}
	return 0, false
}

// OnAgentEnd feeds agent_end with the run's last assistant reply (nil when
// the run produced none). It reports whether a retry was scheduled; when it
// was not, the caller goes on to its compaction check.
func (c *Controller) OnAgentEnd(last *AssistantMessage) (retryScheduled bool) {
	in, ok := AgentEndInput(last, c.cfg.ContextWindow)
	if !ok {
		return false
	}
	msg := ""
	if last != nil {
		msg = last.ErrorMessage
	}
	d := c.step(in, msg, 0)
	return d.Rule != nil && d.Rule.Event == "retry"
}

// OnPrompt tells the machine a new prompt was accepted (a rest state
// becomes idle).
func (c *Controller) OnPrompt() { c.step(InputPrompt, "", 0) }

// AbortRetry cancels the open chain (the abort_retry command). At rest it
// does nothing.
func (c *Controller) AbortRetry() { c.step(InputAbortRetry, "", 0) }

// Abort is the retry side of a general abort: it cancels the open chain.
// Aborting the agent's stream is the caller's job.
func (c *Controller) Abort() { c.step(InputAbort, "", 0) }

// SetAutoRetryEnabled writes retry.enabled to the settings source.
func (c *Controller) SetAutoRetryEnabled(enabled bool) { c.cfg.Settings.SetRetryEnabled(enabled) }

// AutoRetryEnabled reports retry.enabled of the settings in use (see
// Settings).
func (c *Controller) AutoRetryEnabled() bool { return c.Settings().Enabled }

// Settings returns the settings the Controller decides with at this moment:
// the settings source's current value when it passes Validate, otherwise
// the last valid settings it saw (never a rejected value).
func (c *Controller) Settings() Settings {
	set := c.cfg.Settings.RetrySettings()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inUse(set)
}

// inUse returns set when it is valid (and remembers it), otherwise the last
// valid settings. c.mu is held.
func (c *Controller) inUse(set Settings) Settings {
	if set.Validate() != nil {
		// A custom SettingsSource returned absurd settings: keep deciding
		// with the last valid ones rather than with a negative maxRetries
		// or delay.
		return c.lastValid
	}
	c.lastValid = set
	return set
}

// IsRetrying reports whether a chain is open.
func (c *Controller) IsRetrying() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap.Open
}

// Attempt returns the attempt counter (0 at rest in the sound variant).
func (c *Controller) Attempt() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap.Attempt
}

// State returns the machine's state.
func (c *Controller) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap.State
}

// Snapshot returns state, attempt and whether a chain is open, read together.
func (c *Controller) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// WaitForRetry returns nil when no chain is open or when the open chain
// ends, and ctx.Err() if ctx is done first.
func (c *Controller) WaitForRetry(ctx context.Context) error {
	c.mu.Lock()
	ch := c.waiters
	c.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Subscribe registers f for every retry event, in order; the returned
// function unsubscribes. See Controller for what f may not do.
func (c *Controller) Subscribe(f func(Event)) (unsubscribe func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	c.subs = append(c.subs, sub{id, f})
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, s := range c.subs {
			if s.id == id {
				c.subs = append(c.subs[:i:i], c.subs[i+1:]...)
				return
			}
		}
	}
}

// OnTransition registers f for every fsm transition fired (self-loops
// included), in order; the returned function unregisters it.
func (c *Controller) OnTransition(f func(fsm.Edge)) (unregister func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	c.obs = append(c.obs, transObs{id, f})
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, s := range c.obs {
			if s.id == id {
				c.obs = append(c.obs[:i:i], c.obs[i+1:]...)
				return
			}
		}
	}
}

func (c *Controller) emit(e Event) {
	for _, s := range c.subs {
		s.f(e)
	}
}

// OnRelease registers f, called each time an open chain is closed (its
// WaitForRetry waiters released), under the same rules as subscribers.
func (c *Controller) OnRelease(f func()) {
	c.mu.Lock()
	c.rel = append(c.rel, f)
	c.mu.Unlock()
}

// elapsed is a backoff timer's callback; a timer that is no longer running
// (cancelled) is inert.
func (c *Controller) elapsed(id uint64) { c.step(InputElapsed, "", id) }

// dropLive forgets the running wait id and returns its timer (nil when it
// no longer runs).
func (c *Controller) dropLive(id uint64) (*clock.Timer, bool) {
	for i, x := range c.live {
		if x.id == id {
			c.live = append(c.live[:i], c.live[i+1:]...)
			return x.t, true
		}
	}
	return nil, false
}

// stopTimer stops a cancelled wait's timer so that a real clock frees it at
// once. A clock that cannot stop its timers (such as the simulator's, whose
// cancelled events still fire, inertly, as the original's do) returns nil or
// an already stopped timer.
func stopTimer(t *clock.Timer) {
	if t != nil {
		t.Stop()
	}
}

// step decides one input and performs its effects. timer, when not 0, is
// the backoff timer that fired: the step happens only if it still runs.
func (c *Controller) step(in Input, msg string, timer uint64) Decision {
	c.mu.Lock()
	if timer != 0 {
		if _, ok := c.dropLive(timer); !ok {
			c.mu.Unlock()
			return Decision{}
		}
	}
	set := c.inUse(c.cfg.Settings.RetrySettings())
	d := c.cfg.Variant.Decide(c.snap, in, msg, set, c.clk.Now())
	if d.Rule != nil && !d.Rule.Ignored() {
		// The machine compiled from the looplab declaration decides what
		// can fire; a Lookup costs nanoseconds where a looplab Event costs
		// about 0.75 µs and 5 allocations (TestControllerAgreesWithLooplab
		// keeps the two in step).
		if to, ok := c.cfg.Variant.Machine().Lookup(d.Edge.From, d.Edge.Event); !ok || to != d.Edge.To {
			panic("policy: table and machine disagree on " + d.Edge.String())
		}
		for _, o := range c.obs {
			o.f(d.Edge)
		}
	}
	wasOpen := c.snap.Open
	c.snap = d.Next
	if !wasOpen && c.snap.Open {
		c.waiters = make(chan struct{})
	}
	switched := false
	cont, later := false, false
	for _, e := range d.Effects() {
		switch e.Kind {
		case StepAskAuth:
			if c.cfg.Auth != nil {
				switched = c.cfg.Auth.MarkUsageLimitReached(c.cfg.Provider, c.cfg.SessionID,
					UsageLimitOptions{RetryAfterMs: e.RetryAfterMs, HasRetryAfter: e.HasRetryAfter, BaseURL: c.cfg.BaseURL})
			}
		case StepEmitStart:
			ev := e.Start
			if switched {
				ev.DelayMs = 0
			}
			c.emit(ev)
		case StepDropError:
			c.cfg.Agent.DropLastAssistant()
		case StepArmTimer:
			delay := e.Delay
			if switched {
				delay = 0
			}
			c.gen++
			id := c.gen
			t := c.clk.AfterFunc(delay, func() { c.elapsed(id) })
			c.live = append(c.live, liveTimer{id, t})
			c.ctl = id
		case StepCancelTimer:
			if c.ctl != 0 {
				t, _ := c.dropLive(c.ctl)
				stopTimer(t)
				c.ctl = 0
			}
		case StepWake, StepUncontrol:
			c.ctl = 0
		case StepEmitEnd:
			c.emit(e.End)
		case StepRelease:
			if c.waiters != nil {
				close(c.waiters)
				c.waiters = nil
			}
			for _, f := range c.rel {
				f()
			}
		case StepContinue:
			cont = true
		case StepContinueLater:
			later = true
		}
	}
	c.mu.Unlock()
	if later {
		c.clk.AfterFunc(0, c.continueAgent)
	}
	if cont {
		c.continueAgent()
	}
	return d
}

// continueAgent resumes the agent; a continue that cannot start is an input
// of its own.
func (c *Controller) continueAgent() {
	if err := c.cfg.Agent.Continue(); err != nil {
		c.step(InputContinueFailed, err.Error(), 0)
	}
}
