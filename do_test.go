package retryfsm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ohmypi/retryfsm"
	"github.com/ohmypi/retryfsm/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRetriesInABubble runs Example_synctest's test.
func TestRetriesInABubble(t *testing.T) { retriesInABubble(t) }

// TestDoPlainErrors: without WithReply an error's text is the reply
// (DefaultReply): a 503 is retried, a text the original does not retry is
// returned as it is, with one call; settings are validated before any call;
// a profile's settings change the waits.
func TestDoPlainErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fatal := errors.New("invalid api key")
		calls := 0
		_, err := retryfsm.Do(context.Background(), policy.DefaultPolicy(), func(context.Context) (int, error) {
			calls++
			return 0, fatal
		})
		if err != fatal || calls != 1 {
			t.Errorf("Do = %v after %d calls, want the error itself after 1", err, calls)
		}

		calls = 0
		if _, err := retryfsm.Do(context.Background(), nil, func(context.Context) (int, error) {
			calls++
			return 0, errors.New("529 overloaded_error")
		}, retryfsm.WithConfig(func(c *policy.Config) { c.Rand = func() float64 { return 0 } })); err == nil || calls != policy.DefaultMaxRetries+1 {
			t.Errorf("nil policy: %v after %d calls, want the default policy's %d calls", err, calls, policy.DefaultMaxRetries+1)
		}

		pol, err := policy.ProfileByName("openai-sdk")
		if err != nil {
			t.Fatal(err)
		}
		prof, err := pol.Policy()

		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		calls = 0
		var starts []float64
		_, err = retryfsm.Do(context.Background(), prof, func(context.Context) (int, error) {
			calls++
			return 0, errors.New("503 Service Unavailable")
		}, retryfsm.WithConfig(func(c *policy.Config) { c.Rand = func() float64 { return 0 } }),
			retryfsm.OnEvent(func(e policy.Event) {
				if s, ok := e.(policy.AutoRetryStart); ok {
					starts = append(starts, s.DelayMs)
				}
			}))
		var re *retryfsm.Error
		var ex *policy.ExhaustedError
		if !errors.As(err, &re) || !errors.As(err, &ex) || re.Calls != 3 || calls != 3 || re.Last.Error() != "503 Service Unavailable" {
			t.Fatalf("Do = %v (calls %d)", err, calls)
		}
		if !strings.Contains(err.Error(), "after 3 calls") {
			t.Errorf("message %q", err)
		}
		// openai-sdk: 2 retries from 500 ms, 25 % downward jitter (draw 0: the whole wait).
		if len(starts) != 2 || time.Since(start) != time.Duration((starts[0]+starts[1])*float64(time.Millisecond)) {
			t.Errorf("waits %v ms, elapsed %v", starts, time.Since(start))
		}
	})
}

// TestDoCancelBeforeRetry: a ctx that ends in the first wait ends Do at
// once with an error matching ErrRetryCancelled and context.DeadlineExceeded
// whose Last is the call's error; no second call.
func TestDoCancelBeforeRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		calls := 0
		start := time.Now()
		_, err := retryfsm.Do(ctx, policy.DefaultPolicy(), func(context.Context) (int, error) {
			calls++
			return 0, errors.New("429 rate_limit_error")
		})
		var re *retryfsm.Error
		if !errors.Is(err, policy.ErrRetryCancelled) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &re) || re.Last.Error() != "429 rate_limit_error" {
			t.Fatalf("Do = %v", err)
		}
		if calls != 1 || time.Since(start) != 500*time.Millisecond {
			t.Errorf("%d calls, returned after %v; want 1, 500ms", calls, time.Since(start))
		}
		time.Sleep(time.Minute)
		if calls != 1 {
			t.Errorf("a call after Do returned (%d calls)", calls)
		}
	})
}

// TestDoValueAfterCtxEnd: a retried call that ignores its ctx and succeeds
// after Do's ctx ended still gives its value (the chain was cancelled, but
// the call did not fail); Do returns when that call returns.
func TestDoValueAfterCtxEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		calls := 0
		start := time.Now()
		v, err := retryfsm.Do(ctx, policy.DefaultPolicy(), func(context.Context) (string, error) {
			calls++
			if calls == 1 {
				return "", errors.New("529 overloaded_error: Overloaded")
			}
			time.Sleep(2 * time.Second) // 2 s to 4 s, past the deadline at 3 s
			return "late", nil
		})
		if v != "late" || err != nil || calls != 2 {
			t.Errorf("Do = %q, %v after %d calls; want late, nil, 2", v, err, calls)
		}
		if d := time.Since(start); d != 4*time.Second {
			t.Errorf("Do returned after %v, want 4s (when the call in flight returned)", d)
		}
	})
}

// TestDoRetriedCallPanics: a retried call's panic reaches Do's caller, who
// can recover it with the value the call panicked with (a retried call runs
// on the clock's timer goroutine, where a panic would kill the process);
// the chain ends and no call is made after it. The first call's panic is
// the caller's as it always was.
func TestDoRetriedCallPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for i, panicAt := range []int{1, 2, 3, 2} {
			// The last case is the original variant, where a failed
			// continue leaves the chain open: Do must still return.
			variant := policy.Sound()
			if i == 3 {
				variant = policy.Original()
			}
			calls := 0
			got := func() (p any) {
				defer func() { p = recover() }()
				_, _ = retryfsm.Do(context.Background(), policy.DefaultPolicy(), func(context.Context) (int, error) {
					calls++
					if calls == panicAt {
						panic(fmt.Sprintf("boom %d", calls))
					}
					return 0, errors.New("529 overloaded_error: Overloaded")
				}, retryfsm.WithConfig(func(c *policy.Config) { c.Variant = variant }))
				return nil
			}()
			if want := fmt.Sprintf("boom %d", panicAt); got != want {
				t.Errorf("panic at call %d: recovered %v, want %q", panicAt, got, want)
			}
			time.Sleep(time.Minute)
			if calls != panicAt {
				t.Errorf("panic at call %d: %d calls, want none after the panic", panicAt, calls)
			}
		}
	})
}

// TestDoWithProfile: WithProfile picks a named profile's policy (openai-sdk:
// 2 retries from 500 ms with its jitter, draw 0 the whole wait), the same
// as passing that profile's policy; an unknown name, or a policy given as
// well, is Do's error before any call.
func TestDoWithProfile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fail := func(calls *int) func(context.Context) (int, error) {
			return func(context.Context) (int, error) {
				*calls++
				return 0, errors.New("503 Service Unavailable")
			}
		}
		noJitter := retryfsm.WithConfig(func(c *policy.Config) { c.Rand = func() float64 { return 0 } })
		calls := 0
		start := time.Now()
		_, err := retryfsm.Do(context.Background(), nil, fail(&calls), retryfsm.WithProfile("openai-sdk"), noJitter)
		var ex *policy.ExhaustedError
		if !errors.As(err, &ex) || calls != 3 {
			t.Fatalf("WithProfile(openai-sdk): %v after %d calls, want exhausted after 3", err, calls)
		}
		byName := time.Since(start)
		prof, err := policy.ProfileByName("openai-sdk")
		if err != nil {
			t.Fatal(err)
		}
		pol, err := prof.Policy()
		if err != nil {
			t.Fatal(err)
		}
		calls, start = 0, time.Now()
		_, _ = retryfsm.Do(context.Background(), pol, fail(&calls), noJitter)
		if byPolicy := time.Since(start); calls != 3 || byPolicy != byName || byName >= 2*time.Second {
			t.Errorf("by name %v, by policy %v (%d calls): want the same waits, the profile's (under the default's 2 s)", byName, byPolicy, calls)
		}

		calls = 0
		_, err = retryfsm.Do(context.Background(), nil, fail(&calls), retryfsm.WithProfile("openai-skd"))
		if err == nil || calls != 0 || !strings.Contains(err.Error(), `unknown profile "openai-skd"`) || !strings.Contains(err.Error(), "openai-sdk") {
			t.Errorf("unknown profile: %v after %d calls", err, calls)
		}
		_, err = retryfsm.Do(context.Background(), pol, fail(&calls), retryfsm.WithProfile("openai-sdk"))
		if err == nil || calls != 0 || !strings.Contains(err.Error(), "pass nil") {
			t.Errorf("policy and profile both: %v after %d calls", err, calls)
		}
	})
}
