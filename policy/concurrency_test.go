package policy_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// chainChecker is a subscriber that checks the grammar of the event stream
// of the sound variant with maxRetries > 0: a chain is start(1) start(2)...
// start(k) end(k), every start has the settings' maxAttempts and delay, and
// every chain that starts ends exactly once.
type chainChecker struct {
	mu     sync.Mutex
	set    policy.Settings
	open   bool
	last   int
	starts int
	chains int
	errs   []string
}

func (c *chainChecker) observe(e policy.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fail := func(format string, args ...any) { c.errs = append(c.errs, fmt.Sprintf(format, args...)) }
	switch e := e.(type) {
	case policy.AutoRetryStart:
		c.starts++
		switch {
		case e.Attempt == 1 && c.open:
			fail("start(1) while a chain is open at attempt %d", c.last)
		case e.Attempt > 1 && (!c.open || e.Attempt != c.last+1):
			fail("start(%d) after attempt %d (open %v)", e.Attempt, c.last, c.open)
		}
		if e.MaxAttempts != c.set.MaxRetries || e.DelayMs != float64(c.set.Delay(e.Attempt).Milliseconds()) {
			fail("start %+v: want maxAttempts %d and delayMs %d", e, c.set.MaxRetries, c.set.Delay(e.Attempt).Milliseconds())
		}
		c.open, c.last = true, e.Attempt
	case policy.AutoRetryEnd:
		if !c.open {
			fail("end %+v with no chain open", e)
		}
		if e.Attempt != c.last {
			fail("end %+v of a chain at attempt %d", e, c.last)
		}
		if e.Success != (e.FinalError == "") {
			fail("end %+v: success and finalError disagree", e)
		}
		c.open, c.last = false, 0
		c.chains++
	default:
		fail("unknown event %T", e)
	}
}

// TestControllerConcurrentUse runs, under -race, several goroutines that
// read the Controller, subscribe and unsubscribe, wait with a cancelled
// context and abort, while another feeds agent events and drives the mock
// clock (whose timers fire on their own goroutines and call Continue, which
// sometimes fails). The event stream stays well formed and the Controller
// ends at rest.
func TestControllerConcurrentUse(t *testing.T) {
	set := policy.DefaultSettings()
	h := newCtlHarness(t, set, nil)
	h.agent.errEvery = 3
	check := &chainChecker{set: set}
	unsub := h.ctl.Subscribe(check.observe)
	defer unsub()

	const (
		readers = 4
		rounds  = 40
		reads   = 100
	)
	var transient atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	fed := make(chan struct{})
	for g := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cancelled, cancel := context.WithCancel(context.Background())
			cancel()
			<-start
			// Read until the feeder is done (and at least reads times), so
			// that the readers overlap the whole run.
			for i := 0; ; i++ {
				if i >= reads {
					select {
					case <-fed:
						return
					default:
					}
				}
				s := h.ctl.Snapshot()
				if s.State.AtRest() && (s.Attempt != 0 || s.Open) {
					t.Errorf("rest snapshot %+v", s)
				}
				_, _, _ = h.ctl.IsRetrying(), h.ctl.Attempt(), h.ctl.State()
				_ = h.ctl.AutoRetryEnabled()
				u := h.ctl.Subscribe(func(policy.Event) { transient.Add(1) })
				// A chain open (ctx.Err()) or the last chain's outcome.
				var gaveUp *policy.ExhaustedError
				if err := h.ctl.WaitForRetry(cancelled); err != nil && !errors.Is(err, context.Canceled) &&
					!errors.Is(err, policy.ErrRetryCancelled) && !errors.As(err, &gaveUp) {
					t.Errorf("WaitForRetry = %v", err)
				}
				if i%37 == g {
					h.ctl.AbortRetry()
				}
				u()
				runtime.Gosched() // let the feeder and the timer goroutines in
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(fed)
		<-start
		for r := range rounds {
			h.ctl.OnAgentEnd(ctlErrReply(fmt.Sprintf("529 overloaded_error #%d", r)))
			h.clk.Add(8 * time.Second) // fires any running wait
			switch r % 5 {
			case 0:
				h.ctl.OnMessageEnd(ctlOK)
			case 1:
				h.ctl.OnAgentEnd(ctlErrReply("503 service unavailable"))
			case 2:
				h.ctl.OnAgentEnd(ctlErrReply("401 invalid x-api-key"))
			case 3:
				h.ctl.Abort()
			case 4:
				h.ctl.OnAgentEnd(nil)
			}
			h.ctl.OnPrompt(context.Background())
		}
	}()
	close(start)
	wg.Wait()

	// Let every fired timer's goroutine finish, then close whatever is open.
	h.clk.settle(t)
	h.ctl.AbortRetry()
	h.assertAtRest(h.ctl.State())
	if !h.ctl.State().AtRest() {
		t.Errorf("state %s after AbortRetry", h.ctl.State())
	}

	// Unsubscribed functions are never called again.
	before := transient.Load()
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	h.ctl.AbortRetry()
	if transient.Load() != before {
		t.Error("an unsubscribed function was called")
	}

	check.mu.Lock()
	defer check.mu.Unlock()
	for _, e := range check.errs {
		t.Error(e)
	}
	if check.open {
		t.Errorf("a chain is still open at attempt %d", check.last)
	}
	if check.starts == 0 || check.chains == 0 {
		t.Errorf("nothing happened: %d starts, %d chains", check.starts, check.chains)
	}
	t.Logf("%d starts, %d chains, %d Continue calls, %d transient deliveries", check.starts, check.chains, h.agent.continues.Load(), before)
}
