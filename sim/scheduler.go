package sim

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/benbjohnson/clock"
)

// Scheduler is a discrete-event queue behind the clock.Clock interface.
// Virtual time jumps straight to the next due event; events due at the same
// instant fire in the order they were scheduled. It is driven from one
// goroutine (Run or Step) and is not safe for concurrent use.
//
// AfterFunc is the method the policy.Controller uses. The *clock.Timer it
// returns is a shared, stopped timer (benbjohnson's Timer cannot be built
// outside its package with a working Stop): stopping it does nothing, and a
// cancelled event still fires, where its owner ignores it, as the
// original's abandoned timers do (it matters for the time of the last event).
type Scheduler struct {
	epoch time.Time
	now   time.Duration
	seq   uint64
	q     []item
	fired uint64
	// AfterEach, when set, runs after every event the queue fires.
	AfterEach func()
}

type item struct {
	at  time.Duration
	seq uint64
	fn  func()  // or
	h   Handler // with ev
	ev  Posted
}

// Handler handles the events posted to a Scheduler with Post.
type Handler interface {
	HandleEvent(e Posted)
}

// Posted is an event posted with Post: what it is, for its handler.
type Posted struct {
	Kind uint8
	ID   uint64
	N    int
}

var _ clock.Clock = (*Scheduler)(nil)

// NewScheduler returns a scheduler whose virtual time 0 is the wall-clock
// instant epoch.
func NewScheduler(epoch time.Time) *Scheduler { return &Scheduler{epoch: epoch} }

// Elapsed is the virtual time since start.
func (s *Scheduler) Elapsed() time.Duration { return s.now }

// Fired is the number of events fired so far.
func (s *Scheduler) Fired() uint64 { return s.fired }

// Pending is the number of events waiting in the queue.
func (s *Scheduler) Pending() int { return len(s.q) }

// Reset empties the queue and sets virtual time to 0 and the epoch, keeping
// the queue's memory.
func (s *Scheduler) Reset(epoch time.Time) {
	clear(s.q)
	s.q = s.q[:0]
	s.epoch, s.now, s.seq, s.fired = epoch, 0, 0, 0
}

// At schedules fn at virtual time at (not before now).
func (s *Scheduler) At(at time.Duration, fn func()) {
	if at < s.now {
		at = s.now
	}
	s.seq++
	s.q = append(s.q, item{at: at, seq: s.seq, fn: fn})
	s.up(len(s.q) - 1)
}

// Post schedules e for h at virtual time at (not before now). Unlike At it
// needs no closure: a shell posting to itself allocates nothing.
func (s *Scheduler) Post(at time.Duration, h Handler, e Posted) {
	if at < s.now {
		at = s.now
	}
	s.seq++
	s.q = append(s.q, item{at: at, seq: s.seq, h: h, ev: e})
	s.up(len(s.q) - 1)
}

// PostIn posts e for h after d (saturating, like In).
func (s *Scheduler) PostIn(d time.Duration, h Handler, e Posted) {
	if d < 0 {
		d = 0
	}
	at := s.now + d
	if at < s.now {
		at = time.Duration(math.MaxInt64)
	}
	s.Post(at, h, e)
}

// In schedules fn after d (saturating: a huge d never wraps into the past).
func (s *Scheduler) In(d time.Duration, fn func()) {
	if d < 0 {
		d = 0
	}
	at := s.now + d
	if at < s.now {
		at = time.Duration(math.MaxInt64)
	}
	s.At(at, fn)
}

func less(a, b item) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

func (s *Scheduler) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !less(s.q[i], s.q[p]) {
			return
		}
		s.q[i], s.q[p] = s.q[p], s.q[i]
		i = p
	}
}

func (s *Scheduler) down(i int) {
	n := len(s.q)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && less(s.q[r], s.q[l]) {
			m = r
		}
		if !less(s.q[m], s.q[i]) {
			return
		}
		s.q[i], s.q[m] = s.q[m], s.q[i]
		i = m
	}
}

// NextAt returns the time of the next due event; ok is false when the
// queue is empty.
func (s *Scheduler) NextAt() (at time.Duration, ok bool) {
	if len(s.q) == 0 {
		return 0, false
	}
	return s.q[0].at, true
}

// Step fires the next event, moving virtual time to it. It returns false
// when the queue is empty.
func (s *Scheduler) Step() bool {
	if len(s.q) == 0 {
		return false
	}
	it := s.q[0]
	if last := len(s.q) - 1; last == 0 { // the usual queue: one event
		s.q[0] = item{}
		s.q = s.q[:0]
	} else {
		s.q[0] = s.q[last]
		s.q[last] = item{}
		s.q = s.q[:last]
		s.down(0)
	}
	s.now = it.at
	s.fired++
	if it.fn != nil {
		it.fn()
	} else {
		it.h.HandleEvent(it.ev)
	}
	if s.AfterEach != nil {
		s.AfterEach()
	}
	return true
}

// Drain fires every queued event (virtual time jumps from one to the next)
// until the queue is empty. It gives up with ErrTooManyEvents after
// MaxEvents events in one call, so no simulation runs forever.
func (s *Scheduler) Drain() error {
	start := s.fired
	for s.Step() {
		if s.fired-start > MaxEvents {
			return ErrTooManyEvents
		}
	}
	return nil
}

// Advance fires every event due at or before t, then moves time to t, like
// RunUntil, but gives up with ErrTooManyEvents after MaxEvents events.
func (s *Scheduler) Advance(t time.Duration) error {
	start := s.fired
	for len(s.q) > 0 && s.q[0].at <= t {
		s.Step()
		if s.fired-start > MaxEvents {
			return ErrTooManyEvents
		}
	}
	if t > s.now {
		s.now = t
	}
	return nil
}

// RunUntil fires every event due at or before t, then moves time to t.
func (s *Scheduler) RunUntil(t time.Duration) {
	for len(s.q) > 0 && s.q[0].at <= t {
		s.Step()
	}
	if t > s.now {
		s.now = t
	}
}

// Now implements clock.Clock: the epoch plus virtual time.
func (s *Scheduler) Now() time.Time { return s.epoch.Add(s.now) }

// Since implements clock.Clock.
func (s *Scheduler) Since(t time.Time) time.Duration { return s.Now().Sub(t) }

// Until implements clock.Clock.
func (s *Scheduler) Until(t time.Time) time.Duration { return t.Sub(s.Now()) }

// AfterFunc implements clock.Clock: f runs in the queue's goroutine when
// virtual time reaches now+d. The returned Timer is a shared, already
// stopped one: Stop is a harmless no-op (the event stays queued; owners make
// it inert), and it must not be reset.
func (s *Scheduler) AfterFunc(d time.Duration, f func()) *clock.Timer {
	s.In(d, f)
	return inertTimer
}

// inertTimer is a real timer stopped at creation: benbjohnson's Timer can
// be built with a working Stop only by a clock of its own package.
var inertTimer = func() *clock.Timer {
	t := clock.New().AfterFunc(time.Hour, func() {})
	t.Stop()
	return t
}()

// After implements clock.Clock: the channel receives the virtual time when
// it is reached (buffered, never blocks the queue).
func (s *Scheduler) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	s.In(d, func() { ch <- s.Now() })
	return ch
}

// Timer implements clock.Clock. Only the channel C of the result may be
// used.
func (s *Scheduler) Timer(d time.Duration) *clock.Timer {
	return &clock.Timer{C: s.After(d)}
}

// Sleep implements clock.Clock by running the queue until now+d. It may be
// called only from the goroutine that drives the scheduler.
func (s *Scheduler) Sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	t := s.now + d
	if t < s.now {
		t = time.Duration(math.MaxInt64)
	}
	s.RunUntil(t)
}

// Tick implements clock.Clock with a channel that receives every d of
// virtual time (buffered 1; ticks are dropped when nobody reads, like
// time.Ticker).
func (s *Scheduler) Tick(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	if d <= 0 {
		return ch
	}
	var tick func()
	tick = func() {
		select {
		case ch <- s.Now():
		default:
		}
		s.In(d, tick)
	}
	s.In(d, tick)
	return ch
}

// Ticker implements clock.Clock. Only the channel C of the result may be
// used, and the ticks continue while the queue runs: prefer AfterFunc.
func (s *Scheduler) Ticker(d time.Duration) *clock.Ticker {
	return &clock.Ticker{C: s.Tick(d)}
}

// WithDeadline implements clock.Clock: the context reports deadline d and
// is done with context.DeadlineExceeded when virtual time reaches d (or
// with context.Canceled when its cancel func runs first, which also makes
// the queued deadline event inert).
func (s *Scheduler) WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	dc := &deadlineCtx{Context: ctx, deadline: d}
	live := true
	s.At(d.Sub(s.epoch), func() {
		if live {
			cancel(context.DeadlineExceeded)
		}
	})
	return dc, func() {
		live = false
		cancel(context.Canceled)
	}
}

// deadlineCtx is a cancellable context with a virtual deadline.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

// Deadline reports the virtual deadline (or the parent's, if earlier).
func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if p, ok := c.Context.Deadline(); ok && p.Before(c.deadline) {
		return p, true
	}
	return c.deadline, true
}

// Err maps the deadline's cause to context.DeadlineExceeded, as
// context.WithDeadline does.
func (c *deadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// WithTimeout implements clock.Clock.
func (s *Scheduler) WithTimeout(parent context.Context, t time.Duration) (context.Context, context.CancelFunc) {
	return s.WithDeadline(parent, s.Now().Add(t))
}
