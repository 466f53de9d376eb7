// Package retryfsm retries one call, such as one model call through a
// provider's SDK, on the retry machine of package policy: the same settings
// and profiles, the same classification of errors, the same events, the
// same waits (the original agent's 2, 4, 8 s by default).
//
//	msg, err := retryfsm.Do(ctx, policy.DefaultSettings(),
//		func(ctx context.Context) (*anthropic.Message, error) {
//			return client.Messages.New(ctx, params)
//		},
//		retryfsm.WithReply(anthropicreply.Message))
//
// The call's error is read as a reply (status, headers, error type) by the
// function given with WithReply: adapters/anthropic's and adapters/openai's
// Message read their SDK's errors. Without it, the error's text is the
// reply's errorMessage, which the settings' classification reads.
//
// ctx bounds the whole chain: when it ends, the pending wait is cancelled
// and the running call's ctx too. Do returns the call's value, or an error
// that errors.As and errors.Is see through (see Do).
//
// For an agent with runs, tool calls and user commands (abort, retry
// on/off), embed a policy.Controller instead; Do runs one for its call.
package retryfsm

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ohmypi/retryfsm/policy"
)

// Option configures Do.
type Option func(*options)

type options struct {
	reply func(error) policy.AssistantMessage
	cfg   []func(*policy.Config)
	ctl   []func(context.Context, *policy.Controller) func()
	subs  []func(policy.Event)
	// profile is WithProfile's name; hasProfile says it was given.
	profile    string
	hasProfile bool
}

// WithProfile runs Do on the named retry profile's policy: "default" (the
// oh-my-pi agent's own policy), "anthropic-sdk", "openai-sdk",
// "anthropic-sdk-go", "openai-sdk-go" and the others policy.Profiles lists
// (retrysim profiles prints them, with their settings). Do's policy
// argument must then be nil. An unknown name is Do's error, before any
// call, naming the profiles there are.
func WithProfile(name string) Option {
	return func(o *options) { o.profile, o.hasProfile = name, true }
}

// WithReply reads the call's error as a reply, the way the retry policy
// sees a failed model call: its errorMessage, HTTP status and headers.
// adapters/anthropic.Message and adapters/openai.Message read their SDK's
// errors (status, retry-after headers, error type); a func of your own is
// the classifier for another client. It is called with a non-nil error.
// The default reply is DefaultReply.
func WithReply(f func(error) policy.AssistantMessage) Option {
	return func(o *options) { o.reply = f }
}

// WithConfig changes the Controller's configuration before Do builds it:
// Clock (default the real clock), Variant, Auth, Provider, Model,
// ContextWindow, Rand. Agent and Settings are Do's own.
func WithConfig(f func(*policy.Config)) Option {
	return func(o *options) { o.cfg = append(o.cfg, f) }
}

// OnEvent subscribes f to the chain's events (auto_retry_start,
// auto_retry_end, retry_fallback), delivered in order (see
// policy.Controller.Subscribe).
func OnEvent(f func(policy.Event)) Option {
	return func(o *options) { o.subs = append(o.subs, f) }
}

// WithController calls f with the Controller Do runs, and Do's ctx, before
// the first call, for what needs more than events (adapters/otel also
// observes transitions). The function f returns (nil for none) is called
// when Do returns.
func WithController(f func(ctx context.Context, c *policy.Controller) (done func())) Option {
	return func(o *options) { o.ctl = append(o.ctl, f) }
}

// DefaultReply is the reply for err without WithReply: stop reason
// "aborted" for a cancelled context (the chain is then cancelled), else
// stop reason "error" with err's text as errorMessage, which the original's
// classifier reads (a text with "overloaded", "rate limit", "429", "503",
// "timeout", "connection error"... is retried).
func DefaultReply(err error) policy.AssistantMessage {
	if errors.Is(err, context.Canceled) {
		return policy.AssistantMessage{StopReason: policy.StopReasonAborted, ErrorMessage: "Request was aborted: " + err.Error()}
	}
	return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: err.Error()}
}

// Error is Do's error when the call was retried and the retry chain did not
// end in success: it gave up, or was cancelled. errors.As and errors.Is see
// both End and Last, so errors.As(err, &sdkErr) reaches the SDK's error.
type Error struct {
	// End is how the chain ended: a *policy.ExhaustedError (it gave up: its
	// Reason, Attempt, FinalError), or an error matching
	// policy.ErrRetryCancelled (an aborted reply; with ctx's error too
	// when Do's ctx ended).
	End error
	// Last is the error of the last call made.
	Last error
	// Calls is the number of calls made.
	Calls int
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("retryfsm: after %d calls: %v (last error: %v)", e.Calls, e.End, e.Last)
}

// Unwrap returns End and Last.
func (e *Error) Unwrap() []error { return []error{e.End, e.Last} }

// Do calls call, and calls it again as the policy p says (nil:
// policy.DefaultPolicy) while it fails with an error p retries, waiting between calls on the Controller's clock.
// It returns
//
//   - the value of the first call that returned a nil error, and nil (even
//     when ctx ended while that call ran);
//   - the error of the first call when it was not retried (an error the
//     policy does not retry, or retry switched off), as call returned it;
//   - an *Error when calls were retried and the chain gave up (End an
//     *policy.ExhaustedError) or was cancelled (End matching
//     policy.ErrRetryCancelled, and ctx.Err() when ctx ended).
//
// Build p once with policy.Compile (which checks the settings) and reuse it.
//
// Each call gets a ctx that ends with ctx, or sooner when the chain is
// cancelled; Do returns after the last call it made has returned, so it
// leaves no goroutine behind. The value of a call that failed is dropped.
//
// A call that panics makes Do panic with the same value on the caller's
// goroutine, where the caller can recover it: the first call runs there; a
// retried call runs on the clock's timer goroutine, so Do recovers its
// panic there, cancels the chain, and panics again once the chain has
// ended (no call is made after it).
func Do[T any](ctx context.Context, p *policy.Policy, call func(context.Context) (T, error), opts ...Option) (T, error) {
	var zero T
	o := options{reply: DefaultReply}
	for _, opt := range opts {
		opt(&o)
	}
	if o.hasProfile {
		if p != nil {
			return zero, fmt.Errorf("retryfsm: WithProfile(%q) and a policy both given: pass nil as the policy", o.profile)
		}
		prof, err := policy.ProfileByName(o.profile)
		if err != nil {
			return zero, fmt.Errorf("retryfsm: WithProfile: %w", err)
		}
		if p, err = prof.Policy(); err != nil {
			return zero, err
		}
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	a := &doAgent[T]{call: call, reply: o.reply, stop: stop}
	cfg := policy.Config{}
	for _, f := range o.cfg {
		f(&cfg)
	}
	cfg.Agent, cfg.Settings = a, policy.NewSettingsStore(p)
	ctl, err := policy.NewController(cfg)
	if err != nil {
		return zero, err
	}
	a.ctl = ctl
	for _, f := range o.subs {
		ctl.Subscribe(f)
	}
	for _, f := range o.ctl {
		if done := f(ctx, ctl); done != nil {
			defer done()
		}
	}
	ctl.OnPrompt(ctx)
	a.run(ctx)
	end := ctl.WaitForRetry(ctx)
	a.close()

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.panicked != nil {
		panic(a.panicked.value)
	}
	switch {
	case a.lastErr == nil:
		// The last call succeeded (a call that ignored a cancelled ctx
		// and succeeded still has its value).
		return a.value, nil
	case end == nil:
		return zero, a.lastErr // not retried
	}
	return zero, &Error{End: end, Last: a.lastErr, Calls: a.calls}
}

// doAgent is the Agent of Do: a run is one call. It keeps no replies, so
// it has no DropLastAssistant.
type doAgent[T any] struct {
	ctl   *policy.Controller
	call  func(context.Context) (T, error)
	reply func(error) policy.AssistantMessage
	stop  context.CancelFunc // cancels the chain (Do's own ctx)

	mu       sync.Mutex
	panicked *callPanic     // a retried call's panic, for Do to raise again
	closed   bool           // Do is returning: no more runs
	running  sync.WaitGroup // the runs Continue started
	calls    int
	value    T
	lastErr  error
}

// run makes one call and feeds its reply to the Controller.
func (a *doAgent[T]) run(ctx context.Context) {
	v, err := a.call(ctx)
	a.mu.Lock()
	a.calls++
	a.value, a.lastErr = v, err
	a.mu.Unlock()
	var m policy.AssistantMessage
	if err != nil {
		m = a.reply(err)
		if m.StopReason == "" || m.IsSuccess() {
			// A reply that says success for an error would end the chain
			// with a success Do cannot return a value for.
			m.StopReason = policy.StopReasonError
		}
	} else {
		m.StopReason = policy.StopReasonStop
	}
	a.ctl.OnMessageEnd(m)
	a.ctl.OnAgentEnd(&m)
}

// Continue implements policy.Agent: the retried call, on the timer's
// goroutine.
func (a *doAgent[T]) Continue(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return errors.New("retryfsm: Do has returned")
	}
	a.running.Add(1)
	a.mu.Unlock()
	defer a.running.Done()
	defer func() {
		if p := recover(); p != nil {
			// The timer's goroutine is no place to panic: nobody can
			// recover it there. Keep it for Do, end the chain.
			a.mu.Lock()
			if a.panicked == nil {
				a.panicked = &callPanic{value: p}
			}
			a.mu.Unlock()
			a.stop()
			err = errCallPanicked
		}
	}()
	a.run(ctx)
	return nil
}

// callPanic holds what a retried call panicked with.
type callPanic struct{ value any }

// errCallPanicked is Continue's error for a retried call that panicked (it
// ends the chain where the variant reads a failed continue).
var errCallPanicked = errors.New("retryfsm: the retried call panicked")

// close lets no run start and waits for the one running.
func (a *doAgent[T]) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.running.Wait()
}
