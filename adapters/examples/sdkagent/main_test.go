package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/ohmypi/retryfsm/adapters/internal/stepclock"
	"go.uber.org/goleak"
)

// TestMain fails the tests if any goroutine outlives them: the local
// provider, the SDK's connections and the clock's timers must all be done.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite testdata/*.txt with the program's output")

// TestRun runs the example with each SDK, on a mock clock, and compares its
// output with testdata/<provider>.txt: the retries of the first prompt
// (overloaded, dropped connection, rate limit), the compaction of the
// second, the give-up of the third.
func TestRun(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			clk := stepclock.New()
			var out bytes.Buffer
			err := run(context.Background(), &out, provider, clk)
			clk.Stop()
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			// The Controller's waits: 5, 10 and 20 ms for the first
			// prompt's three retries, 5 ms for the third prompt's one.
			want := []time.Duration{baseDelay, 2 * baseDelay, 4 * baseDelay, baseDelay}
			waits := clk.Waits()
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
