package policy_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestWaitForRetryLastChain: with no chain open, WaitForRetry reports the
// last chain that ended since the last OnPrompt (nil when there was none);
// OnPrompt forgets it but not a chain still open at the prompt; Reset
// forgets it and releases a blocked caller with ErrRetryCancelled.
func TestWaitForRetryLastChain(t *testing.T) {
	bg := context.Background()
	h := newCtlHarness(t, policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: 2 * time.Second}, nil)
	checkOutcome(t, "WaitForRetry before any chain", h.ctl.WaitForRetry(bg), nil)

	// Two chains: the later one's outcome counts.
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	h.ctl.AbortRetry()
	checkOutcome(t, "after a cancel", h.ctl.WaitForRetry(bg), policy.ErrRetryCancelled)
	h.toContinuing("529 overloaded_error")
	h.ctl.OnAgentEnd(ctlErrReply("503 service unavailable"))
	gaveUp := &policy.ExhaustedError{Attempt: 1, FinalError: "503 service unavailable", Reason: policy.ReasonMaxRetries}
	checkOutcome(t, "after giving up", h.ctl.WaitForRetry(bg), gaveUp)
	checkOutcome(t, "asked again", h.ctl.WaitForRetry(bg), gaveUp)
	var ex *policy.ExhaustedError
	if err := h.ctl.WaitForRetry(bg); !errors.As(err, &ex) || !strings.Contains(err.Error(), "max_retries") || !strings.Contains(err.Error(), "503 service unavailable") {
		t.Errorf("error text %q does not say why and what", err)
	}

	h.ctl.OnPrompt(context.Background())
	checkOutcome(t, "after OnPrompt", h.ctl.WaitForRetry(bg), nil)

	// A chain open at the prompt is still the one WaitForRetry reports.
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	h.ctl.OnPrompt(context.Background()) // ignored in backoff (the session would reject the prompt)
	res := h.startWaiter(bg)
	h.ctl.Abort()
	checkOutcome(t, "chain open at the prompt", waitResult(t, res), policy.ErrRetryCancelled)

	// Reset: a blocked caller gets ErrRetryCancelled, and the outcome is forgotten.
	h.ctl.OnPrompt(context.Background())
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	res = h.startWaiter(bg)
	h.ctl.Reset()
	err := waitResult(t, res)
	checkOutcome(t, "blocked across Reset", err, policy.ErrRetryCancelled)
	if !strings.Contains(err.Error(), "reset") {
		t.Errorf("Reset's error %q does not say so", err)
	}
	checkOutcome(t, "after Reset", h.ctl.WaitForRetry(bg), nil)
	if n := h.eventCount(); n != 7 {
		t.Errorf("%d events, want 7 (Reset emits none)", n)
	}
}

// TestWaitForRetryAfterEndDelivered: a WaitForRetry blocked on a chain
// returns only once the chain's auto_retry_end has been delivered to every
// subscriber.
func TestWaitForRetryAfterEndDelivered(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	var ends atomic.Int64
	h.ctl.Subscribe(func(e policy.Event) {
		if _, ok := e.(policy.AutoRetryEnd); ok {
			ends.Add(1)
		}
	})
	h.toContinuing("529 overloaded_error")
	res := make(chan int64, 1)
	p := newProbeCtx(context.Background())
	go func() {
		_ = h.ctl.WaitForRetry(p)
		res <- ends.Load()
	}()
	<-p.entered
	h.ctl.OnMessageEnd(ctlOK)
	select {
	case n := <-res:
		if n != 1 {
			t.Errorf("WaitForRetry returned before the end was delivered (%d ends seen)", n)
		}
	case <-time.After(ctlTimeout):
		t.Fatal("WaitForRetry did not return")
	}
}

// TestWaitForRetryOriginal: in the original variant a chain left open by a
// fatal error mid-chain keeps WaitForRetry waiting until ctx ends or a later
// input closes it: abort releases it with ErrRetryCancelled (no
// auto_retry_end), a last retryable error with max_retries.
func TestWaitForRetryOriginal(t *testing.T) {
	orig := func(c *policy.Config) { c.Variant = policy.Original() }
	t.Run("left open, then abort", func(t *testing.T) {
		h := newCtlHarness(t, policy.DefaultSettings(), orig)
		h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
		h.clk.Add(2 * time.Second)
		originalContinued(t, h)
		h.clk.settle(t)
		h.ctl.OnAgentEnd(ctlErrReply("401 invalid x-api-key")) // H1: the chain stays open
		if !h.ctl.IsRetrying() {
			t.Fatal("the original closed the chain on a fatal error")
		}
		ctx, cancel := context.WithCancel(context.Background())
		res := h.startWaiter(ctx)
		cancel()
		if err := waitResult(t, res); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitForRetry on the open chain = %v, want ctx.Err()", err)
		}
		res = h.startWaiter(context.Background())
		n := h.eventCount()
		h.ctl.Abort()
		checkOutcome(t, "after abort", waitResult(t, res), policy.ErrRetryCancelled)
		if h.eventCount() != n {
			t.Errorf("abort outside the wait emitted %q", h.eventJSON()[n:])
		}
	})
	t.Run("exhausted", func(t *testing.T) {
		h := newCtlHarness(t, policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: time.Second}, orig)
		h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
		h.clk.Add(time.Second)
		originalContinued(t, h)
		h.clk.settle(t)
		res := h.startWaiter(context.Background())
		h.ctl.OnAgentEnd(ctlErrReply("503 service unavailable"))
		// The original reports attempt-1 after counting: 1.
		checkOutcome(t, "exhausted", waitResult(t, res),
			&policy.ExhaustedError{Attempt: 1, FinalError: "503 service unavailable", Reason: policy.ReasonMaxRetries})
	})
}

// originalContinued waits until the original's 0 ms continue timer, armed
// by the backoff timer's goroutine, has run Continue: it fires on the next
// Add after it is armed.
func originalContinued(t *testing.T, h *ctlHarness) {
	t.Helper()
	deadline := time.After(ctlTimeout)
	for {
		h.clk.Add(0)
		select {
		case <-h.agent.continued:
			h.clk.settle(t)
			return
		case <-deadline:
			t.Fatal("the original did not continue")
		default:
		}
	}
}

// TestGiveUpRulesHaveReasons: every rule of both tables that gives a chain
// up names its Reason, and only those; NewVariant rejects a table that does
// not.
func TestGiveUpRulesHaveReasons(t *testing.T) {
	reasons := map[policy.Reason]bool{}
	for _, v := range []*policy.Variant{policy.Sound(), policy.Original()} {
		for _, r := range v.Rules() {
			if r.Reason != "" {
				reasons[r.Reason] = true
			}
		}
	}
	for _, want := range []policy.Reason{policy.ReasonMaxRetries, policy.ReasonNonRetryable, policy.ReasonDisabled, policy.ReasonNoMessage, policy.ReasonContinueFailed} {
		if !reasons[want] {
			t.Errorf("no rule gives up with %s", want)
		}
	}
	rules := append([]retry.Rule{}, policy.Sound().Rules()...)
	for i := range rules {
		if rules[i].Reason == policy.ReasonNoMessage {
			rules[i].Reason = ""
		}
	}
	if _, err := retry.NewVariant("noreason", rules); err == nil || !strings.Contains(err.Error(), "without a Reason") {
		t.Errorf("NewVariant without a Reason: %v", err)
	}
	rules = append([]retry.Rule{}, policy.Sound().Rules()...)
	for i := range rules {
		if rules[i].Success {
			rules[i].Reason = policy.ReasonMaxRetries
		}
	}
	if _, err := retry.NewVariant("badreason", rules); err == nil || !strings.Contains(err.Error(), "does not give up") {
		t.Errorf("NewVariant with a Reason on a success: %v", err)
	}
}
