package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/benbjohnson/clock"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	adapter "github.com/ohmypi/retryfsm/adapters/anthropic"
	"github.com/ohmypi/retryfsm/policy"
)

// oneCallAgent makes one SDK call per run and feeds the Controller.
type oneCallAgent struct {
	ctl    *policy.Controller
	client sdk.Client
}

// run is one run: the call, message_end and agent_end; it reports whether
// a retry was scheduled.
func (a *oneCallAgent) run(ctx context.Context) bool {
	reply := adapter.Reply(a.client.Messages.New(ctx, params))
	a.ctl.OnMessageEnd(reply)
	return a.ctl.OnAgentEnd(&reply)
}

// Continue implements policy.Agent.
func (a *oneCallAgent) Continue(ctx context.Context) error { a.run(ctx); return nil }

// DropLastAssistant implements policy.Agent (the agent keeps no replies).
func (a *oneCallAgent) DropLastAssistant() {}

// The status and headers reach the Controller's decision: in the status
// mode, x-should-retry: false stops a 500 the original's regex would retry,
// and with retryAfter replace a 429's retry-after header is the wait.
func TestControllerReadsStatusAndHeaders(t *testing.T) {
	tests := []struct {
		name     string
		settings func(*policy.Settings)
		status   int
		headers  map[string]string
		body     string
		retried  bool
		delayMs  string
	}{{
		name:     "500 x-should-retry false, message mode: retried",
		settings: func(*policy.Settings) {},
		status:   500, headers: map[string]string{"X-Should-Retry": "false"},
		body:    `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
		retried: true, delayMs: "2000",
	}, {
		name:     "500 x-should-retry false, status mode: not retried",
		settings: func(s *policy.Settings) { s.Classify = policy.ClassifyStatus },
		status:   500, headers: map[string]string{"X-Should-Retry": "false"},
		body:    `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`,
		retried: false,
	}, {
		name:     "429 retry-after 7, replace: waits 7 s",
		settings: func(s *policy.Settings) { s.RetryAfter.Use = policy.HintReplace },
		status:   429, headers: map[string]string{"Retry-After": "7"},
		body:    `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`,
		retried: true, delayMs: "7000",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, errorResponse(tt.status, tt.headers, tt.body))
			set := policy.DefaultSettings()
			tt.settings(&set)
			a := &oneCallAgent{client: s.client()}
			ctl, err := policy.NewController(policy.Config{Clock: clock.NewMock(), Agent: a, Settings: policy.NewSettingsStore(policy.MustCompile(set))})
			if err != nil {
				t.Fatal(err)
			}
			a.ctl = ctl
			var mu sync.Mutex
			var events []string
			defer ctl.Subscribe(func(e policy.Event) {
				b, _ := e.(json.Marshaler).MarshalJSON()
				mu.Lock()
				events = append(events, string(b))
				mu.Unlock()
			})()
			ctl.OnPrompt(context.Background())
			retried := a.run(context.Background())
			if retried != tt.retried {
				t.Fatalf("retry scheduled = %v, want %v", retried, tt.retried)
			}
			if !retried {
				return
			}
			// The wait is armed on the mock clock; cancel it.
			ctl.AbortRetry()
			if err := ctl.WaitForRetry(context.Background()); !errors.Is(err, policy.ErrRetryCancelled) {
				t.Errorf("WaitForRetry = %v, want a cancel", err)
			}
			mu.Lock()
			defer mu.Unlock()
			var start struct {
				Type    string          `json:"type"`
				DelayMs json.RawMessage `json:"delayMs"`
			}
			if len(events) == 0 || json.Unmarshal([]byte(events[0]), &start) != nil || start.Type != "auto_retry_start" {
				t.Fatalf("events = %v, want an auto_retry_start first", events)
			}
			if string(start.DelayMs) != tt.delayMs {
				t.Errorf("delayMs = %s, want %s (events %v)", start.DelayMs, tt.delayMs, events)
			}
		})
	}
}
