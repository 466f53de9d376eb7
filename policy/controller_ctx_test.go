package policy_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// ctxAgent is an agent whose model call fails with a retryable error,
// after latency (0: at once), unless its ctx ends first (an aborted
// reply). It records when each call started. It has no DropLastAssistant
// (the method is optional).
type ctxAgent struct {
	ctl     *policy.Controller
	latency time.Duration

	mu    sync.Mutex
	calls []time.Duration // since start
	start time.Time
}

func (a *ctxAgent) call(ctx context.Context) policy.AssistantMessage {
	a.mu.Lock()
	a.calls = append(a.calls, time.Since(a.start))
	a.mu.Unlock()
	if ctx.Err() != nil {
		return policy.AssistantMessage{StopReason: policy.StopReasonAborted, ErrorMessage: "Request was aborted"}
	}
	if a.latency > 0 {
		select {
		case <-ctx.Done():
			return policy.AssistantMessage{StopReason: policy.StopReasonAborted, ErrorMessage: "Request was aborted"}
		case <-time.After(a.latency):
		}
	}
	return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error: Overloaded"}
}

func (a *ctxAgent) run(ctx context.Context) {
	reply := a.call(ctx)
	a.ctl.OnMessageEnd(reply)
	a.ctl.OnAgentEnd(&reply)
}

func (a *ctxAgent) Continue(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.run(ctx)
	return nil
}

func (a *ctxAgent) Prompt(ctx context.Context) error {
	a.ctl.OnPrompt(ctx)
	a.run(ctx)
	return a.ctl.WaitForRetry(ctx)
}

func (a *ctxAgent) callTimes() []time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Duration(nil), a.calls...)
}

// newCtxAgent returns an agent on a Controller with the real clock (which
// synctest's bubble makes virtual), base delay 30 ms, 3 retries, and the
// events it delivers.
func newCtxAgent(t *testing.T, latency time.Duration) (*ctxAgent, func() []string) {
	t.Helper()
	a := &ctxAgent{latency: latency, start: time.Now()}
	set := policy.DefaultSettings()
	set.BaseDelay = 30 * time.Millisecond
	ctl, err := policy.NewController(policy.Config{Agent: a, Settings: policy.NewSettingsStore(policy.MustCompile(set))})
	if err != nil {
		t.Fatal(err)
	}
	a.ctl = ctl
	var mu sync.Mutex
	var events []string
	ctl.Subscribe(func(e policy.Event) {
		b := e.AppendJSONFields([]byte{'{'})
		mu.Lock()
		events = append(events, string(b))
		mu.Unlock()
	})
	// How each chain ended, after its auto_retry_end.
	ctl.OnChainEnd(func(_ policy.AutoRetryEnd, err error) {
		var ex *policy.ExhaustedError
		s := "end: success"
		switch {
		case errors.As(err, &ex):
			s = "end: " + string(ex.Reason)
		case errors.Is(err, policy.ErrRetryCancelled):
			s = "end: cancelled"
		}
		mu.Lock()
		events = append(events, s)
		mu.Unlock()
	})
	return a, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), events...)
	}
}

// TestPromptDeadlineBoundsChain is the case: an always-failing
// prompt with an 80 ms deadline. Prompt returns at the deadline with an
// error matching both ErrRetryCancelled and context.DeadlineExceeded, the
// pending backoff is cancelled ("Retry cancelled"), and no model call
// starts after Prompt returned (before, 2 more calls ran in the background
// and the chain ended "exhausted" later).
func TestPromptDeadlineBoundsChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, events := newCtxAgent(t, 0)
		ctx, cancel := context.WithTimeout(context.Background(), 80*time.Millisecond)
		defer cancel()
		err := a.Prompt(ctx)
		returned := time.Since(a.start)
		if !errors.Is(err, policy.ErrRetryCancelled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Prompt = %v, want an error matching ErrRetryCancelled and context.DeadlineExceeded", err)
		}
		if returned != 80*time.Millisecond {
			t.Errorf("Prompt returned after %v, want 80ms (the deadline)", returned)
		}
		// Everything the Controller could still do: 10 s of virtual time.
		time.Sleep(10 * time.Second)
		synctest.Wait()
		calls := a.callTimes()
		for _, at := range calls {
			if at > returned {
				t.Errorf("a model call started at %v, after Prompt returned at %v (calls %v)", at, returned, calls)
			}
		}
		// Calls at 0 and 30 ms; the next wait (60 ms, until 90 ms) is cut by the deadline.
		if want := []time.Duration{0, 30 * time.Millisecond}; !slices.Equal(calls, want) {
			t.Errorf("calls at %v, want %v", calls, want)
		}
		want := []string{
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":30,"errorMessage":"529 overloaded_error: Overloaded"}`,
			`{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":60,"errorMessage":"529 overloaded_error: Overloaded"}`,
			`{"type":"auto_retry_end","success":false,"attempt":2,"finalError":"Retry cancelled"}`,
			"end: cancelled",
		}
		if got := events(); !slices.Equal(got, want) {
			t.Errorf("events:\n%q\nwant\n%q", got, want)
		}
		if a.ctl.IsRetrying() {
			t.Error("a chain is still open")
		}
		// WaitForRetry after the fact reports the same.
		if err := a.ctl.WaitForRetry(context.Background()); !errors.Is(err, policy.ErrRetryCancelled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("WaitForRetry afterwards = %v", err)
		}
	})
}

// TestPromptCancelStopsRunningContinue: the prompt's ctx is cancelled while
// a retried run's model call is in flight: the Continue's ctx is cancelled
// (the call returns aborted at once), Prompt reports the cancel, and no call
// starts afterwards.
func TestPromptCancelStopsRunningContinue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, events := newCtxAgent(t, 1*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		// First call: 0-1 s; backoff 30 ms; second call from 1.03 s; cancel at 1.5 s.
		time.AfterFunc(1500*time.Millisecond, cancel)
		err := a.Prompt(ctx)
		if !errors.Is(err, policy.ErrRetryCancelled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Prompt = %v, want an error matching ErrRetryCancelled and context.Canceled", err)
		}
		returned := time.Since(a.start)
		if returned != 1500*time.Millisecond {
			t.Errorf("Prompt returned after %v, want 1.5s", returned)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if calls := a.callTimes(); len(calls) != 2 {
			t.Errorf("calls at %v, want 2 (0 and 1.03s)", calls)
		}
		got := events()
		if len(got) < 2 || got[len(got)-2] != `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}` {
			t.Errorf("events %q, want the chain cancelled at attempt 1", got)
		}
	})
}

// TestPromptCtxAfterChain: a ctx that ends after its chain ended, or after
// the next prompt, changes nothing; context.Background() keeps the chain
// running to its end (the behaviour before OnPrompt took a ctx); a
// WaitForRetry with a ctx of its own returns ctx.Err() alone and leaves the
// chain running.
func TestPromptCtxAfterChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, events := newCtxAgent(t, 0)
		// Background: the chain runs out (calls at 0, 30, 90, 210 ms).
		if err := a.Prompt(context.Background()); !isExhausted(err) {
			t.Fatalf("Prompt(Background) = %v, want *ExhaustedError", err)
		}
		if n := len(a.callTimes()); n != 4 {
			t.Fatalf("%d calls, want 4", n)
		}
		n := len(events())
		// OnChainEnd, after the auto_retry_end, says why the chain gave up.
		if got := events()[n-2:]; !slices.Equal(got, []string{`{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"529 overloaded_error: Overloaded"}`, "end: max_retries"}) {
			t.Errorf("last events %q, want the exhausted end, then OnChainEnd's max_retries", got)
		}

		// A ctx cancelled after its chain ended: nothing happens.
		ctx, cancel := context.WithCancel(context.Background())
		if err := a.Prompt(ctx); !isExhausted(err) {
			t.Fatalf("second Prompt = %v, want *ExhaustedError", err)
		}
		n2 := len(events())
		cancel()
		synctest.Wait()
		if len(events()) != n2 {
			t.Errorf("cancelling a finished prompt's ctx delivered %q", events()[n2:])
		}
		if err := a.ctl.WaitForRetry(context.Background()); !isExhausted(err) {
			t.Errorf("WaitForRetry = %v, still the exhausted chain", err)
		}
		if n2 <= n {
			t.Fatal("the second prompt delivered nothing")
		}

		// A ctx of WaitForRetry's own: ctx.Err() alone, the chain goes on.
		a.ctl.OnPrompt(context.Background())
		a.run(context.Background())
		wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer wcancel()
		err := a.ctl.WaitForRetry(wctx)
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, policy.ErrRetryCancelled) {
			t.Errorf("WaitForRetry(own ctx) = %v, want context.DeadlineExceeded alone", err)
		}
		if err := a.ctl.WaitForRetry(context.Background()); !isExhausted(err) {
			t.Errorf("the chain went on to %v, want *ExhaustedError", err)
		}

		// An old prompt's ctx ending during the next prompt's chain cancels nothing.
		old, oldCancel := context.WithCancel(context.Background())
		a.ctl.OnPrompt(old)
		a.ctl.OnPrompt(context.Background())
		a.run(context.Background())
		oldCancel()
		if err := a.ctl.WaitForRetry(context.Background()); !isExhausted(err) {
			t.Errorf("after an old ctx ended, the chain = %v, want *ExhaustedError", err)
		}
	})
}

func isExhausted(err error) bool {
	var ex *policy.ExhaustedError
	return errors.As(err, &ex) && ex.Reason == policy.ReasonMaxRetries
}
