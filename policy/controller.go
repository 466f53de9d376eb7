package policy

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// Agent is the part of an agent the Controller drives. The Controller never
// calls it with its lock held, so an Agent may call the Controller back.
type Agent interface {
	// Continue resumes the agent from its runtime context after a backoff:
	// it starts the retried run, whose message_end and agent_end go to the
	// Controller as every run's do. It is called on the goroutine of the
	// input that ended the wait (sound: the backoff timer's callback, the
	// Clock's AfterFunc goroutine; original: a 0 ms timer's callback), after
	// that goroutine has delivered the decision's events (or found another
	// call delivering them: see Controller), with no lock held. It may
	// block, for the whole run if it likes: only that goroutine waits.
	//
	// ctx is for the retried run. Controller.Abort cancels it (so does
	// Reset); nothing else does, so it stays valid after Continue returns,
	// for a run that goes on elsewhere. (The Controller passes the same ctx
	// to every Continue until an Abort or Reset; the next one gets a new
	// ctx.) When ctx is already cancelled (an Abort came between the
	// decision and the call), Continue should not start the run and return
	// ctx.Err().
	//
	// Continue returns an error when the run cannot start (for example when
	// the context ends with an assistant message); the chain then gives up
	// with Reason continue_failed and the error's text as its finalError.
	Continue(ctx context.Context) error
}

// An Agent that keeps its replies in a runtime context also has the method
//
//	DropLastAssistant()
//
// which removes the trailing assistant message from it (the persisted
// history keeps it). The Controller calls it while a retry decision is
// delivered, just after its auto_retry_start. An Agent with nothing to drop
// (one that keeps no failed replies, such as retryfsm.Do's) need not have
// it.

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

// SettingsSource gives the retry policy of this moment. The Controller
// reads it at every decision, so changes take effect at the next attempt.
// A nil policy keeps the last one the Controller decided with.
type SettingsSource interface {
	RetryPolicy() *Policy
	SetRetryEnabled(enabled bool)
}

// SettingsStore is a concurrency-safe SettingsSource holding one Policy.
type SettingsStore struct {
	mu sync.Mutex
	p  *Policy
}

// NewSettingsStore returns a store holding p (nil: DefaultPolicy).
func NewSettingsStore(p *Policy) *SettingsStore {
	if p == nil {
		p = DefaultPolicy()
	}
	return &SettingsStore{p: p}
}

// RetryPolicy implements SettingsSource.
func (st *SettingsStore) RetryPolicy() *Policy {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.p
}

// SetRetryEnabled implements SettingsSource.
func (st *SettingsStore) SetRetryEnabled(enabled bool) {
	st.mu.Lock()
	st.p = st.p.WithEnabled(enabled)
	st.mu.Unlock()
}

// Set replaces the whole policy; nil changes nothing.
func (st *SettingsStore) Set(p *Policy) {
	if p == nil {
		return
	}
	st.mu.Lock()
	st.p = p
	st.mu.Unlock()
}

// timers is all the Controller uses of its clock.Clock: the time of a
// reply (for date hints) and timers for the backoff waits.
type timers interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) *clock.Timer
}

// Config configures a Controller. Agent is required; everything else has a
// default.
type Config struct {
	Clock    clock.Clock    // default clock.New()
	Agent    Agent          // required
	Auth     AuthStorage    // optional: without it usage-limit errors never switch
	Settings SettingsSource // default NewSettingsStore(DefaultPolicy())
	Variant  *Variant       // default Sound
	// Provider, SessionID and BaseURL are passed to AuthStorage.
	Provider, SessionID, BaseURL string
	// ContextWindow is the model's context window in tokens, for the
	// overflow usage rule; 0 turns the rule off.
	ContextWindow int64
	// Model is the id of the model the agent uses, retry_fallback's first
	// "from". With retry.fallback set, an Agent that also has a method
	// SetModel(modelID string) is told the model to use next when a chain
	// falls back (before the retried run's Continue).
	Model string
	// Rand draws the uniform number in [0,1) that jitters a retry's wait
	// (one per retryable failure while retry.jitter is on); default
	// math/rand/v2's Float64. Give a seeded source for reproducible waits.
	Rand func() float64
}

// errNoAgent is returned by NewController without an Agent.
var errNoAgent = errors.New("policy: Config.Agent is required")

// errNoPolicy is returned by NewController when the settings source has no
// policy.
var errNoPolicy = errors.New("policy: Config.Settings gives no policy (RetryPolicy returned nil)")

// Controller is the retry engine a Go agent embeds. Feed it the agent's
// events (OnMessageEnd, OnAgentEnd) and the user's commands (AbortRetry,
// Abort, OnPrompt); it decides with the variant's table and performs the
// effects: events to subscribers, the backoff timer on the injected clock,
// Agent.DropLastAssistant and Agent.Continue, AuthStorage questions. A
// prompt's caller learns how its retry chain ended from WaitForRetry.
//
// It is safe for concurrent use. Each input is decided under the
// Controller's lock, and no user code runs while it is held: not
// subscribers, transition observers or OnRelease callbacks, not the Agent,
// AuthStorage, SettingsSource or the Clock's AfterFunc. Any of them may call
// the Controller back. What a decision makes happen is queued under the
// lock and delivered after it is released, in the order of the decisions
// (each in the order of its rule's effects: transition, auth storage's
// question, auto_retry_start, DropLastAssistant, the backoff wait,
// auto_retry_end, the release of waiters and OnRelease callbacks):
//
//   - The call (or timer callback) that made a decision delivers it before
//     it returns, unless a delivery is already under way, on this goroutine
//     (a callback calling back) or another: that delivery then delivers it,
//     after everything queued before, before it returns. So the events a
//     subscriber causes come after the one it is handling, and events caused
//     by two goroutines at once arrive in the order of their decisions.
//   - A backoff wait starts when its turn in the queue comes: after its
//     auto_retry_start has been delivered and auth storage has answered (the
//     original, too, awaits auth storage before it sleeps).
//   - Agent.Continue is called by the goroutine that made the decision,
//     after its own delivery (see Agent).
//   - A callback that panics panics the call delivering it; the deliveries
//     after it wait for the next input fed to the Controller.
type Controller struct {
	mu     sync.Mutex
	cfg    Config
	clk    timers
	snap   retry.Snapshot
	dec    retry.Decision // the decision being made (under the lock)
	gen    uint64         // last backoff timer id
	live   []liveTimer    // running backoff waits; a timer not in it is inert
	ctl    uint64         // the cancellable wait (the original's abort controller), 0 if none
	subs   []sub          // copied on write: a delivery iterates the slice it read
	obs    []transObs     // copied on write
	rel    []func()       // copied on write
	ends   []endObs       // copied on write
	nextID int
	// lastPolicy is the last policy decided with (a source's nil keeps it).
	lastPolicy *Policy

	// wait is the open chain's waiters, made when the first one comes.
	wait *chainWait
	// last is how the last chain ended since the last OnPrompt or Reset.
	last chainEnd
	// runCtx is the ctx given to Agent.Continue, made at the first continue
	// after NewController, Abort or Reset and kept until Abort or Reset
	// cancels it (nil meanwhile).
	runCtx    context.Context
	runCancel context.CancelFunc

	// The prompt's context (OnPrompt): its end cancels the chain. prompt
	// counts the OnPrompt and Reset calls, so that a context that ends
	// after the next prompt cancels nothing; promptStop unregisters the
	// watch of the current one.
	prompt     uint64
	promptCtx  context.Context
	promptStop func() bool

	// The delivery queue: what decisions made while a delivery was under
	// way queued, for the holder of the delivering token.
	queue      []item
	spare      []item     // an emptied batch, for the next queue
	app        ctlApplier // the Applier of the decision being taken (under mu)
	delivering bool
	// switched is auth storage's answer for the decision being delivered
	// (used only by the token holder).
	switched bool
	// decided counts decisions, so that a step that let go of the lock to
	// ask auth storage sees whether another decision came in between.
	decided uint64
}

// chainWait is what WaitForRetry callers blocked on one chain wait for.
type chainWait struct {
	done chan struct{} // closed when the chain's end has been delivered
	out  chainEnd      // how it ended, written before done is closed
}

type liveTimer struct {
	id uint64
	t  *clock.Timer // nil until the wait is armed
}

type sub struct {
	id int
	f  func(Event)
}

type transObs struct {
	id int
	f  func(fsm.Edge)
}

type endObs struct {
	id int
	f  func(AutoRetryEnd, error)
}

// NewController returns a Controller in state idle. It fails without an
// Agent and when the settings source has no policy.
func NewController(cfg Config) (*Controller, error) {
	if cfg.Agent == nil {
		return nil, errNoAgent
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.New()
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.Settings == nil {
		cfg.Settings = NewSettingsStore(DefaultPolicy())
	}
	initial := cfg.Settings.RetryPolicy()
	if initial == nil {
		return nil, errNoPolicy
	}
	if cfg.Variant == nil {
		cfg.Variant = Sound()
	}
	return &Controller{cfg: cfg, clk: cfg.Clock, snap: retry.Snapshot{State: StateIdle}, lastPolicy: initial}, nil
}

// Reset returns the machine to idle with attempt 0 and no chain open, and
// forgets how the last chain ended. It stops every backoff timer (on a
// clock that cannot stop them, such as sim.Scheduler, they fire inertly),
// cancels the ctx of the latest Agent.Continue and drops an open chain
// silently: its WaitForRetry callers get an error wrapping
// ErrRetryCancelled, but no auto_retry_end is emitted and OnRelease
// callbacks are not called. Subscribers and observers stay; deliveries
// already queued are still made.
func (c *Controller) Reset() {
	c.mu.Lock()
	c.prompt++
	stopWatch := c.promptStop
	c.promptCtx, c.promptStop = nil, nil
	c.snap = retry.Snapshot{State: StateIdle}
	for _, l := range c.live {
		stopTimer(l.t)
	}
	c.live = c.live[:0]
	c.ctl = 0
	if w := c.wait; w != nil {
		c.wait = nil
		w.out = chainEnd{kind: outReset}
		close(w.done)
	}
	c.last = chainEnd{}
	cancel := c.runCancel
	c.runCtx, c.runCancel = nil, nil
	c.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	if cancel != nil {
		cancel()
	}
}

// Variant returns the policy variant the Controller runs.
func (c *Controller) Variant() *Variant { return c.cfg.Variant }

// OnMessageEnd feeds the message_end of an assistant reply. A successful
// reply (stopReason neither error nor aborted) ends a chain that is
// waiting for its retried run.
func (c *Controller) OnMessageEnd(m AssistantMessage) {
	if m.IsSuccess() {
		c.step(retry.InputSuccess, nil, 0)
	}
}

// OnAgentEnd feeds agent_end with the run's last assistant reply (nil when
// the run produced none). It reports whether a retry was scheduled; when it
// was not, the caller goes on to its compaction check.
func (c *Controller) OnAgentEnd(last *AssistantMessage) (retryScheduled bool) {
	if last == nil {
		return c.step(retry.InputNoMessage, nil, 0)
	}
	// The reply is classified once, here, by the policy's classifier: the
	// decision reads the flags. User code (the settings source) is called
	// before locking.
	p := c.cfg.Settings.RetryPolicy()
	c.mu.Lock()
	p = c.policy(p) // lastPolicy is the lock's
	c.mu.Unlock()
	o := p.Reply(*last, c.cfg.ContextWindow, c.clk.Now())
	in, ok := retry.EndInput(&o)
	if !ok {
		return false
	}
	if in == retry.InputRetryable && p.Jittered() {
		o.Draw = c.cfg.Rand()
	}
	return c.stepWith(in, &o, 0, p, nil)
}

// OnPrompt tells the machine a new prompt was accepted (a rest state
// becomes idle) and binds the prompt's retry chain to ctx. WaitForRetry
// forgets the chains that ended before it.
//
// When ctx is done (cancelled, or its deadline passed) before the chain
// ends, the chain is cancelled as by Abort: the pending backoff wait is
// stopped (auto_retry_end "Retry cancelled"), the ctx of a running
// Agent.Continue is cancelled, and WaitForRetry reports an error matching
// both ErrRetryCancelled and ctx.Err(). So no retried run starts after a
// prompt bounded by ctx has returned. A ctx that ends once its chain has
// ended, or after the next OnPrompt or Reset, changes nothing; nor does
// the ctx of a prompt made while a chain is open (ignored, as the prompt
// is). Pass
// context.Background() for a chain that only AbortRetry, Abort or Reset
// end (the behaviour of OnPrompt before it took a ctx).
func (c *Controller) OnPrompt(ctx context.Context) {
	c.step(retry.InputPrompt, nil, 0)
	c.mu.Lock()
	if c.snap.Open {
		// A prompt during a chain is ignored (the session rejects it):
		// the chain stays bound to its own prompt's ctx.
		c.mu.Unlock()
		return
	}
	c.prompt++
	gen := c.prompt
	stopWatch := c.promptStop
	c.promptCtx, c.promptStop = ctx, nil
	c.mu.Unlock()
	if stopWatch != nil {
		stopWatch()
	}
	if ctx.Done() == nil {
		return // never done
	}
	stop := context.AfterFunc(ctx, func() { c.promptEnded(gen, ctx) })
	c.mu.Lock()
	if c.prompt == gen {
		c.promptStop = stop
		stop = nil
	}
	c.mu.Unlock()
	if stop != nil { // a later OnPrompt or Reset came in between
		stop()
	}
}

// promptEnded cancels the chain of prompt gen, whose ctx is done, as Abort
// does, with ctx.Err() as the cause WaitForRetry reports. A later prompt
// (or Reset) makes it inert.
func (c *Controller) promptEnded(gen uint64, ctx context.Context) {
	c.mu.Lock()
	current := c.prompt == gen
	c.mu.Unlock()
	if current {
		c.stepWith(retry.InputAbort, nil, 0, c.cfg.Settings.RetryPolicy(), ctx.Err())
	}
}

// AbortRetry cancels the open chain (the abort_retry command). At rest it
// does nothing. A retried run in flight goes on (its ctx is not cancelled).
func (c *Controller) AbortRetry() { c.step(retry.InputAbortRetry, nil, 0) }

// Abort is the retry side of a general abort: it cancels the open chain
// and the ctx of the latest Agent.Continue, so a retried run in flight
// stops. Aborting a run the caller started itself is the caller's job.
func (c *Controller) Abort() { c.step(retry.InputAbort, nil, 0) }

// SetAutoRetryEnabled writes retry.enabled to the settings source.
func (c *Controller) SetAutoRetryEnabled(enabled bool) { c.cfg.Settings.SetRetryEnabled(enabled) }

// AutoRetryEnabled reports retry.enabled of the settings in use (see
// Settings).
func (c *Controller) AutoRetryEnabled() bool { return c.Settings().Enabled }

// Settings returns the settings the Controller decides with at this moment
// (a copy): its policy's (see Policy).
func (c *Controller) Settings() Settings { return c.Policy().Settings() }

// Policy returns the policy the Controller decides with at this moment: the
// settings source's, or the last one it saw when the source gives nil.
func (c *Controller) Policy() *Policy {
	p := c.cfg.Settings.RetryPolicy()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.policy(p)
}

// policy returns p, remembered as the last policy, or the last one for a
// nil p. c.mu is held.
func (c *Controller) policy(p *Policy) *Policy {
	if p == nil {
		return c.lastPolicy
	}
	c.lastPolicy = p
	return p
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
func (c *Controller) Snapshot() retry.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// WaitForRetry reports how a retry chain ended: the chain open at the call,
// once it ends, or else the last chain that ended since the last OnPrompt
// (or Reset). It returns
//
//   - nil when that chain succeeded, or when no chain ended since the last
//     OnPrompt and none is open;
//   - an error matching ErrRetryCancelled (errors.Is) when it was
//     cancelled: by AbortRetry, by Abort, by an aborted reply, or by Reset;
//   - an *ExhaustedError (errors.As) when it gave up, with its attempt,
//     finalError and Reason (max_retries, non_retryable, disabled,
//     no_message, continue_failed);
//   - an error matching both ErrRetryCancelled and the prompt's ctx.Err()
//     when the ctx given to OnPrompt ended first (see OnPrompt);
//   - ctx.Err() when ctx ends before the open chain does, unless ctx is
//     (or ends with) the prompt's: it then waits for the cancellation to be
//     delivered and reports it as above.
//
// A chain that ends at once (maxRetries 0) counts as a chain. A call blocked
// on an open chain returns once the chain's auto_retry_end has been
// delivered to subscribers; a call made after the chain ended returns at
// once, so a subscriber may call it too (a subscriber that waits on an open
// chain waits for deliveries queued behind its own, that is until ctx ends,
// or for ever when ctx is the prompt's and has ended: it should not).
//
// In the original variant a chain can be left open (a fatal error, an
// overflow, an aborted reply or a failed continue mid-chain, or retry
// switched off: SPEC §9); WaitForRetry then waits until a later input
// closes it (a success, a last retryable error, abort_retry or abort, which
// report ErrRetryCancelled even where no auto_retry_end is emitted) or ctx
// ends. Its spurious ends (a success with a stale counter) count as chains.
func (c *Controller) WaitForRetry(ctx context.Context) error {
	c.mu.Lock()
	if !c.snap.Open {
		out := c.last
		c.mu.Unlock()
		return out.err()
	}
	w := c.wait
	if w == nil {
		w = &chainWait{done: make(chan struct{})}
		c.wait = w
	}
	c.mu.Unlock()
	select {
	case <-w.done:
		return w.out.err()
	case <-ctx.Done():
	}
	c.mu.Lock()
	gen, pctx := c.prompt, c.promptCtx
	c.mu.Unlock()
	if pctx != nil && pctx.Err() != nil {
		// The prompt's ctx is done too: its watch cancels the chain. It
		// may not have run yet, or have run before this chain opened (an
		// agent that fed a reply after its ctx ended): cancel it here (an
		// abort at rest does nothing), and report that.
		c.promptEnded(gen, pctx)
		c.mu.Lock()
		closed := c.wait != w // the release is decided; its delivery closes w.done
		c.mu.Unlock()
		if closed {
			<-w.done
			return w.out.err()
		}
	}
	return ctx.Err()
}

// Subscribe registers f for every retry event delivered from now on, in
// order; the returned function unsubscribes (a delivery already under way
// may still reach f once). f may call the Controller (see Controller).
func (c *Controller) Subscribe(f func(Event)) (unsubscribe func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	c.subs = append(c.subs[:len(c.subs):len(c.subs)], sub{id, f})
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
// included), in order, under the same rules as subscribers; the returned
// function unregisters it.
func (c *Controller) OnTransition(f func(fsm.Edge)) (unregister func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	c.obs = append(c.obs[:len(c.obs):len(c.obs)], transObs{id, f})
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

// OnChainEnd registers f, called with each auto_retry_end just after the
// subscribers got it, and with how that chain ended as WaitForRetry reports
// it: nil for a success, an error matching ErrRetryCancelled for a cancel,
// an *ExhaustedError (with its Reason) for a give-up. It runs under the
// same rules as subscribers (adapters/otel counts outcomes by reason with
// it); the returned function unregisters it.
func (c *Controller) OnChainEnd(f func(end AutoRetryEnd, err error)) (unregister func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	id := c.nextID
	c.ends = append(c.ends[:len(c.ends):len(c.ends)], endObs{id, f})
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, s := range c.ends {
			if s.id == id {
				c.ends = append(c.ends[:i:i], c.ends[i+1:]...)
				return
			}
		}
	}
}

// OnRelease registers f, called each time an open chain is closed (its
// WaitForRetry callers released), under the same rules as subscribers.
func (c *Controller) OnRelease(f func()) {
	c.mu.Lock()
	c.rel = append(c.rel[:len(c.rel):len(c.rel)], f)
	c.mu.Unlock()
}

// elapsed is a backoff timer's callback; a timer that is no longer running
// (cancelled) is inert.
func (c *Controller) elapsed(id uint64) { c.step(retry.InputElapsed, nil, id) }

// liveIndex returns the index of the running wait id in c.live, or -1.
func (c *Controller) liveIndex(id uint64) int {
	for i, x := range c.live {
		if x.id == id {
			return i
		}
	}
	return -1
}

// dropLive forgets the running wait id and returns its timer (nil when it
// is not armed yet); ok is false when it no longer runs.
func (c *Controller) dropLive(id uint64) (t *clock.Timer, ok bool) {
	i := c.liveIndex(id)
	if i < 0 {
		return nil, false
	}
	t = c.live[i].t
	c.live = append(c.live[:i], c.live[i+1:]...)
	return t, true
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
