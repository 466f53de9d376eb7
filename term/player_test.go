package term_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/term"
)

func parse(t *testing.T, text string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

type playResult struct {
	res *term.Result
	err error
}

func play(cfg term.Config) chan playResult {
	done := make(chan playResult, 1)
	go func() {
		res, err := term.Play(context.Background(), cfg)
		done <- playResult{res, err}
	}()
	return done
}

func wait(t *testing.T, done chan playResult) playResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(testkit.ScreenTimeout):
		t.Fatal("Play did not return")
	}
	return playResult{}
}

func TestPlayWithoutTerminal(t *testing.T) {
	// Delays of 0 ms: the mock clock never has to move.
	sc := parse(t, `
settings: {maxRetries: 3, baseDelayMs: 0}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "503 service unavailable"}
  - {stopReason: stop}
actions:
  - {at: 0, do: get_state, id: s}
expect:
  events:
    - {type: auto_retry_start, attempt: 2, delayMs: 0}
    - {type: auto_retry_end, success: true, attempt: 2}
  final: {state: idle, attempt: 0}
`)
	out := testkit.NewScreen()
	r := wait(t, play(term.Config{Scenario: sc, Out: out, Clock: clock.NewMock(), Keys: strings.NewReader("\x1b")}))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.res.Passed() {
		t.Fatalf("failures: %q", r.res.Failures)
	}
	// The same lines as the trace, as text, and nothing else.
	var want strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(r.res.Trace), "\n"), "\n") {
		want.WriteString(term.FormatLine([]byte(line)) + "\n")
	}
	if got := out.String(); got != want.String() {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want.String())
	}
	// The trace is the one "run" makes.
	ref, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ref.Trace, r.res.Trace) {
		t.Fatalf("trace differs from RunScenario's:\n%s\nwant:\n%s", r.res.Trace, ref.Trace)
	}
}

func TestPlayWithoutTerminalPrintsRetryFailure(t *testing.T) {
	sc := parse(t, `
settings: {maxRetries: 1, baseDelayMs: 0}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "503 service unavailable"}
expect:
  final: {state: idle}
`)
	out := testkit.NewScreen()
	r := wait(t, play(term.Config{Scenario: sc, Out: out, Clock: clock.NewMock()}))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Passed() {
		t.Fatal("the expectation should fail (the chain ends exhausted)")
	}
	got := out.String()
	if !strings.Contains(got, `success=false attempt=1 finalError="503 service unavailable"`+"\nRetry failed after 1 attempts: 503 service unavailable\n") {
		t.Fatalf("output:\n%s", got)
	}
	if strings.Contains(got, "\x1b") {
		t.Fatalf("escape sequences without a terminal:\n%q", got)
	}
}

func TestPlayTerminalLoaderCountdownAndEsc(t *testing.T) {
	sc := parse(t, `
settings: {maxRetries: 3, baseDelayMs: 3000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`)
	clk := clock.NewMock()
	keys, keysW := io.Pipe()
	defer keysW.Close()
	out := testkit.NewScreen()
	done := play(term.Config{Scenario: sc, Out: out, Clock: clk, Terminal: true, Keys: keys})

	at := out.WaitFor(t, 0, "auto_retry_start")
	at = out.WaitFor(t, at, "Retrying (1/3) in 3s… (esc to cancel)")
	// nudge makes the player redraw now: it wakes on any key.
	nudge := func() {
		if _, err := keysW.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(600 * time.Millisecond) // 2400 ms left: 2 s
	nudge()
	at = out.WaitFor(t, at, "Retrying (1/3) in 2s… (esc to cancel)")
	clk.Add(1000 * time.Millisecond) // 1400 ms left: 1 s
	nudge()
	at = out.WaitFor(t, at, "Retrying (1/3) in 1s… (esc to cancel)")
	// An arrow key is not Esc.
	if _, err := keysW.Write([]byte("\x1b[A")); err != nil {
		t.Fatal(err)
	}
	if _, err := keysW.Write([]byte{0x1b}); err != nil {
		t.Fatal(err)
	}
	at = out.WaitFor(t, at, "abort_retry")
	out.WaitFor(t, at, "Retry failed after 1 attempts: Retry cancelled")
	r := wait(t, done) // the inert backoff timer is not waited for
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Cancelled != "abort_retry" || r.res.CancelledAt != 1600*time.Millisecond {
		t.Errorf("Cancelled %q at %v, want abort_retry at 1.6s", r.res.Cancelled, r.res.CancelledAt)
	}
	trace := string(r.res.Trace)
	for _, w := range []string{
		`{"t":1600,"type":"response","command":"abort_retry","success":true}`,
		`{"t":1600,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"t":1600,"type":"prompt_resolved","prompt":1}`,
		// The play ends at the cancel: the final line's time is its time,
		// not that of the cancelled backoff's timer (3000).
		`{"t":1600,"type":"final","state":"cancelled"`,
	} {
		if !strings.Contains(trace, w) {
			t.Errorf("trace lacks %s:\n%s", w, trace)
		}
	}
	if strings.Count(trace, `"command":"abort_retry"`) != 1 {
		t.Errorf("the arrow key cancelled too:\n%s", trace)
	}
	screenText := out.String()
	if !strings.HasSuffix(screenText, "\x1b[?25h") && !strings.Contains(screenText[strings.LastIndex(screenText, "\x1b[?25l"):], "\x1b[?25h") {
		t.Errorf("the cursor is left hidden:\n%q", screenText)
	}
}

func TestPlayEscWithoutLoaderDoesNothing(t *testing.T) {
	sc := parse(t, `
turns:
  - {stopReason: stop, durationMs: 5000}
`)
	clk := clock.NewMock()
	keys, keysW := io.Pipe()
	defer keysW.Close()
	out := testkit.NewScreen()
	done := play(term.Config{Scenario: sc, Out: out, Clock: clk, Terminal: true, Keys: keys})
	out.WaitFor(t, 0, "agent_run")
	if _, err := keysW.Write([]byte{0x1b}); err != nil {
		t.Fatal(err)
	}
	// The player may register its next wake-up after a given Add (a race
	// of the mock clock): advance until it has returned.
	var r playResult
	for i := 0; ; i++ {
		clk.Add(time.Second)
		select {
		case r = <-done:
		default:
			if i < 600 {
				continue
			}
			r = wait(t, done)
		}
		break
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if strings.Contains(string(r.res.Trace), `"command":"abort_retry"`) || strings.Contains(out.String(), "Retrying (") {
		t.Fatalf("Esc acted without a loader:\n%s\n%q", r.res.Trace, out.String())
	}
}

// TestPlayInterruptEndsThePlay: Ctrl-C (os.Interrupt) aborts and ends
// the play at that instant: the aborted call's reply, the run's end and
// the prompt's resolution come at once, the script's later action is not
// played, and the final line has the time of the Ctrl-C. The expectations
// are checked all the same (on the lines written).
func TestPlayInterruptEndsThePlay(t *testing.T) {
	sc := parse(t, `
turns:
  - {stopReason: stop, durationMs: 60000}
actions:
  - {at: 120000, do: get_state}
expect:
  events:
    - {type: response, command: get_state}
`)
	clk := clock.NewMock()
	intr := make(chan os.Signal)
	out := testkit.NewScreen()
	done := play(term.Config{Scenario: sc, Out: out, Clock: clk, Interrupt: intr})
	out.WaitFor(t, 0, "agent_run")
	clk.Add(2500 * time.Millisecond) // the call is in flight until 60 s
	intr <- os.Interrupt
	r := wait(t, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.res.Cancelled != "abort" || r.res.CancelledAt != 2500*time.Millisecond {
		t.Errorf("Cancelled %q at %v, want abort at 2.5s", r.res.Cancelled, r.res.CancelledAt)
	}
	trace := string(r.res.Trace)
	for _, w := range []string{
		`{"t":2500,"type":"message_end","message":{"role":"assistant","stopReason":"aborted","errorMessage":"Request was aborted"}`,
		`{"t":2500,"type":"response","command":"abort","success":true}`,
		`{"t":2500,"type":"prompt_resolved","prompt":1}`,
		`{"t":2500,"type":"final","state":"idle","attempt":0,"isRetrying":false,"unresolvedPrompts":[],"turnsConsumed":1}`,
	} {
		if !strings.Contains(trace, w) {
			t.Errorf("trace lacks %s:\n%s", w, trace)
		}
	}
	if strings.Contains(trace, "get_state") {
		t.Errorf("the action after the cancel was played:\n%s", trace)
	}
	if len(r.res.Failures) != 1 || !strings.Contains(r.res.Failures[0], "expect.events[0]") {
		t.Errorf("failures %q, want the unmet get_state expectation", r.res.Failures)
	}
}

// TestPlayTerminateSignal: a signal other than os.Interrupt abandons the
// play at once with ErrInterrupted.
func TestPlayTerminateSignal(t *testing.T) {
	sc := parse(t, `
turns:
  - {stopReason: stop, durationMs: 60000}
`)
	intr := make(chan os.Signal)
	out := testkit.NewScreen()
	done := play(term.Config{Scenario: sc, Out: out, Clock: clock.NewMock(), Interrupt: intr})
	out.WaitFor(t, 0, "agent_run")
	intr <- syscall.SIGTERM
	if r := wait(t, done); !errors.Is(r.err, term.ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted", r.err)
	}
}

func TestPlayContextCancelled(t *testing.T) {
	sc := parse(t, `
turns:
  - {stopReason: stop, durationMs: 60000}
`)
	ctx, cancel := context.WithCancel(context.Background())
	out := testkit.NewScreen()
	done := make(chan error, 1)
	go func() {
		_, err := term.Play(ctx, term.Config{Scenario: sc, Out: out, Clock: clock.NewMock()})
		done <- err
	}()
	out.WaitFor(t, 0, "agent_run")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v", err)
		}
	case <-time.After(testkit.ScreenTimeout):
		t.Fatal("Play did not return")
	}
}

func TestPlayInvalid(t *testing.T) {
	if _, err := term.Play(context.Background(), term.Config{}); err == nil {
		t.Error("no error without a scenario")
	}
	sc := parse(t, "{}")
	if _, err := term.Play(context.Background(), term.Config{Scenario: sc, Out: io.Discard, Variant: "nope"}); err == nil {
		t.Error("no error for an unknown variant")
	}
}

func TestFormatLine(t *testing.T) {
	tests := []struct{ line, want string }{
		{`{"t":0,"type":"agent_run","kind":"prompt"}`, `      0     0.000s  agent_run                 kind=prompt`},
		{`{"t":2000,"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"503 service unavailable"}`,
			`   2000     2.000s  auto_retry_start          attempt=2 maxAttempts=3 delayMs=4000 errorMessage="503 service unavailable"`},
		{`{"t":1234567,"type":"agent_run_end"}`, `1234567  1234.567s  agent_run_end`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		if got := term.FormatLine([]byte(tt.line + "\n")); got != tt.want {
			t.Errorf("FormatLine(%s)\n got: %q\nwant: %q", tt.line, got, tt.want)
		}
	}
}

func TestPlayTerminalLoaderRounding(t *testing.T) {
	sc := parse(t, `
settings: {maxRetries: 3, baseDelayMs: 1500}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`)
	clk := clock.NewMock()
	keys, keysW := io.Pipe()
	defer keysW.Close()
	out := testkit.NewScreen()
	done := play(term.Config{Scenario: sc, Out: out, Clock: clk, Terminal: true, Keys: keys})
	steps := []struct {
		advance time.Duration
		want    string
	}{
		{0, "Retrying (1/3) in 2s… (esc to cancel)"},                      // 1500 ms: the original's text
		{time.Millisecond, "Retrying (1/3) in 1s… (esc to cancel)"},       // 1499 ms
		{999 * time.Millisecond, "Retrying (1/3) in 1s… (esc to cancel)"}, // 500 ms
		{time.Millisecond, "Retrying (1/3) in 0s… (esc to cancel)"},       // 499 ms
	}
	at := 0
	for _, st := range steps {
		if st.advance > 0 {
			clk.Add(st.advance)
			if _, err := keysW.Write([]byte("x")); err != nil { // redraw now
				t.Fatal(err)
			}
		}
		at = out.WaitFor(t, at, st.want)
	}
	clk.Add(time.Second)
	out.WaitFor(t, at, "agent_run                 kind=continue")
	if r := wait(t, done); r.err != nil {
		t.Fatal(r.err)
	}
}
