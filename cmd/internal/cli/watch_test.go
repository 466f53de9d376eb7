//go:build unix

package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"
	"github.com/ohmypi/retryfsm/internal/testkit"
)

// watchHelperEnv makes TestWatchHelperProcess run retrysim with the
// JSON-encoded arguments it holds (the pty test runs the command in a
// process of its own, on a terminal).
const watchHelperEnv = "RETRYSIM_TEST_HELPER_ARGS"

// TestWatchHelperProcess is not a test: it is the retrysim process of the
// pseudo-terminal tests, and does nothing otherwise.
func TestWatchHelperProcess(t *testing.T) {
	raw := os.Getenv(watchHelperEnv)
	if raw == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		os.Exit(99)
	}
	os.Exit(realMain(args, os.Stdout, os.Stderr))
}

// helperCommand returns a command running "retrysim args..." in a new
// process.
func helperCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	enc, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchHelperProcess$")
	cmd.Env = append(os.Environ(), watchHelperEnv+"="+string(enc))
	return cmd
}

func writeScenario(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "watched.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestWatchWithoutTerminal(t *testing.T) {
	ok := writeScenario(t, `
settings: {maxRetries: 3, baseDelayMs: 0}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
expect:
  events:
    - {type: auto_retry_end, success: true, attempt: 1}
`)
	failing := writeScenario(t, `
settings: {maxRetries: 0}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
expect:
  final: {state: backoff}
`)
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err []string // substrings
	}{
		{"pass", []string{"run", "--watch", ok}, exitOK, []string{
			"auto_retry_start  attempt=1 maxAttempts=3 delayMs=0",
			"auto_retry_end    success=true attempt=1",
			"final             state=idle",
			"PASS  watched  (" + ok + ")\n1 passed, 0 failed\n"}, nil},
		{"flag after the file", []string{"run", ok, "--watch"}, exitOK, []string{"PASS  watched"}, nil},
		{"fail", []string{"run", "--watch", failing}, exitFail, []string{
			"Retry failed after 0 attempts: 529 overloaded_error\n",
			"FAIL  watched  (" + failing + ")\n    ",
			"expect.final.state",
			"0 passed, 1 failed\n"}, nil},
		{"standard input", []string{"run", "--watch", "-"}, exitUsage, nil, []string{"retrysim run: --watch reads keys from standard input: give a scenario file, not -"}},
		{"no file", []string{"run", "--watch"}, exitUsage, nil, []string{"--watch plays exactly one scenario file, got 0 arguments"}},
		{"two files", []string{"run", "--watch", ok, failing}, exitUsage, nil, []string{"got 2 arguments"}},
		{"missing file", []string{"run", "--watch", filepath.Join(t.TempDir(), "nope.yaml")}, exitUsage, nil, []string{"nope.yaml"}},
		{"unknown variant", []string{"run", "--watch", "--variant", "nope", ok}, exitUsage, nil, []string{"--variant"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := realMain(tt.args, &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errOut.String())
			}
			for _, w := range tt.out {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.err {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if strings.Contains(out.String(), "\x1b") {
				t.Errorf("escape sequences without a terminal:\n%q", out.String())
			}
			checkWidth(t, out.String())
		})
	}
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// checkWidth fails the test for a line of out (a terminal's output: ANSI
// sequences left out, a carriage return starting the line again) wider
// than 80 characters.
func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(ansiRE.ReplaceAllString(out, ""), "\n") {
		for _, seg := range strings.Split(line, "\r") {
			if n := utf8.RuneCountInString(seg); n > 80 {
				t.Errorf("a line of %d characters (over 80): %q", n, seg)
			}
		}
	}
}

// lineTime returns the time column of the first line of out that
// contains want.
func lineTime(t *testing.T, out, want string) string {
	t.Helper()
	for _, line := range strings.Split(ansiRE.ReplaceAllString(out, ""), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if i := strings.LastIndexByte(line, '\r'); i >= 0 { // what a loader shared the line with
			line = line[i+1:]
		}
		if strings.Contains(line, want) {
			return strings.Fields(line)[0]
		}
	}
	t.Fatalf("no line with %q:\n%s", want, out)
	return ""
}

func TestRunHelpMentionsWatch(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := realMain([]string{"run", "--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, w := range []string{"--watch", "Retrying (1/3) in 2s… (esc to cancel)", "exit with\nstatus 130", "the final line has the time of the cancel"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("run --help lacks %q:\n%s", w, out.String())
		}
	}
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the process did not exit within 30s")
	}
	return -1
}

// startOnTerminal runs "retrysim args..." on a new pseudo-terminal.
func startOnTerminal(t *testing.T, args ...string) (*exec.Cmd, *os.File, *testkit.Screen) {
	t.Helper()
	cmd := helperCommand(t, args...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("starting on a pseudo-terminal: %v", err)
	}
	screen := testkit.ReadScreen(ptmx)
	t.Cleanup(func() {
		ptmx.Close()
		<-screen.Done()
	})
	return cmd, ptmx, screen
}

// TestWatchOnTerminalEscCancelsTheRetry: Esc during the loader cancels
// the retry and ends the play at that instant: the final line has the
// time of the cancel (not the cancelled backoff's), the expectations are
// shown for information, and the exit status is 0, even though they do
// not hold; every line fits 80 columns.
func TestWatchOnTerminalEscCancelsTheRetry(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	// A long backoff: only Esc ends it before the test's deadlines. A long
	// error message and a get_state response: lines to wrap.
	path := writeScenario(t, `
settings: {maxRetries: 3, baseDelayMs: 600000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error: the servers are overloaded right now, please try again in a few moments"}
  - {stopReason: stop}
actions:
  - {at: 0, do: get_state, id: s1}
expect:
  events:
    - {type: auto_retry_end, success: true}
`)
	cmd, ptmx, screen := startOnTerminal(t, "run", "--watch", path)
	at := screen.WaitFor(t, 0, "auto_retry_start")
	// The loader appears, then counts down on the real clock.
	at = screen.WaitFor(t, at, "Retrying (1/3) in 600s… (esc to cancel)")
	at = screen.WaitFor(t, at, "Retrying (1/3) in 599s… (esc to cancel)")
	if _, err := ptmx.Write([]byte{0x1b}); err != nil {
		t.Fatal(err)
	}
	at = screen.WaitFor(t, at, "abort_retry")
	at = screen.WaitFor(t, at, "Retry failed after 1 attempts: Retry cancelled")
	// The cancelled backoff's timer is not waited for.
	screen.WaitFor(t, at, "CANCELLED  watched")
	if code := exitCode(t, cmd); code != exitOK {
		t.Fatalf("exit %d, want 0; screen:\n%s", code, screen.String())
	}
	<-screen.Done()
	out := screen.String()
	if strings.Count(out, "command=abort_retry") != 1 {
		t.Errorf("want one abort_retry:\n%s", out)
	}
	cancel, final := lineTime(t, out, "command=abort_retry"), lineTime(t, out, " final ")
	if cancel != final || final == "600.000s" {
		t.Errorf("the final line's time %s is not the cancel's, %s", final, cancel)
	}
	words := strings.Join(strings.Fields(ansiRE.ReplaceAllString(out, "")), " ") // lines wrapped anywhere
	for _, w := range []string{
		"CANCELLED watched (" + path + ") cancelled at " + cancel + " (Esc: abort_retry); the expectations, for information: " + path + ":10:7: expect.events[0]",
		"0 passed, 0 failed, 1 cancelled",
	} {
		if !strings.Contains(words, w) {
			t.Errorf("the screen lacks %q:\n%s", w, out)
		}
	}
	checkWidth(t, out)
	// The loader line was cleared before the next line, and the cursor is
	// shown again.
	if !strings.Contains(out, "\r\x1b[2K") || !strings.Contains(out[strings.LastIndex(out, "\x1b[?25l"):], "\x1b[?25h") {
		t.Errorf("loader not cleared or cursor left hidden:\n%q", out)
	}
}

// TestWatchOnTerminalCtrlC: Ctrl-C aborts the call in flight and ends the
// play at that instant (the later action is not played), the
// expectations shown for information, exit status 0.
func TestWatchOnTerminalCtrlC(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	// A long model call, and an action much later: the scenario is not over
	// at the Ctrl-C.
	path := writeScenario(t, `
turns:
  - {stopReason: stop, durationMs: 600000}
actions:
  - {at: 1200000, do: get_state}
expect:
  final: {state: idle}
`)
	cmd, ptmx, screen := startOnTerminal(t, "run", "--watch", path)
	at := screen.WaitFor(t, 0, "agent_run")
	// Esc without a loader does nothing.
	if _, err := ptmx.Write([]byte{0x1b}); err != nil {
		t.Fatal(err)
	}
	if _, err := ptmx.Write([]byte{0x03}); err != nil { // Ctrl-C: abort
		t.Fatal(err)
	}
	at = screen.WaitFor(t, at, `"stopReason":"aborted"`)
	at = screen.WaitFor(t, at, "command=abort")
	screen.WaitFor(t, at, "CANCELLED  watched")
	if code := exitCode(t, cmd); code != exitOK {
		t.Fatalf("exit %d, want 0; screen:\n%s", code, screen.String())
	}
	<-screen.Done()
	out := screen.String()
	if strings.Contains(out, "command=abort_retry") || strings.Contains(out, "get_state") {
		t.Errorf("Esc acted without a loader, or the later action was played:\n%s", out)
	}
	if cancel, final := lineTime(t, out, "command=abort "), lineTime(t, out, " final "); cancel != final {
		t.Errorf("the final line's time %s is not the Ctrl-C's, %s", final, cancel)
	}
	if !strings.Contains(out, "(Ctrl-C: abort); the expectations hold all the same") {
		t.Errorf("no note on the expectations:\n%s", out)
	}
	checkWidth(t, out)
}

func TestWatchOnTerminalTwoChains(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	// Short real backoffs: the loader stops when the retried run starts,
	// and comes back for the next attempt.
	path := writeScenario(t, `
settings: {maxRetries: 3, baseDelayMs: 200}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "503 service unavailable"}
  - {stopReason: stop}
expect:
  events:
    - {type: auto_retry_end, success: true, attempt: 2}
`)
	cmd, _, screen := startOnTerminal(t, "run", "--watch", path)
	at := screen.WaitFor(t, 0, "Retrying (1/3) in 0s… (esc to cancel)")
	at = screen.WaitFor(t, at, "kind=continue")
	at = screen.WaitFor(t, at, "Retrying (2/3) in 0s… (esc to cancel)")
	at = screen.WaitFor(t, at, "auto_retry_end    success=true attempt=2")
	screen.WaitFor(t, at, "PASS  watched")
	if code := exitCode(t, cmd); code != exitOK {
		t.Fatalf("exit %d; screen:\n%s", code, screen.String())
	}
}
