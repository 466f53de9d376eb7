package sim

import (
	"time"

	"github.com/benbjohnson/clock"
)

// RealTime runs a Scheduler on a wall clock: the event due at virtual
// time t fires at the wall instant base+t, so a 2 s backoff takes 2 s. It
// starts no goroutine and, like the Scheduler, is used from the one
// goroutine that drives the session. The loop it is made for:
//
//	for {
//		rt.RunDue()                  // fire what is due, then write the events
//		select {
//		case <-rt.Wake(): // the next event is due
//		case line := <-input: // handle a command at rt.Now()
//		}
//	}
type RealTime struct {
	sched *Scheduler
	clk   clock.Clock
	base  time.Time // wall instant of virtual time 0
	timer *clock.Timer
}

// NewRealTime maps the scheduler's current virtual time to the clock's
// now. A nil clk means the system clock.
func NewRealTime(s *Scheduler, clk clock.Clock) *RealTime {
	if clk == nil {
		clk = clock.New()
	}
	return &RealTime{sched: s, clk: clk, base: clk.Now().Add(-s.Elapsed())}
}

// Now is the virtual time the wall clock has reached. It is never before
// the scheduler's own time (after Jump, or when events ran late).
func (r *RealTime) Now() time.Duration {
	d := r.clk.Since(r.base)
	if e := r.sched.Elapsed(); d < e {
		return e
	}
	return d
}

// RunDue fires every event due by Now, in order. An event noticed late
// (the process was busy or descheduled) moves the mapping by its lateness,
// so that what it schedules counts from the moment it really ran: a 2 s
// backoff never takes less than 2 s, as with the original's timers, and
// virtual time may fall behind the wall clock. Virtual time stays at the
// last event fired, so a trace's times are those of its events. RunDue
// returns ErrTooManyEvents, leaving the rest of the queue, when one
// call would fire more than MaxEvents events.
func (r *RealTime) RunDue() error {
	start := r.sched.Fired()
	for {
		at, ok := r.sched.NextAt()
		if !ok {
			return nil
		}
		now := r.Now()
		if at > now {
			return nil
		}
		if late := now - at; late > 0 {
			r.base = r.base.Add(late)
		}
		r.sched.Step()
		if r.sched.Fired()-start > MaxEvents {
			return ErrTooManyEvents
		}
	}
}

// Do runs fn as a scheduler event now, after every event already due, and
// then the events it makes due at once. Running commands as events lets
// the session settle its prompts afterwards (Scheduler.AfterEach), as it
// does for a scenario's actions, and makes what fn schedules count from
// now.
//
// fn always runs before Do returns, whatever the wall clock does in
// between: a timer that comes due while Do is running fires first (a late
// event moves the mapping back, so "now" may then be before the instant fn
// was queued at; fn is run anyway, as it was received). The command a
// caller hands to Do is therefore the one whose effects it sees when Do
// returns.
func (r *RealTime) Do(fn func()) error {
	if err := r.RunDue(); err != nil {
		return err
	}
	ran := false
	cmdAt := r.Now()
	r.sched.At(cmdAt, func() { ran = true; fn() })
	start := r.sched.Fired()
	for !ran {
		// An event queued before fn for an earlier instant came due in
		// between: fire it, late as it is, then fn (which is never late:
		// it runs as received).
		if at, _ := r.sched.NextAt(); at < cmdAt {
			if late := r.Now() - at; late > 0 {
				r.base = r.base.Add(late)
			}
		}
		r.sched.Step()
		if r.sched.Fired()-start > MaxEvents {
			return ErrTooManyEvents
		}
	}
	return r.RunDue()
}

// Wake returns a channel that receives once the next queued event is due,
// or a nil channel (which never receives) when the queue is empty. When
// limit is positive the channel also receives after limit at the latest.
// Each call replaces the timer of the previous one.
func (r *RealTime) Wake(limit time.Duration) <-chan time.Time {
	r.Stop()
	d := time.Duration(-1)
	if at, ok := r.sched.NextAt(); ok {
		d = max(at-r.Now(), 0)
	}
	if limit > 0 && (d < 0 || limit < d) {
		d = limit
	}
	if d < 0 {
		return nil
	}
	r.timer = r.clk.Timer(d)
	return r.timer.C
}

// Jump moves the mapping forward so that virtual time t is now: the wait
// until t is skipped. A t not after Now does nothing.
func (r *RealTime) Jump(t time.Duration) {
	if now := r.Now(); t > now {
		r.base = r.base.Add(-(t - now))
	}
}

// Stop releases the timer of the last Wake.
func (r *RealTime) Stop() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}
