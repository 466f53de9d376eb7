package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/goleak"
)

// TestMain fails the tests if any goroutine outlives them: the local
// provider, the SDK's connections and the clock's timers must all be done.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the program's output")

// stepClock is a mock clock that moves on by each backoff wait as soon as the
// Controller arms it, so the example runs on the mock's time, not the real
// clock's. It records the waits.
type stepClock struct {
	*clock.Mock
	armed chan time.Duration
	mu    sync.Mutex
	waits []time.Duration
}

// AfterFunc implements clock.Clock: it arms the mock's timer and asks the
// stepping goroutine to move the mock on by d, which fires it.
func (c *stepClock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	t := c.Mock.AfterFunc(d, f)
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	c.armed <- d
	return t
}

// newStepClock starts the stepping goroutine; stop ends it.
func newStepClock() (c *stepClock, stop func()) {
	c = &stepClock{Mock: clock.NewMock(), armed: make(chan time.Duration, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for d := range c.armed {
			c.Mock.Add(d)
		}
	}()
	return c, func() { close(c.armed); <-done }
}

// TestRun runs the example with each SDK, on a mock clock, and compares its
// output with testdata/<provider>.txt: the retries of the first prompt
// (overloaded, dropped connection, rate limit), the compaction of the
// second, the give-up of the third.
func TestRun(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			clk, stop := newStepClock()
			var out bytes.Buffer
			err := run(context.Background(), &out, provider, clk)
			stop()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			// The Controller's waits: 5, 10 and 20 ms for the first
			// prompt's three retries, 5 ms for the third prompt's one.
			want := []time.Duration{baseDelay, 2 * baseDelay, 4 * baseDelay, baseDelay}
			clk.mu.Lock()
			waits := slices.Clone(clk.waits)
			clk.mu.Unlock()
			if !slices.Equal(waits, want) {
				t.Errorf("waits = %v, want %v", waits, want)
			}
			golden := filepath.Join("testdata", provider+".txt")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			wantOut, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(out.Bytes(), wantOut) {
				t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", golden, out.Bytes(), wantOut)
			}
		})
	}
}

// An unknown provider is refused, naming the allowed ones.
func TestRunUnknownProvider(t *testing.T) {
	err := run(context.Background(), &bytes.Buffer{}, "gemini", clock.NewMock())
	if err == nil || err.Error() != `provider "gemini": allowed values are "anthropic" and "openai"` {
		t.Errorf("err = %v", err)
	}
}
