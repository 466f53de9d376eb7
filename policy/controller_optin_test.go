package policy_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// ctlModelAgent is a ctlAgent that also switches models (SetModel).
type ctlModelAgent struct {
	*ctlAgent
	mu     sync.Mutex
	models []string
}

func (a *ctlModelAgent) SetModel(id string) {
	a.mu.Lock()
	a.models = append(a.models, id)
	a.mu.Unlock()
}

// TestControllerFallback: a chain that would end exhausted falls back: the
// agent is told the next model, subscribers get retry_fallback, and the
// retry waits 0 as attempt 1.
func TestControllerFallback(t *testing.T) {
	set := policy.DefaultSettings()
	set.MaxRetries = 0
	set.Fallback = []string{"model-b"}
	var agent *ctlModelAgent
	h := newCtlHarness(t, set, func(c *policy.Config) {
		agent = &ctlModelAgent{ctlAgent: c.Agent.(*ctlAgent)}
		c.Agent, c.Model = agent, "model-a"
	})
	if !h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error")) {
		t.Fatal("no retry: want a fallback")
	}
	h.clk.Add(0)
	h.waitContinue()
	want := []string{
		`{"type":"retry_fallback","from":"model-a","to":"model-b"}`,
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":0,"delayMs":0,"errorMessage":"529 overloaded_error"}`,
	}
	if got := h.eventJSON(); !slices.Equal(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	agent.mu.Lock()
	models := slices.Clone(agent.models)
	agent.mu.Unlock()
	if !slices.Equal(models, []string{"model-b"}) {
		t.Errorf("SetModel calls %q, want [model-b]", models)
	}
	// No model left: the next failure ends the chain.
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	if end := h.waitEnd(); end.Success || end.Attempt != 1 {
		t.Errorf("end %+v", end)
	}
	var ex *policy.ExhaustedError
	if err := h.ctl.WaitForRetry(context.Background()); !errors.As(err, &ex) || ex.Reason != policy.ReasonMaxRetries {
		t.Errorf("WaitForRetry = %v", err)
	}
}

// TestControllerFailFastAsksFirst: a usage limit whose wait is too long is
// put to auth storage before the rule is picked: no switch fails fast
// (reason max_wait), a switch retries at once; auth storage is asked once.
func TestControllerFailFastAsksFirst(t *testing.T) {
	for _, switched := range []bool{false, true} {
		set := policy.DefaultSettings()
		set.RetryAfter = policy.RetryAfter{Use: policy.HintFloor, MaxWait: time.Second}
		auth := &ctlAuth{switched: []bool{switched}}
		h := newCtlHarness(t, set, func(c *policy.Config) { c.Auth = auth })
		retried := h.ctl.OnAgentEnd(ctlErrReply("usage limit reached; retry-after-ms: 900000"))
		if len(auth.Calls()) != 1 {
			t.Errorf("switched=%v: auth storage asked %d times, want 1", switched, len(auth.Calls()))
		}
		if !switched {
			if retried {
				t.Error("no switch: a retry was scheduled")
			}
			end := h.waitEnd()
			if end.Attempt != 1 || end.FinalError != "Provider requested 900000ms wait, exceeds retry.maxDelayMs (1000ms). Original error: usage limit reached; retry-after-ms: 900000" {
				t.Errorf("end %+v", end)
			}
			var ex *policy.ExhaustedError
			if err := h.ctl.WaitForRetry(context.Background()); !errors.As(err, &ex) || ex.Reason != policy.ReasonMaxWait {
				t.Errorf("WaitForRetry = %v, want reason max_wait", err)
			}
			continue
		}
		if !retried {
			t.Fatal("switch: no retry")
		}
		h.clk.Add(0)
		h.waitContinue()
		if got := h.eventJSON(); len(got) != 1 || got[0] != `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0,"errorMessage":"usage limit reached; retry-after-ms: 900000"}` {
			t.Errorf("switch: events %q", got)
		}
	}
}

// TestControllerJitterDraws: each retryable failure takes one draw from
// Config.Rand while jitter is on, and none while it is off.
func TestControllerJitterDraws(t *testing.T) {
	set := policy.DefaultSettings()
	set.Jitter = policy.Jitter{Mode: policy.JitterDown, Ratio: 0.5}
	draws := 0
	h := newCtlHarness(t, set, func(c *policy.Config) {
		c.Rand = func() float64 { draws++; return 0.5 }
	})
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	if got := h.eventJSON(); len(got) != 1 || got[0] != `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":1500,"errorMessage":"529 overloaded_error"}` {
		t.Errorf("events %q, want a 1500 ms wait (2000*(1-0.5*0.5))", got)
	}
	if draws != 1 {
		t.Errorf("%d draws, want 1", draws)
	}
	h.ctl.AbortRetry()
	h.set.Set(policy.MustCompile(policy.DefaultSettings()))
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	if draws != 1 {
		t.Errorf("%d draws with jitter off, want still 1", draws)
	}
}
