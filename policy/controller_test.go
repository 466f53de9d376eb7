package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// ctlTimeout bounds every wait for another goroutine. It is only a failure
// guard: a passing test never waits for it.
const ctlTimeout = 5 * time.Second

// ctlClock is clock.NewMock with a record of every AfterFunc, so that a test
// can wait until the goroutines the mock started for fired timers have
// returned (Mock.AfterFunc runs f on a new goroutine). Add and AfterFunc are
// serialised so that each timer's due time is known exactly.
type ctlClock struct {
	*clock.Mock
	mu     sync.Mutex
	timers []*ctlTimer
}

type ctlTimer struct {
	due  time.Time
	done chan struct{} // closed when the timer's function has returned
}

// newCtlClock returns a mock clock whose fired timers are waited for when t
// ends, so goleak sees no mock goroutine.
func newCtlClock(t *testing.T) *ctlClock {
	c := &ctlClock{Mock: clock.NewMock()}
	t.Cleanup(func() { c.settle(t) })
	return c
}

// AfterFunc implements clock.Clock. Every timer fires when due, even one
// the Controller stops (it gets a stopped decoy, not the mock's timer), so
// that settle can wait for each due timer's goroutine; a stopped wait must
// then be inert, which the tests check.
func (c *ctlClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	tt := &ctlTimer{due: c.Mock.Now().Add(d), done: make(chan struct{})}
	c.timers = append(c.timers, tt)
	c.Mock.AfterFunc(d, func() {
		defer close(tt.done)
		f()
	})
	return stoppedTimer
}

// stoppedTimer is a real timer stopped at creation: Stop on it is a no-op.
var stoppedTimer = func() *clock.Timer {
	t := clock.New().AfterFunc(time.Hour, func() {})
	t.Stop()
	return t
}()

// Add advances the mock clock (firing due timers on new goroutines).
func (c *ctlClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Mock.Add(d)
}

// dueTimes returns the due time of every timer armed so far, in order.
func (c *ctlClock) dueTimes() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, len(c.timers))
	for i, tt := range c.timers {
		out[i] = tt.due
	}
	return out
}

// settle waits until the function of every timer that has fired (due at or
// before now) has returned, including timers armed by those functions.
// Timers not yet due stay pending: they fire only on a later Add.
func (c *ctlClock) settle(t testing.TB) {
	t.Helper()
	for {
		c.mu.Lock()
		now := c.Mock.Now()
		timers := slices.Clone(c.timers)
		c.mu.Unlock()
		for _, tt := range timers {
			if tt.due.After(now) {
				continue
			}
			select {
			case <-tt.done:
			case <-time.After(ctlTimeout):
				t.Fatalf("a fired mock timer's function (due %v) did not return within %v", tt.due, ctlTimeout)
			}
		}
		c.mu.Lock()
		grew := len(c.timers) != len(timers)
		c.mu.Unlock()
		if !grew {
			return
		}
	}
}

// ctlAgent is a fake policy.Agent: Continue records the call and its ctx,
// signals continued and returns the configured error; DropLastAssistant
// counts.
type ctlAgent struct {
	continues atomic.Int64
	drops     atomic.Int64
	continued chan struct{}
	mu        sync.Mutex
	err       error
	errEvery  int               // when > 0, every errEvery-th Continue fails with errors.New("continue failed")
	ctxs      []context.Context // the ctx of every Continue, in order
}

func newCtlAgent() *ctlAgent { return &ctlAgent{continued: make(chan struct{}, 1024)} }

// lastCtx returns the ctx of the latest Continue (nil before the first).
func (a *ctlAgent) lastCtx() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.ctxs) == 0 {
		return nil
	}
	return a.ctxs[len(a.ctxs)-1]
}

func (a *ctlAgent) Continue(ctx context.Context) error {
	a.mu.Lock()
	a.ctxs = append(a.ctxs, ctx)
	a.mu.Unlock()
	n := a.continues.Add(1)
	select {
	case a.continued <- struct{}{}:
	default:
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.errEvery > 0 && n%int64(a.errEvery) == 0 {
		return errors.New("continue failed")
	}
	return a.err
}

func (a *ctlAgent) DropLastAssistant() { a.drops.Add(1) }

func (a *ctlAgent) setErr(err error) {
	a.mu.Lock()
	a.err = err
	a.mu.Unlock()
}

// ctlAuthCall is one MarkUsageLimitReached call.
type ctlAuthCall struct {
	Provider, SessionID string
	Opts                policy.UsageLimitOptions
}

// ctlAuth is a fake policy.AuthStorage answering switched to every call.
type ctlAuth struct {
	mu       sync.Mutex
	switched []bool // answers in order; the last one repeats
	calls    []ctlAuthCall
}

func (a *ctlAuth) MarkUsageLimitReached(provider, sessionID string, opts policy.UsageLimitOptions) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, ctlAuthCall{provider, sessionID, opts})
	i := min(len(a.calls)-1, len(a.switched)-1)
	return i >= 0 && a.switched[i]
}

func (a *ctlAuth) Calls() []ctlAuthCall {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

// ctlHarness is a Controller on a ctlClock with a ctlAgent and a subscriber
// that records every event.
type ctlHarness struct {
	t     *testing.T
	clk   *ctlClock
	agent *ctlAgent
	set   *policy.SettingsStore
	ctl   *policy.Controller

	mu     sync.Mutex
	events []policy.Event
	ends   chan policy.AutoRetryEnd
}

func newCtlHarness(t *testing.T, set policy.Settings, edit func(*policy.Config)) *ctlHarness {
	t.Helper()
	h := &ctlHarness{t: t, clk: newCtlClock(t), agent: newCtlAgent(), set: policy.NewSettingsStore(policy.MustCompile(set)),
		ends: make(chan policy.AutoRetryEnd, 64)}
	cfg := policy.Config{Clock: h.clk, Agent: h.agent, Settings: h.set}
	if edit != nil {
		edit(&cfg)
	}
	ctl, err := policy.NewController(cfg)
	if err != nil {
		t.Fatalf("NewController: %v", err)
	}
	h.ctl = ctl
	unsub := ctl.Subscribe(func(e policy.Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
		if end, ok := e.(policy.AutoRetryEnd); ok {
			select {
			case h.ends <- end:
			default:
			}
		}
	})
	t.Cleanup(unsub)
	return h
}

func ctlErrReply(msg string) *policy.AssistantMessage {
	return &policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: msg}
}

var ctlOK = policy.AssistantMessage{StopReason: policy.StopReasonStop}

// eventJSON returns the JSON of every event so far, marshalled with json.Marshal.
func (h *ctlHarness) eventJSON() []string {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	return eventsJSON(h.t, h.events)
}

// eventList returns a copy of the events so far.
func (h *ctlHarness) eventList() []policy.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

func (h *ctlHarness) eventCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events)
}

// waitContinue waits until Agent.Continue has been called once more.
func (h *ctlHarness) waitContinue() {
	h.t.Helper()
	select {
	case <-h.agent.continued:
	case <-time.After(ctlTimeout):
		h.t.Fatalf("Agent.Continue was not called within %v (state %s)", ctlTimeout, h.ctl.State())
	}
}

// waitEnd waits for the next auto_retry_end.
func (h *ctlHarness) waitEnd() policy.AutoRetryEnd {
	h.t.Helper()
	select {
	case e := <-h.ends:
		return e
	case <-time.After(ctlTimeout):
		h.t.Fatalf("no auto_retry_end within %v (state %s)", ctlTimeout, h.ctl.State())
	}
	return policy.AutoRetryEnd{}
}

// toContinuing starts a chain with msg, fires its first backoff and waits
// for the retried run to start.
func (h *ctlHarness) toContinuing(msg string) {
	h.t.Helper()
	if !h.ctl.OnAgentEnd(ctlErrReply(msg)) {
		h.t.Fatalf("OnAgentEnd(%q) = false, want a retry", msg)
	}
	h.clk.Add(h.ctl.Settings().Delay(h.ctl.Attempt()))
	h.waitContinue()
	if st := h.ctl.State(); st != policy.StateContinuing {
		h.t.Fatalf("state after the backoff = %s, want continuing", st)
	}
}

// assertAtRest checks the sound rest invariants: attempt 0, no chain open,
// WaitForRetry returns at once (with the last chain's outcome, which it
// returns, never ctx.Err()).
func (h *ctlHarness) assertAtRest(want policy.State) error {
	h.t.Helper()
	s := h.ctl.Snapshot()
	if s.State != want || s.Attempt != 0 || s.Open {
		h.t.Errorf("snapshot = %+v, want {State:%s Attempt:0 Open:false}", s, want)
	}
	if h.ctl.Attempt() != 0 || h.ctl.IsRetrying() || h.ctl.State() != want {
		h.t.Errorf("Attempt()=%d IsRetrying()=%v State()=%s, want 0 false %s", h.ctl.Attempt(), h.ctl.IsRetrying(), h.ctl.State(), want)
	}
	// With a context that is already done, WaitForRetry returns at once:
	// the last chain's outcome if no chain is open, ctx.Err() if one is.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := h.ctl.WaitForRetry(ctx)
	if errors.Is(err, context.Canceled) {
		h.t.Errorf("WaitForRetry at rest = %v, want the last chain's outcome (a chain is still open)", err)
	}
	return err
}

// probeCtx is a context whose Done reports that WaitForRetry has taken the
// open chain's channel: WaitForRetry reads the channel under the lock, then
// selects on it and on ctx.Done(), so the first Done call proves the waiter
// is blocked on this chain (it returns nil without calling Done when no chain
// is open).
type probeCtx struct {
	context.Context
	once    sync.Once
	entered chan struct{}
}

func newProbeCtx(parent context.Context) *probeCtx {
	return &probeCtx{Context: parent, entered: make(chan struct{})}
}

func (p *probeCtx) Done() <-chan struct{} {
	p.once.Do(func() { close(p.entered) })
	return p.Context.Done()
}

// startWaiter calls WaitForRetry on another goroutine and returns once that
// call is blocked on the open chain; the returned channel yields its result.
func (h *ctlHarness) startWaiter(parent context.Context) <-chan error {
	h.t.Helper()
	p := newProbeCtx(parent)
	res := make(chan error, 1)
	go func() { res <- h.ctl.WaitForRetry(p) }()
	select {
	case <-p.entered:
	case err := <-res:
		h.t.Fatalf("WaitForRetry returned %v at once although a chain is open", err)
	case <-time.After(ctlTimeout):
		h.t.Fatalf("WaitForRetry did not start waiting within %v", ctlTimeout)
	}
	return res
}

func waitResult(t *testing.T, res <-chan error) error {
	t.Helper()
	select {
	case err := <-res:
		return err
	case <-time.After(ctlTimeout):
		t.Fatalf("WaitForRetry did not return within %v", ctlTimeout)
	}
	return nil
}

// checkOutcome checks that err is the outcome want: nil, an error matching
// ErrRetryCancelled (errors.Is), or an *ExhaustedError equal to want
// (errors.As).
func checkOutcome(t *testing.T, what string, err, want error) {
	t.Helper()
	var wantEx, gotEx *policy.ExhaustedError
	switch {
	case want == nil:
		if err != nil {
			t.Errorf("%s = %v, want nil", what, err)
		}
	case errors.As(want, &wantEx):
		if !errors.As(err, &gotEx) || *gotEx != *wantEx {
			t.Errorf("%s = %#v, want %#v", what, err, wantEx)
		} else if errors.Is(err, policy.ErrRetryCancelled) {
			t.Errorf("%s = %v also matches ErrRetryCancelled", what, err)
		}
	default:
		if !errors.Is(err, want) || errors.As(err, &gotEx) {
			t.Errorf("%s = %v, want %v (errors.Is)", what, err, want)
		}
	}
}

func TestNewControllerRequiresAgent(t *testing.T) {
	if _, err := policy.NewController(policy.Config{}); err == nil || !strings.Contains(err.Error(), "Config.Agent is required") {
		t.Fatalf("NewController without Agent: err = %v, want Config.Agent is required", err)
	}
	ctl, err := policy.NewController(policy.Config{Agent: newCtlAgent()})
	if err != nil {
		t.Fatal(err)
	}
	if ctl.Variant() != policy.Sound() || !ctl.Settings().Equal(policy.DefaultSettings()) || ctl.State() != policy.StateIdle {
		t.Errorf("defaults: variant %v, settings %+v, state %s", ctl.Variant().Name, ctl.Settings(), ctl.State())
	}
	ctl.SetAutoRetryEnabled(false)
	if ctl.AutoRetryEnabled() {
		t.Error("SetAutoRetryEnabled(false) did not stick")
	}
}

// TestControllerDefaultBackoff drives a real Controller with the default
// settings on a mock clock: the waits are exactly 2000, 4000 and 8000 ms,
// and the fourth retryable error ends the chain with attempt 3.
func TestControllerDefaultBackoff(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	start := h.clk.Now()
	msgs := []string{"529 overloaded_error", "503 service unavailable", "429 Too Many Requests", "500 internal server error"}
	waits := []time.Duration{2000 * time.Millisecond, 4000 * time.Millisecond, 8000 * time.Millisecond}
	elapsed := time.Duration(0)
	for i, wait := range waits {
		if !h.ctl.OnAgentEnd(ctlErrReply(msgs[i])) {
			t.Fatalf("retry %d: OnAgentEnd = false, want true", i+1)
		}
		if s := h.ctl.Snapshot(); s != (retry.Snapshot{State: policy.StateBackoff, Attempt: i + 1, Open: true, Armed: 1, Controlled: true}) {
			t.Fatalf("retry %d: snapshot %+v", i+1, s)
		}
		if got := h.agent.drops.Load(); got != int64(i+1) {
			t.Fatalf("retry %d: DropLastAssistant called %d times, want %d", i+1, got, i+1)
		}
		h.clk.Add(wait - time.Millisecond)
		h.clk.settle(t) // nothing is due: no goroutine may be running Continue
		if got := h.agent.continues.Load(); got != int64(i) {
			t.Fatalf("retry %d: Continue called after %v, before the %v backoff ended", i+1, wait-time.Millisecond, wait)
		}
		if st := h.ctl.State(); st != policy.StateBackoff {
			t.Fatalf("retry %d: state %s 1 ms before the end of the backoff", i+1, st)
		}
		h.clk.Add(time.Millisecond)
		h.waitContinue()
		elapsed += wait
		if got := h.clk.Now().Sub(start); got != elapsed {
			t.Fatalf("retry %d: continued at +%v, want +%v", i+1, got, elapsed)
		}
		if s := h.ctl.Snapshot(); s != (retry.Snapshot{State: policy.StateContinuing, Attempt: i + 1, Open: true}) {
			t.Fatalf("retry %d: snapshot after the backoff %+v", i+1, s)
		}
	}
	if h.ctl.OnAgentEnd(ctlErrReply(msgs[3])) {
		t.Fatal("fourth retryable error: OnAgentEnd = true, want false (exhausted)")
	}
	want := []string{
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
		`{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"503 service unavailable"}`,
		`{"type":"auto_retry_start","attempt":3,"maxAttempts":3,"delayMs":8000,"errorMessage":"429 Too Many Requests"}`,
		`{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"500 internal server error"}`,
	}
	if got := h.eventJSON(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	if c, d := h.agent.continues.Load(), h.agent.drops.Load(); c != 3 || d != 3 {
		t.Errorf("Continue called %d times, DropLastAssistant %d times; want 3 and 3 (the final error stays in context)", c, d)
	}
	// Exactly one timer per retry, due after 2, 4 and 8 s of backoff.
	due := h.clk.dueTimes()
	wantDue := []time.Time{start.Add(2 * time.Second), start.Add(6 * time.Second), start.Add(14 * time.Second)}
	if !slices.EqualFunc(due, wantDue, time.Time.Equal) {
		t.Errorf("timers due at %v, want %v", due, wantDue)
	}
	h.assertAtRest(policy.StateExhausted)
}

// TestControllerChainEnds checks every way a chain ends: the exact events,
// the rest state, attempt 0, IsRetrying false, the release of a WaitForRetry
// blocked on the chain, and that no later timer revives it.
func TestControllerChainEnds(t *testing.T) {
	const (
		m1       = "529 overloaded_error"
		start1   = `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`
		cancel1  = `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`
		contFail = "cannot continue: the context ends with an assistant message"
	)
	one := policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: 2 * time.Second}
	zero := policy.Settings{Enabled: true, MaxRetries: 0, BaseDelay: 2 * time.Second}
	cases := []struct {
		name      string
		settings  policy.Settings
		open      func(h *ctlHarness) // opens the chain (nil: the chain never opens)
		end       func(h *ctlHarness) // ends it
		want      []string
		wantState policy.State
		continues int64
		wantErr   error // what WaitForRetry reports: nil, ErrRetryCancelled or an *ExhaustedError
	}{
		{
			name: "success",
			open: func(h *ctlHarness) { h.toContinuing(m1) },
			end: func(h *ctlHarness) {
				h.ctl.OnMessageEnd(ctlOK)
				if h.ctl.OnAgentEnd(&ctlOK) {
					h.t.Error("OnAgentEnd(success) = true")
				}
			},
			want:      []string{start1, `{"type":"auto_retry_end","success":true,"attempt":1}`},
			wantState: policy.StateIdle, continues: 1,
		},
		{
			name: "toolUse reply is a success", open: func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.OnMessageEnd(policy.AssistantMessage{StopReason: policy.StopReasonToolUse}) },
			want:      []string{start1, `{"type":"auto_retry_end","success":true,"attempt":1}`},
			wantState: policy.StateIdle, continues: 1,
		},
		{
			name: "exhausted", settings: one,
			open: func(h *ctlHarness) { h.toContinuing(m1) },
			end: func(h *ctlHarness) {
				if h.ctl.OnAgentEnd(ctlErrReply("503 service unavailable")) {
					h.t.Error("OnAgentEnd = true after the last retry")
				}
			},
			want: []string{`{"type":"auto_retry_start","attempt":1,"maxAttempts":1,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
				`{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"503 service unavailable"}`},
			wantState: policy.StateExhausted, continues: 1,
			wantErr: &policy.ExhaustedError{Attempt: 1, FinalError: "503 service unavailable", Reason: policy.ReasonMaxRetries},
		},
		{
			name:      "abort_retry in backoff",
			open:      func(h *ctlHarness) { h.ctl.OnAgentEnd(ctlErrReply(m1)) },
			end:       func(h *ctlHarness) { h.ctl.AbortRetry() },
			want:      []string{start1, cancel1},
			wantState: policy.StateCancelled,
			wantErr:   policy.ErrRetryCancelled,
		},
		{
			name:      "abort in backoff",
			open:      func(h *ctlHarness) { h.ctl.OnAgentEnd(ctlErrReply(m1)) },
			end:       func(h *ctlHarness) { h.ctl.Abort() },
			want:      []string{start1, cancel1},
			wantState: policy.StateCancelled,
			wantErr:   policy.ErrRetryCancelled,
		},
		{
			name:      "abort_retry in continuing",
			open:      func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.AbortRetry() },
			want:      []string{start1, cancel1},
			wantState: policy.StateCancelled, continues: 1,
			wantErr: policy.ErrRetryCancelled,
		},
		{
			name:      "abort in continuing",
			open:      func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.Abort() },
			want:      []string{start1, cancel1},
			wantState: policy.StateCancelled, continues: 1,
			wantErr: policy.ErrRetryCancelled,
		},
		{
			name:      "aborted reply in continuing",
			open:      func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.OnAgentEnd(&policy.AssistantMessage{StopReason: policy.StopReasonAborted}) },
			want:      []string{start1, cancel1},
			wantState: policy.StateCancelled, continues: 1,
			wantErr: policy.ErrRetryCancelled,
		},
		{
			name: "maxRetries 0", settings: zero,
			end: func(h *ctlHarness) {
				if h.ctl.OnAgentEnd(ctlErrReply(m1)) {
					h.t.Error("OnAgentEnd = true with maxRetries 0")
				}
			},
			want:      []string{`{"type":"auto_retry_end","success":false,"attempt":0,"finalError":"529 overloaded_error"}`},
			wantState: policy.StateExhausted,
			wantErr:   &policy.ExhaustedError{Attempt: 0, FinalError: "529 overloaded_error", Reason: policy.ReasonMaxRetries},
		},
		{
			name:      "fatal mid-chain",
			open:      func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.OnAgentEnd(ctlErrReply("401 invalid x-api-key")) },
			want:      []string{start1, `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"401 invalid x-api-key"}`},
			wantState: policy.StateExhausted, continues: 1,
			wantErr: &policy.ExhaustedError{Attempt: 1, FinalError: "401 invalid x-api-key", Reason: policy.ReasonNonRetryable},
		},
		{
			name:      "empty error message mid-chain is fatal, ends with Unknown error",
			open:      func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.OnAgentEnd(ctlErrReply("")) },
			want:      []string{start1, `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Unknown error"}`},
			wantState: policy.StateExhausted, continues: 1,
			wantErr: &policy.ExhaustedError{Attempt: 1, FinalError: "Unknown error", Reason: policy.ReasonNonRetryable},
		},
		{
			name: "disabled mid-chain",
			open: func(h *ctlHarness) { h.toContinuing(m1) },
			end: func(h *ctlHarness) {
				h.ctl.SetAutoRetryEnabled(false)
				if h.ctl.OnAgentEnd(ctlErrReply("502 bad gateway")) {
					h.t.Error("OnAgentEnd = true with retry disabled")
				}
			},
			want:      []string{start1, `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"502 bad gateway"}`},
			wantState: policy.StateExhausted, continues: 1,
			wantErr: &policy.ExhaustedError{Attempt: 1, FinalError: "502 bad gateway", Reason: policy.ReasonDisabled},
		},
		{
			name:      "no message mid-chain",
			open:      func(h *ctlHarness) { h.toContinuing(m1) },
			end:       func(h *ctlHarness) { h.ctl.OnAgentEnd(nil) },
			want:      []string{start1, `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Agent run ended without an assistant message"}`},
			wantState: policy.StateExhausted, continues: 1,
			wantErr: &policy.ExhaustedError{Attempt: 1, FinalError: policy.NoAssistantMessage, Reason: policy.ReasonNoMessage},
		},
		{
			name: "continue failing",
			open: func(h *ctlHarness) {
				h.agent.setErr(errors.New(contFail))
				h.ctl.OnAgentEnd(ctlErrReply(m1))
			},
			end: func(h *ctlHarness) {
				h.clk.Add(2 * time.Second)
				h.waitEnd() // the continue fails on the timer's goroutine
			},
			want:      []string{start1, `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"` + contFail + `"}`},
			wantState: policy.StateExhausted, continues: 1,
			wantErr: &policy.ExhaustedError{Attempt: 1, FinalError: contFail, Reason: policy.ReasonContinueFailed},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := tc.settings
			if set.Equal(policy.Settings{}) {
				set = policy.DefaultSettings()
			}
			h := newCtlHarness(t, set, nil)
			var waiter <-chan error
			if tc.open != nil {
				tc.open(h)
				if !h.ctl.IsRetrying() {
					t.Fatalf("chain not open after setup (state %s)", h.ctl.State())
				}
				waiter = h.startWaiter(context.Background())
			}
			tc.end(h)
			h.clk.settle(t)
			// Called after the chain ended, and blocked on it before.
			checkOutcome(t, "WaitForRetry after the end", h.assertAtRest(tc.wantState), tc.wantErr)
			if waiter != nil {
				checkOutcome(t, "blocked WaitForRetry", waitResult(t, waiter), tc.wantErr)
			}
			if got := h.eventJSON(); !slices.Equal(got, tc.want) {
				t.Errorf("events:\n got %q\nwant %q", got, tc.want)
			}
			// A timer armed by the ended chain is inert: a minute later
			// nothing has continued and nothing was emitted.
			n := h.eventCount()
			h.clk.Add(time.Minute)
			h.clk.settle(t)
			if got := h.agent.continues.Load(); got != tc.continues {
				t.Errorf("Continue called %d times, want %d", got, tc.continues)
			}
			if h.eventCount() != n {
				t.Errorf("events after the chain ended: %q", h.eventJSON()[n:])
			}
			checkOutcome(t, "WaitForRetry a minute later", h.assertAtRest(tc.wantState), tc.wantErr)
			// The next prompt forgets the outcome.
			h.ctl.OnPrompt(context.Background())
			checkOutcome(t, "WaitForRetry after OnPrompt", h.ctl.WaitForRetry(context.Background()), nil)
			// A later retryable error starts a fresh chain at attempt 1.
			if set.MaxRetries > 0 {
				h.set.Set(policy.MustCompile(set)) // "disabled mid-chain" switched retry off
				h.ctl.OnAgentEnd(ctlErrReply("overloaded"))
				if s := h.ctl.Snapshot(); s != (retry.Snapshot{State: policy.StateBackoff, Attempt: 1, Open: true, Armed: 1, Controlled: true}) {
					t.Errorf("next chain starts at %+v", s)
				}
				h.ctl.AbortRetry()
			}
		})
	}
}

// TestControllerWaitForRetryContext: WaitForRetry returns ctx.Err() when ctx
// ends while a chain is open, and nil once the chain has ended.
func TestControllerWaitForRetryContext(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	h.assertAtRest(policy.StateIdle) // no chain: nil at once
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))

	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.ctl.WaitForRetry(done); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForRetry(cancelled ctx) with a chain open = %v, want context.Canceled", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	res := h.startWaiter(ctx)
	cancel()
	if err := waitResult(t, res); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForRetry cancelled while blocked = %v, want context.Canceled", err)
	}
	if !h.ctl.IsRetrying() {
		t.Error("cancelling a waiter closed the chain")
	}

	// Several waiters are all released by one chain end.
	var res2 []<-chan error
	for range 3 {
		res2 = append(res2, h.startWaiter(context.Background()))
	}
	h.clk.Add(2 * time.Second)
	h.waitContinue()
	h.ctl.OnMessageEnd(ctlOK)
	for _, r := range res2 {
		if err := waitResult(t, r); err != nil {
			t.Errorf("waiter: %v", err)
		}
	}
	h.assertAtRest(policy.StateIdle)
}

// TestControllerUsageLimit: auth storage is asked exactly when a usage-limit
// retry is scheduled, with the parsed hint and Config's provider, session
// and base URL; a switch makes the delay and the timer 0.
func TestControllerUsageLimit(t *testing.T) {
	const (
		usage      = "usage limit reached; retry-after-ms: 1500"
		usageNoHnt = "429 usage_limit_reached"
	)
	cfg := func(auth *ctlAuth) func(*policy.Config) {
		return func(c *policy.Config) {
			c.Auth = auth
			c.Provider, c.SessionID, c.BaseURL = "openai-codex", "session-42", "https://chatgpt.example/backend-api"
		}
	}
	wantCall := func(ms float64, has bool) ctlAuthCall {
		return ctlAuthCall{"openai-codex", "session-42", policy.UsageLimitOptions{RetryAfterMs: ms, HasRetryAfter: has, BaseURL: "https://chatgpt.example/backend-api"}}
	}

	t.Run("switched: delay 0", func(t *testing.T) {
		auth := &ctlAuth{switched: []bool{true}}
		h := newCtlHarness(t, policy.DefaultSettings(), cfg(auth))
		if !h.ctl.OnAgentEnd(ctlErrReply(usage)) {
			t.Fatal("OnAgentEnd = false")
		}
		if got := auth.Calls(); !slices.Equal(got, []ctlAuthCall{wantCall(1500, true)}) {
			t.Errorf("auth calls %+v", got)
		}
		start := h.clk.Now()
		h.clk.Add(0) // the timer is due now
		h.waitContinue()
		if due := h.clk.dueTimes(); len(due) != 1 || !due[0].Equal(start) {
			t.Errorf("timer due at %v, want %v (delay 0)", due, start)
		}
		want := `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0,"errorMessage":"usage limit reached; retry-after-ms: 1500"}`
		if got := h.eventJSON(); len(got) != 1 || got[0] != want {
			t.Errorf("events %q, want [%s]", got, want)
		}
	})

	t.Run("not switched: exponential delay", func(t *testing.T) {
		auth := &ctlAuth{switched: []bool{false}}
		h := newCtlHarness(t, policy.DefaultSettings(), cfg(auth))
		h.ctl.OnAgentEnd(ctlErrReply(usageNoHnt))
		if got := auth.Calls(); !slices.Equal(got, []ctlAuthCall{wantCall(0, false)}) {
			t.Errorf("auth calls %+v, want one without a hint", got)
		}
		h.clk.Add(1999 * time.Millisecond)
		h.clk.settle(t)
		if h.agent.continues.Load() != 0 {
			t.Fatal("continued before 2000 ms")
		}
		h.clk.Add(time.Millisecond)
		h.waitContinue()
		want := `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"429 usage_limit_reached"}`
		if got := h.eventJSON(); len(got) != 1 || got[0] != want {
			t.Errorf("events %q, want [%s]", got, want)
		}
	})

	t.Run("each retry asks again", func(t *testing.T) {
		auth := &ctlAuth{switched: []bool{true, false}}
		h := newCtlHarness(t, policy.DefaultSettings(), cfg(auth))
		h.toContinuing(usage) // switched: delay 0
		h.ctl.OnAgentEnd(ctlErrReply(usage))
		h.clk.Add(3999 * time.Millisecond)
		h.clk.settle(t)
		if h.agent.continues.Load() != 1 {
			t.Fatal("second retry did not wait 4000 ms after a refused switch")
		}
		h.clk.Add(time.Millisecond)
		h.waitContinue()
		if got := auth.Calls(); len(got) != 2 {
			t.Errorf("auth asked %d times, want 2", len(got))
		}
		got := h.eventJSON()
		want := []string{
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0,"errorMessage":"usage limit reached; retry-after-ms: 1500"}`,
			`{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"usage limit reached; retry-after-ms: 1500"}`,
		}
		if !slices.Equal(got, want) {
			t.Errorf("events:\n got %q\nwant %q", got, want)
		}
	})

	t.Run("not asked on exhaustion", func(t *testing.T) {
		auth := &ctlAuth{switched: []bool{true}}
		h := newCtlHarness(t, policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: 2 * time.Second}, cfg(auth))
		h.toContinuing(usage)
		if h.ctl.OnAgentEnd(ctlErrReply(usage)) {
			t.Fatal("retried past maxRetries")
		}
		if got := auth.Calls(); len(got) != 1 {
			t.Errorf("auth asked %d times, want 1 (not on exhaustion)", len(got))
		}
	})

	t.Run("not asked for maxRetries 0, when disabled, or for other errors", func(t *testing.T) {
		auth := &ctlAuth{switched: []bool{true}}
		h := newCtlHarness(t, policy.Settings{Enabled: true, MaxRetries: 0, BaseDelay: 2 * time.Second}, cfg(auth))
		h.ctl.OnAgentEnd(ctlErrReply(usage))
		h.set.Set(policy.MustCompile(policy.Settings{Enabled: false, MaxRetries: 3, BaseDelay: 2 * time.Second}))
		h.ctl.OnAgentEnd(ctlErrReply(usage))
		h.set.Set(policy.MustCompile(policy.DefaultSettings()))
		h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
		if got := auth.Calls(); len(got) != 0 {
			t.Errorf("auth asked %+v", got)
		}
		if got := h.eventJSON(); len(got) != 2 || got[1] != `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}` {
			t.Errorf("events %q", got)
		}
		h.ctl.AbortRetry()
	})

	t.Run("no auth storage", func(t *testing.T) {
		h := newCtlHarness(t, policy.DefaultSettings(), nil)
		h.ctl.OnAgentEnd(ctlErrReply(usage))
		if got := h.eventJSON(); len(got) != 1 || got[0] != `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"usage limit reached; retry-after-ms: 1500"}` {
			t.Errorf("events %q", got)
		}
		h.ctl.AbortRetry()
	})
}

// TestControllerTransitionsFollowTable: OnTransition sees the fsm edges of
// a chain in order, and unregistering stops them.
func TestControllerTransitionsFollowTable(t *testing.T) {
	h := newCtlHarness(t, policy.DefaultSettings(), nil)
	var mu sync.Mutex
	var edges []string
	unreg := h.ctl.OnTransition(func(e fsm.Edge) {
		mu.Lock()
		edges = append(edges, e.String())
		mu.Unlock()
	})
	h.toContinuing("529 overloaded_error")
	h.ctl.OnMessageEnd(ctlOK)
	h.ctl.OnPrompt(context.Background()) // idle: ignored, no edge
	unreg()
	h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
	h.ctl.AbortRetry()
	mu.Lock()
	defer mu.Unlock()
	want := []string{"idle --retry--> backoff", "backoff --elapse--> continuing", "continuing --succeed--> idle"}
	if !slices.Equal(edges, want) {
		t.Errorf("edges %q, want %q", edges, want)
	}
}

// TestControllerCancelledWaitIsInert: a backoff cancelled by abort_retry
// must not fire into the next chain. Chain 1's timer is due at +2 s; it is
// cancelled at +1 s and chain 2 starts at once (due at +3 s). When +2 s
// passes nothing may continue; chain 2 continues at +3 s exactly.
func TestControllerCancelledWaitIsInert(t *testing.T) {
	for _, cancel := range []struct {
		name string
		f    func(*policy.Controller)
	}{{"abort_retry", (*policy.Controller).AbortRetry}, {"abort", (*policy.Controller).Abort}} {
		t.Run(cancel.name, func(t *testing.T) {
			h := newCtlHarness(t, policy.DefaultSettings(), nil)
			h.ctl.OnAgentEnd(ctlErrReply("529 overloaded_error"))
			h.clk.Add(time.Second)
			cancel.f(h.ctl)
			h.ctl.OnAgentEnd(ctlErrReply("503 service unavailable"))
			h.clk.Add(time.Second) // chain 1's timer fires here
			h.clk.settle(t)
			if n := h.agent.continues.Load(); n != 0 {
				t.Fatalf("the cancelled chain's timer continued the new chain (%d Continue calls)", n)
			}
			if s := h.ctl.Snapshot(); s != (retry.Snapshot{State: policy.StateBackoff, Attempt: 1, Open: true, Armed: 1, Controlled: true}) {
				t.Fatalf("snapshot after the stale timer: %+v", s)
			}
			h.clk.Add(time.Second - time.Millisecond)
			h.clk.settle(t)
			if h.agent.continues.Load() != 0 {
				t.Fatal("chain 2 continued before its 2 s wait")
			}
			h.clk.Add(time.Millisecond)
			h.waitContinue()
			h.ctl.OnMessageEnd(ctlOK)
			want := []string{
				`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`,
				`{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
				`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 service unavailable"}`,
				`{"type":"auto_retry_end","success":true,"attempt":1}`,
			}
			if got := h.eventJSON(); !slices.Equal(got, want) {
				t.Errorf("events:\n got %q\nwant %q", got, want)
			}
			h.assertAtRest(policy.StateIdle)
		})
	}
}

// eventsJSON marshals each event with json.Marshal, as an RPC client would.
func eventsJSON(t testing.TB, events []policy.Event) []string {
	t.Helper()
	out := make([]string, len(events))
	for i, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("json.Marshal(%#v): %v", e, err)
		}
		out[i] = string(b)
	}
	return out
}
