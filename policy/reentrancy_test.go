package policy_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy"
)

// inTime runs f on another goroutine and fails the test if it has not
// returned within ctlTimeout: a call that deadlocks on the Controller's lock
// (as every callback calling back did) fails instead of hanging the run.
// (A passing test never waits for the timeout.)
func inTime(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(ctlTimeout):
		t.Fatalf("%s did not return within %v: deadlock", what, ctlTimeout)
	}
}

// recorder records events and notes as lines, in order, from any goroutine.
type recorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.lines = append(r.lines, s)
	r.mu.Unlock()
}

func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

func evName(e policy.Event) string {
	b, _ := e.(interface{ MarshalJSON() ([]byte, error) }).MarshalJSON()
	return string(b)
}

const (
	reStart1  = `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`
	reCancel1 = `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`
	reOK1     = `{"type":"auto_retry_end","success":true,"attempt":1}`
)

// TestSubscriberCallsBack: a subscriber that reads the Controller and
// cancels the chain from inside its delivery neither deadlocks (Subscribe(func(e){
// c.State() }) hung for good) nor sees events out of order: the cancel's
// auto_retry_end reaches every subscriber after the auto_retry_start being
// delivered, and the reads see the decision already made.
func TestSubscriberCallsBack(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	var rec recorder
	h.ctl.Subscribe(func(e policy.Event) {
		rec.add("A " + evName(e))
		s := h.ctl.Snapshot()
		rec.add("A sees " + string(s.State) + " " + string(h.ctl.State()))
		_, _, _ = h.ctl.IsRetrying(), h.ctl.Attempt(), h.ctl.Settings()
		if _, ok := e.(policy.AutoRetryStart); ok {
			h.ctl.AbortRetry()
			rec.add("A cancelled")
		}
	})
	h.ctl.Subscribe(func(e policy.Event) { rec.add("B " + evName(e)) })
	inTime(t, "OnAgentEnd", func() {
		if !h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error")) {
			t.Error("OnAgentEnd = false, want a retry")
		}
	})
	want := []string{
		"A " + reStart1, "A sees backoff backoff", "A cancelled", "B " + reStart1,
		"A " + reCancel1, "A sees cancelled cancelled", "B " + reCancel1,
	}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Errorf("deliveries:\n got %q\nwant %q", got, want)
	}
	// The wait was cancelled before its turn came: no timer was armed.
	if due := h.clk.dueTimes(); len(due) != 0 {
		t.Errorf("timers armed: %v", due)
	}
	checkOutcome(t, "WaitForRetry", h.assertAtRest(policy.StateCancelled), policy.ErrRetryCancelled)
}

// TestObserversAndAgentCallBack: transition observers, OnRelease callbacks,
// Agent.DropLastAssistant, Agent.Continue and AuthStorage may all call the
// Controller; each sees the decision that called it already made, and the
// deliveries come in order.
func TestObserversAndAgentCallBack(t *testing.T) {
	var rec recorder
	var ctl *policy.Controller
	ag := &callbackAgent{rec: &rec, ctl: &ctl}
	auth := &callbackAuth{rec: &rec, ctl: &ctl}
	h := newCtlHarness(t, policy.DefaultSettings(), func(c *policy.Config) { c.Agent = ag; c.Auth = auth })
	ctl = h.ctl
	h.ctl.Subscribe(func(e policy.Event) { rec.add(evName(e) + " at " + string(h.ctl.State())) })
	h.ctl.OnTransition(func(e fsm.Edge) { rec.add("edge " + e.String() + " at " + string(h.ctl.State())) })
	h.ctl.OnRelease(func() { rec.add("release, retrying " + map[bool]string{true: "yes", false: "no"}[h.ctl.IsRetrying()]) })

	inTime(t, "OnAgentEnd", func() { h.ctl.OnAgentEnd(ctlErrReply("usage limit reached")) })
	// The backoff elapses; Continue runs the retried run, which succeeds,
	// from inside Continue (on the timer's goroutine).
	inTime(t, "the backoff", func() {
		h.clk.Add(2 * time.Second)
		h.clk.settle(t)
	})
	const start = `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"usage limit reached"}`
	want := []string{
		"edge idle --retry--> backoff at backoff",
		"auth asked, attempt 1",
		start + " at backoff",
		"drop, attempt 1",
		"edge backoff --elapse--> continuing at continuing",
		"continue, state continuing, ctx live",
		"edge continuing --succeed--> idle at idle",
		reOK1 + " at idle",
		"release, retrying no",
		"continue returns",
	}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Errorf("deliveries:\n got %q\nwant %q", got, want)
	}
	checkOutcome(t, "WaitForRetry", h.assertAtRest(policy.StateIdle), nil)
}

// callbackAgent reads the Controller from DropLastAssistant and runs the
// retried run (a success) from inside Continue.
type callbackAgent struct {
	rec *recorder
	ctl **policy.Controller
}

func (a *callbackAgent) Continue(ctx context.Context) error {
	c := *a.ctl
	live := "live"
	if ctx.Err() != nil {
		live = "cancelled"
	}
	a.rec.add("continue, state " + string(c.State()) + ", ctx " + live)
	if err := ctx.Err(); err != nil {
		return err
	}
	c.OnMessageEnd(ctlOK)
	c.OnAgentEnd(&ctlOK)
	a.rec.add("continue returns")
	return nil
}

func (a *callbackAgent) DropLastAssistant() {
	a.rec.add("drop, attempt " + string(rune('0'+(*a.ctl).Attempt())))
}

// callbackAuth reads the Controller from MarkUsageLimitReached.
type callbackAuth struct {
	rec *recorder
	ctl **policy.Controller
}

func (a *callbackAuth) MarkUsageLimitReached(string, string, policy.UsageLimitOptions) bool {
	a.rec.add("auth asked, attempt " + string(rune('0'+(*a.ctl).Snapshot().Attempt)))
	return false
}

// abortingAuth cancels the chain from inside MarkUsageLimitReached and says
// it switched credentials.
type abortingAuth struct{ ctl **policy.Controller }

func (a *abortingAuth) MarkUsageLimitReached(string, string, policy.UsageLimitOptions) bool {
	(*a.ctl).AbortRetry()
	return true
}

// TestAuthStorageCancels: auth storage cancelling the chain it is asked
// about: its auto_retry_start (delay 0: it switched) still comes first, then
// the cancel's end, and the wait is never armed.
func TestAuthStorageCancels(t *testing.T) {
	var ctl *policy.Controller
	h := newCtlHarness(t, policy.DefaultSettings(), func(c *policy.Config) { c.Auth = &abortingAuth{&ctl} })
	ctl = h.ctl
	inTime(t, "OnAgentEnd", func() { h.ctl.OnAgentEnd(ctlErrReply("usage limit reached")) })
	want := []string{
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0,"errorMessage":"usage limit reached"}`,
		reCancel1,
	}
	if got := h.eventJSON(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if due := h.clk.dueTimes(); len(due) != 0 {
		t.Errorf("a cancelled wait was armed: %v", due)
	}
	h.clk.Add(time.Minute)
	h.clk.settle(t)
	if n := h.agent.continues.Load(); n != 0 {
		t.Errorf("Continue called %d times after the cancel", n)
	}
	checkOutcome(t, "WaitForRetry", h.assertAtRest(policy.StateCancelled), policy.ErrRetryCancelled)
}

// TestDeliveryOrderAcrossGoroutines: while one goroutine delivers (its
// subscriber is slow), another goroutine's decision does not wait for it
// and is not delivered before it: every subscriber sees the events in the
// order of the decisions, and the first goroutine delivers the second's
// before it returns.
func TestDeliveryOrderAcrossGoroutines(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	var rec recorder
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.ctl.Subscribe(func(e policy.Event) {
		rec.add("A " + evName(e))
		once.Do(func() {
			close(entered)
			<-release
		})
	})
	h.ctl.Subscribe(func(e policy.Event) { rec.add("B " + evName(e)) })
	first := make(chan struct{})
	go func() {
		defer close(first)
		h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	}()
	<-entered
	// The first goroutine is inside subscriber A with the start event.
	inTime(t, "AbortRetry while another goroutine delivers", func() { h.ctl.AbortRetry() })
	if s := h.ctl.Snapshot(); s.State != policy.StateCancelled || s.Open {
		t.Errorf("snapshot after AbortRetry %+v: the decision is made at once", s)
	}
	if got := rec.get(); !slices.Equal(got, []string{"A " + reStart1}) {
		t.Errorf("delivered before the first delivery ended: %q", got)
	}
	close(release)
	select {
	case <-first:
	case <-time.After(ctlTimeout):
		t.Fatal("OnAgentEnd did not return")
	}
	want := []string{"A " + reStart1, "B " + reStart1, "A " + reCancel1, "B " + reCancel1}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Errorf("deliveries:\n got %q\nwant %q", got, want)
	}
	if due := h.clk.dueTimes(); len(due) != 0 {
		t.Errorf("the cancelled wait was armed: %v", due)
	}
}

// TestCallbacksCallBackConcurrently: under -race, subscribers, observers
// and the agent call the Controller back while several goroutines feed it:
// nothing deadlocks and every subscriber sees a well-formed event stream.
func TestCallbacksCallBackConcurrently(t *testing.T) {
	set := policy.DefaultSettings()
	h := newCtlHarness(t, set, nil)
	h.agent.errEvery = 4
	check := &chainChecker{set: set}
	h.ctl.Subscribe(func(e policy.Event) {
		check.observe(e)
		_ = h.ctl.Snapshot()
		if s, ok := e.(policy.AutoRetryStart); ok && s.Attempt == 2 {
			h.ctl.AbortRetry() // every second retry is cancelled from here
		}
	})
	h.ctl.OnTransition(func(fsm.Edge) { _ = h.ctl.State() })
	h.ctl.OnRelease(func() { _ = h.ctl.IsRetrying() })
	var wg sync.WaitGroup
	inTime(t, "the feeders", func() {
		for g := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range 30 {
					switch (r + g) % 4 {
					case 0, 1:
						h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
					case 2:
						h.ctl.OnMessageEnd(ctlOK)
					case 3:
						h.ctl.Abort()
					}
					if g == 0 {
						h.clk.Add(4 * time.Second)
					}
				}
			}()
		}
		wg.Wait()
		h.clk.settle(t)
		h.ctl.AbortRetry()
	})
	check.mu.Lock()
	defer check.mu.Unlock()
	for _, e := range check.errs {
		t.Error(e)
	}
	if check.open || check.chains == 0 {
		t.Errorf("open %v after %d chains", check.open, check.chains)
	}
}

// TestContinueContext: Continue gets a ctx that Abort cancels, that
// AbortRetry and the end of the chain leave alone, and that is already
// cancelled when an Abort comes between the decision to continue and the
// call (here from a transition observer).
func TestContinueContext(t *testing.T) {
	t.Run("abort cancels", func(t *testing.T) {
		h := newCtlHarness(t, policy.DefaultSettings(), nil)
		h.toContinuing("529 overloaded_error")
		ctx := h.agent.lastCtx()
		if ctx == nil || ctx.Err() != nil {
			t.Fatalf("Continue's ctx %v, err %v: want a live ctx", ctx, ctx.Err())
		}
		h.ctl.Abort()
		select {
		case <-ctx.Done():
		default:
			t.Fatal("Abort did not cancel Continue's ctx")
		}
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("ctx.Err() = %v", ctx.Err())
		}
	})
	t.Run("abort_retry and success leave it", func(t *testing.T) {
		h := newCtlHarness(t, policy.DefaultSettings(), nil)
		h.toContinuing("529 overloaded_error")
		ctx := h.agent.lastCtx()
		h.ctl.AbortRetry() // the run goes on
		if ctx.Err() != nil {
			t.Errorf("AbortRetry cancelled the retried run's ctx")
		}
		h.toContinuing("529 overloaded_error")
		ctx2 := h.agent.lastCtx()
		h.ctl.OnMessageEnd(ctlOK)
		if ctx.Err() != nil || ctx2.Err() != nil {
			t.Errorf("a later chain or a success cancelled a ctx: %v, %v", ctx.Err(), ctx2.Err())
		}
		// Abort at rest still stops the latest retried run.
		h.ctl.Abort()
		if ctx2.Err() == nil {
			t.Error("Abort at rest did not cancel the latest Continue's ctx")
		}
	})
	t.Run("reset cancels", func(t *testing.T) {
		h := newCtlHarness(t, policy.DefaultSettings(), nil)
		h.toContinuing("529 overloaded_error")
		ctx := h.agent.lastCtx()
		h.ctl.Reset()
		if ctx.Err() == nil {
			t.Error("Reset did not cancel Continue's ctx")
		}
	})
	t.Run("abort before the call", func(t *testing.T) {
		var rec recorder
		var ctl *policy.Controller
		ag := &callbackAgent{rec: &rec, ctl: &ctl}
		h := newCtlHarness(t, policy.DefaultSettings(), func(c *policy.Config) { c.Agent = ag })
		ctl = h.ctl
		h.ctl.OnTransition(func(e fsm.Edge) {
			if e.Event == "elapse" {
				h.ctl.Abort()
			}
		})
		h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
		inTime(t, "the backoff", func() {
			h.clk.Add(2 * time.Second)
			h.clk.settle(t)
		})
		want := []string{"drop, attempt 1", "continue, state cancelled, ctx cancelled"}
		if got := rec.get(); !slices.Equal(got, want) {
			t.Errorf("got %q, want %q: Continue called with a cancelled chain and ctx", got, want)
		}
		want2 := []string{reStart1, reCancel1}
		if got := h.eventJSON(); !slices.Equal(got, want2) {
			t.Errorf("events %q, want %q", got, want2)
		}
		checkOutcome(t, "WaitForRetry", h.assertAtRest(policy.StateCancelled), policy.ErrRetryCancelled)
	})
}

// TestPanickingSubscriber: a subscriber that panics (and a caller that
// recovers) leaves the Controller usable: the panic reaches the caller, the
// deliveries after the one that panicked are made by the next call, and
// the chain goes on.
func TestPanickingSubscriber(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	var once sync.Once
	h.ctl.Subscribe(func(policy.Event) { once.Do(func() { panic("subscriber bug") }) })
	inTime(t, "OnAgentEnd with a panicking subscriber", func() {
		defer func() {
			if r := recover(); r != "subscriber bug" {
				t.Errorf("recovered %v, want the subscriber's panic", r)
			}
		}()
		h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	})
	if due := h.clk.dueTimes(); len(due) != 0 {
		t.Fatalf("armed before the rest was delivered: %v", due)
	}
	inTime(t, "the next call", func() { h.ctl.OnPrompt(context.Background()) }) // ignored in backoff, but delivers
	if got := h.agent.drops.Load(); got != 1 {
		t.Errorf("DropLastAssistant called %d times, want 1", got)
	}
	if due := h.clk.dueTimes(); len(due) != 1 {
		t.Fatalf("timers %v, want the backoff armed", due)
	}
	h.clk.Add(2 * time.Second)
	h.waitContinue()
	h.ctl.OnMessageEnd(ctlOK)
	want := []string{reStart1, reOK1} // the harness subscribed first: it saw the start
	if got := h.eventJSON(); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	checkOutcome(t, "WaitForRetry", h.assertAtRest(policy.StateIdle), nil)
}
