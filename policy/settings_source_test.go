package policy_test

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// badLaterSource returns the default policy first, then nil.
type badLaterSource struct{ calls int }

func (b *badLaterSource) RetryPolicy() *policy.Policy {
	b.calls++
	if b.calls == 1 {
		return policy.DefaultPolicy()
	}
	return nil
}
func (b *badLaterSource) SetRetryEnabled(bool) {}

// TestControllerIgnoresAbsurdLaterSettings: a custom settings source that
// gives no policy later does not leave the Controller without one: it
// keeps the last policy it decided with.
func TestControllerIgnoresAbsurdLaterSettings(t *testing.T) {
	clk := newCtlClock(t)
	var events []policy.Event
	c, err := policy.NewController(policy.Config{Clock: clk, Agent: newCtlAgent(), Settings: &badLaterSource{}})
	if err != nil {
		t.Fatal(err)
	}
	c.Subscribe(func(e policy.Event) { events = append(events, e) })
	c.OnAgentEnd(&policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error"})
	if len(events) != 1 {
		t.Fatalf("events %v", events)
	}
	start, ok := events[0].(policy.AutoRetryStart)
	if !ok || start.Attempt != 1 || start.MaxAttempts != 3 || start.DelayMs != 2000 {
		t.Fatalf("got %#v, want a start with the last valid settings (3 retries, 2000 ms)", events[0])
	}
	c.AbortRetry()
}

func TestSettingsStore(t *testing.T) {
	st := policy.NewSettingsStore(policy.DefaultPolicy())
	st.SetRetryEnabled(false)
	if got := st.RetryPolicy().Settings(); got.Enabled || got.MaxRetries != 3 {
		t.Errorf("after SetRetryEnabled(false): %+v", got)
	}
	if !policy.DefaultPolicy().Enabled() {
		t.Error("SetRetryEnabled changed the shared default policy")
	}
	st.Set(policy.MustCompile(policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: time.Second}))
	if got := st.RetryPolicy().Settings(); !got.Equal(policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: time.Second}) {
		t.Errorf("after Set: %+v", got)
	}
}
