package policy

import (
	"context"
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// The Controller's runtime: a step decides one input under the lock, then
// its deliveries (events, transitions, timers, releases, the continue) are
// made in order, outside the lock, by one goroutine at a time.

// itemKind is the kind of a queued delivery.
type itemKind uint8

const (
	itemEdge     itemKind = iota // transition observers
	itemAsk                      // AuthStorage.MarkUsageLimitReached
	itemFallback                 // retry_fallback to subscribers; Agent.SetModel
	itemStart                    // auto_retry_start to subscribers
	itemDrop                     // Agent.DropLastAssistant
	itemArm                      // start a backoff wait on the clock
	itemEnd                      // auto_retry_end to subscribers
	itemRelease                  // release a chain's waiters; OnRelease callbacks
)

// stateAt is the states by index (State.Index), for itemEdge's from.
var stateAt = retry.States()

// maxItems bounds the deliveries of one decision (edge, question, start,
// drop, wait, end, release) for the buffer step keeps them in; a longer
// decision would only spill to the heap.
const maxItems = 8

// item is one delivery, kept small: step builds up to maxItems of them on
// its stack for every decision.
type item struct {
	kind itemKind
	ask  bool  // itemStart, itemArm: a switch of credentials makes the delay 0
	flag bool  // itemEnd: success; itemAsk: a retry-after hint was found
	from uint8 // itemEdge: the index of the state left
	// attempt is the event's attempt (itemStart, itemEnd); max its
	// maxAttempts (itemStart).
	attempt, max int
	ms           float64       // itemStart: delayMs (before auth storage's answer); itemAsk: the retry-after hint
	delay        time.Duration // itemArm: the wait (before auth storage's answer)
	id           uint64        // itemArm: the wait's id
	text         string        // itemStart: errorMessage; itemEnd: finalError; itemFallback: the next model
	from2        string        // itemFallback: the model left
	rule         *retry.Rule   // itemEdge: the rule fired; itemEnd: the rule ending the chain
	wait         *chainWait    // itemRelease: the chain's waiters, or nil
}

// step decides one input under the lock, delivers what the decision makes
// happen (or queues it when a delivery is under way) and continues the
// agent if the decision says so. o is the input's classified reply (nil
// for none). timer, when not 0, is the backoff timer that fired: the step
// happens only if it still runs. It reports whether a retry was scheduled.
func (c *Controller) step(in retry.Input, o *classify.Outcome, timer uint64) (retried bool) {
	// User code (the settings source) is called before locking.
	return c.stepWith(in, o, timer, c.cfg.Settings.RetryPolicy(), nil)
}

// stepWith is step with the policy already read (nil: the last one). cause, when not nil, is
// why a cancelled chain was cancelled (the prompt's ctx.Err()), reported
// by WaitForRetry with ErrRetryCancelled.
func (c *Controller) stepWith(in retry.Input, o *classify.Outcome, timer uint64, p *Policy, cause error) (retried bool) {
	var buf [maxItems]item // the decision's deliveries, on the stack
	its := buf[:0]
	c.mu.Lock()
	if timer != 0 {
		if _, ok := c.dropLive(timer); !ok {
			c.mu.Unlock()
			return false
		}
	}
	p = c.policy(p)
	if in == retry.InputPrompt {
		c.last = chainEnd{}
	}
	d := &c.dec
	c.cfg.Variant.Decide(d, c.snap, in, o, p)
	asked := false
	if d.AsksAuth() && d.TooLong {
		// The answer decides the rule (a switch makes the wait 0, so not
		// too long): auth storage is asked now, the decision taken again.
		d, asked = c.askAuth(d, in, o, p), true
	}
	c.decided++
	if d.Fired() {
		// The table compiled from the looplab declaration decides (a
		// lookup by integer index, where a looplab Event costs about
		// 0.75 µs and 5 allocations; TestControllerAgreesWithLooplab keeps
		// the two in step).
		its = append(its, item{kind: itemEdge, from: uint8(c.snap.State.Index()), rule: d.Rule})
	}
	retried = d.Retries()
	c.snap = d.Next
	// The effects, through the one loop over them (applier): the
	// Controller's applier (under the lock) gathers the deliveries.
	ap := &c.app
	ap.c, ap.cause, ap.asked, ap.ask, ap.ended, ap.out = c, cause, asked, false, false, chainEnd{}
	ap.cont, ap.later, ap.runCtx, ap.its = false, false, nil, append(ap.buf[:0], its...)
	d.Apply(ap)
	its = append(its[:0], ap.its...)
	runCtx, cont, later, ended, out := ap.runCtx, ap.cont, ap.later, ap.ended, ap.out
	ap.runCtx, ap.cause = nil, nil
	var cancelRun context.CancelFunc
	if ended { // an end without a release: the chain ended at once (maxRetries 0)
		c.last = out
	}
	if in == retry.InputAbort && c.runCancel != nil {
		cancelRun = c.runCancel
		c.runCtx, c.runCancel = nil, nil
	}
	switch {
	case c.delivering:
		// Another call delivers: it takes these after what it has queued.
		c.queue = append(c.queue, its...)
		c.mu.Unlock()
	case len(its) > 0 || len(c.queue) > 0:
		c.delivering = true
		subs, obs, rel, ends := c.subs, c.obs, c.rel, c.ends
		c.mu.Unlock()
		c.deliver(its, subs, obs, rel, ends)
	default:
		c.mu.Unlock()
	}
	if cancelRun != nil {
		cancelRun()
	}
	if later {
		c.clk.AfterFunc(0, func() { c.continueAgent(runCtx) })
	}
	if cont {
		c.continueAgent(runCtx)
	}
	return retried
}

// askAuth completes a decision whose rule depends on auth storage's answer
// (a usage limit whose wait would be too long): the lock is let go while
// auth storage answers, then the decision is taken again with the answer,
// from the snapshot of that moment should another decision have come in
// between (auth storage is asked once). Called and returns with the lock
// held. (Other usage limits are asked in delivery order: the answer only
// sets the wait.)
func (c *Controller) askAuth(d *retry.Decision, in retry.Input, o *classify.Outcome, p *Policy) *retry.Decision {
	switched := false
	if c.cfg.Auth != nil {
		// Another step may use c.dec while the lock is let go.
		own := new(retry.Decision)
		*own = *d
		d = own
		before := c.decided
		ms, has := d.RetryAfter()
		c.mu.Unlock()
		switched = c.cfg.Auth.MarkUsageLimitReached(c.cfg.Provider, c.cfg.SessionID,
			UsageLimitOptions{RetryAfterMs: ms, HasRetryAfter: has, BaseURL: c.cfg.BaseURL})
		c.mu.Lock()
		if c.decided != before {
			c.cfg.Variant.Decide(d, c.snap, in, o, p)
		}
	}
	d.Resume(switched)
	return d
}

// deliver makes the deliveries first (with the subscribers and observers
// of the moment they were taken), then those queued meanwhile, batch by
// batch, with the delivering token held (the caller took it) and the lock
// not held; it gives the token back when the queue is empty.
func (c *Controller) deliver(first []item, subs []sub, obs []transObs, rel []func(), ends []endObs) {
	c.deliverBatch(first, subs, obs, rel, ends)
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.delivering = false
			c.mu.Unlock()
			return
		}
		batch := c.queue
		c.queue, c.spare = c.spare, nil
		subs, obs, rel, ends = c.subs, c.obs, c.rel, c.ends
		c.mu.Unlock()
		c.deliverBatch(batch, subs, obs, rel, ends)
		clear(batch) // let the strings go
		c.mu.Lock()
		c.spare = batch[:0]
		c.mu.Unlock()
	}
}

// deliverBatch makes the deliveries its in order. Should a callback panic,
// the deliveries after it go back to the front of the queue (the next
// delivery makes them) and the token is given back.
func (c *Controller) deliverBatch(its []item, subs []sub, obs []transObs, rel []func(), ends []endObs) {
	i := 0
	defer func() {
		if i < len(its) {
			c.mu.Lock()
			c.queue = append(append([]item(nil), its[i+1:]...), c.queue...)
			c.delivering = false
			c.mu.Unlock()
		}
	}()
	for ; i < len(its); i++ {
		c.deliverOne(&its[i], subs, obs, rel, ends)
	}
}

// deliverOne makes one delivery (lock not held).
func (c *Controller) deliverOne(it *item, subs []sub, obs []transObs, rel []func(), ends []endObs) {
	switch it.kind {
	case itemEdge:
		for _, o := range obs {
			o.f(fsm.Edge{From: string(stateAt[it.from]), Event: it.rule.Event, To: string(it.rule.To)})
		}
	case itemAsk:
		c.switched = false
		c.switched = c.cfg.Auth.MarkUsageLimitReached(c.cfg.Provider, c.cfg.SessionID,
			UsageLimitOptions{RetryAfterMs: it.ms, HasRetryAfter: it.flag, BaseURL: c.cfg.BaseURL})
	case itemStart:
		ev := AutoRetryStart{Attempt: it.attempt, MaxAttempts: it.max, DelayMs: it.ms, ErrorMessage: it.text}
		if it.ask && c.switched { // auth storage's answer completes it (Effect.Answer): a switch makes the delay 0
			ev.DelayMs = 0
		}
		for _, s := range subs {
			s.f(ev)
		}
	case itemFallback:
		if m, ok := c.cfg.Agent.(interface{ SetModel(modelID string) }); ok {
			m.SetModel(it.text)
		}
		ev := RetryFallback{From: it.from2, To: it.text}
		for _, s := range subs {
			s.f(ev)
		}
	case itemDrop:
		if d, ok := c.cfg.Agent.(interface{ DropLastAssistant() }); ok {
			d.DropLastAssistant()
		}
	case itemArm:
		c.arm(it)
	case itemEnd:
		for _, s := range subs {
			s.f(AutoRetryEnd{Success: it.flag, Attempt: it.attempt, FinalError: it.text})
		}
		if len(ends) > 0 {
			ev := AutoRetryEnd{Success: it.flag, Attempt: it.attempt, FinalError: it.text}
			err := endOf(it.rule, ev).err()
			for _, e := range ends {
				e.f(ev, err)
			}
		}
	case itemRelease:
		if it.wait != nil {
			close(it.wait.done)
		}
		for _, f := range rel {
			f()
		}
	}
}

// arm starts the backoff wait it.id on the clock (lock not held), unless it
// was cancelled before its turn came.
func (c *Controller) arm(it *item) {
	id := it.id
	c.mu.Lock()
	cancelled := c.liveIndex(id) < 0
	c.mu.Unlock()
	if cancelled {
		return
	}
	delay := retry.Effect{Kind: retry.StepArmTimer, Pending: it.ask, Delay: it.delay}.Answer(c.switched).Delay
	t := c.clk.AfterFunc(delay, func() { c.elapsed(id) })
	c.mu.Lock()
	i := c.liveIndex(id)
	if i >= 0 {
		c.live[i].t = t
	}
	c.mu.Unlock()
	if i < 0 { // cancelled (or fired) while being armed
		stopTimer(t)
	}
}

// continueAgent resumes the agent; a continue that cannot start is an input
// of its own.
func (c *Controller) continueAgent(ctx context.Context) {
	if err := c.cfg.Agent.Continue(ctx); err != nil {
		c.step(retry.InputContinueFailed, &classify.Outcome{Message: err.Error()}, 0)
	}
}

// ctlApplier is the Controller's applier of a decision: it gathers the
// decision's deliveries (its) and what is done after them. It is the
// Controller's (app), used under the lock: no allocation per decision.
type ctlApplier struct {
	c           *Controller
	cause       error // why a cancelled chain was cancelled
	asked       bool  // auth storage was asked already (askAuth)
	ask         bool  // a switch of credentials may make the delays 0
	ended       bool  // an auto_retry_end without its release yet
	out         chainEnd
	cont, later bool
	runCtx      context.Context
	its         []item
	buf         [maxItems]item
}

// AskAuth asks auth storage, in delivery order (with a hint).
func (a *ctlApplier) AskAuth(d *retry.Decision, _ *retry.Effect) {
	if a.c.cfg.Auth != nil && !a.asked {
		a.ask = true
		ms, has := d.RetryAfter()
		a.its = append(a.its, item{kind: itemAsk, ms: ms, flag: has})
	}
}

// Fallback delivers retry_fallback.
func (a *ctlApplier) Fallback(d *retry.Decision, e *retry.Effect) {
	fb := d.Fallback(e, a.c.cfg.Model)
	a.its = append(a.its, item{kind: itemFallback, from2: fb.From, text: fb.To})
}

// EmitStart delivers auto_retry_start.
func (a *ctlApplier) EmitStart(d *retry.Decision, e *retry.Effect) {
	st := d.Start(e)
	a.its = append(a.its, item{kind: itemStart, ask: a.ask && e.Pending, attempt: st.Attempt, max: st.MaxAttempts, ms: st.DelayMs, text: st.ErrorMessage})
}

// DropError asks the agent to drop its last assistant error.
func (a *ctlApplier) DropError() { a.its = append(a.its, item{kind: itemDrop}) }

// ArmTimer arms a backoff wait, the cancellable one.
func (a *ctlApplier) ArmTimer(_ *retry.Decision, e *retry.Effect) {
	c := a.c
	c.gen++
	c.live = append(c.live, liveTimer{id: c.gen})
	c.ctl = c.gen
	a.its = append(a.its, item{kind: itemArm, ask: a.ask && e.Pending, delay: e.Delay, id: c.gen})
}

// CancelTimer stops the cancellable wait, if any.
func (a *ctlApplier) CancelTimer() {
	c := a.c
	if c.ctl != 0 {
		t, _ := c.dropLive(c.ctl)
		stopTimer(t)
		c.ctl = 0
	}
}

// Uncontrol: no wait is cancellable any more.
func (a *ctlApplier) Uncontrol() { a.c.ctl = 0 }

// EmitEnd delivers auto_retry_end and notes how the chain ended.
func (a *ctlApplier) EmitEnd(d *retry.Decision, e *retry.Effect) {
	end := d.End(e)
	a.its = append(a.its, item{kind: itemEnd, flag: end.Success, attempt: end.Attempt, text: end.FinalError, rule: d.Rule})
	a.ended, a.out = true, endOf(d.Rule, end)
	if a.out.kind == outCancelled {
		a.out.cause = a.cause
	}
}

// Release closes the chain: its waiters get how it ended.
func (a *ctlApplier) Release() {
	c := a.c
	if !a.ended {
		a.out = chainEnd{kind: outCancelled, cause: a.cause} // the original's release without an end
	}
	a.ended = false
	c.last = a.out
	w := c.wait
	c.wait = nil
	if w != nil {
		w.out = a.out
	}
	a.its = append(a.its, item{kind: itemRelease, wait: w})
}

// Continue continues the agent, now or from a 0 ms timer, in the run's
// context.
func (a *ctlApplier) Continue(later bool) {
	c := a.c
	a.cont, a.later = !later, later
	if c.runCtx == nil {
		c.runCtx, c.runCancel = context.WithCancel(context.Background())
	}
	a.runCtx = c.runCtx
}
