//go:build unix

package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

// longBackoff is a chain left open for ten minutes.
const longBackoff = `
settings: {maxRetries: 3, baseDelayMs: 600000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`

// TestRPCSignalEndsTheSessionCleanly: SIGINT, SIGTERM and SIGHUP end
// "retrysim rpc" like the end of the input, with an abort in both modes
// (virtual time does not run on): the open chain ends, the prompt
// resolves, the output is flushed and the exit status is 0. They used to
// kill it with the chain left open.
func TestRPCSignalEndsTheSessionCleanly(t *testing.T) {
	path := writeScenario(t, longBackoff)
	for _, virtual := range []bool{false, true} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			t.Run(fmt.Sprintf("%v virtual=%v", sig, virtual), func(t *testing.T) {
				args := []string{"rpc", "--scenario", path}
				if virtual {
					args = append(args, "--virtual")
				}
				cmd, stdin, screen, stderr, at := rpcInBackoff(t, args...)
				defer stdin.Close()
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				// Read the output to its end before Wait, which closes the
				// pipe (exec.Cmd.StdoutPipe).
				select {
				case <-screen.Done():
				case <-time.After(30 * time.Second):
					t.Fatal("the process did not end within 30s")
				}
				if code := exitCode(t, cmd); code != exitOK {
					t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr.String(), screen.String())
				}
				rest := strings.Split(strings.TrimSpace(screen.String()[at:]), "\n")[1:]
				t0 := ""
				if virtual {
					t0 = `"t":0,`
				}
				want := []string{
					`{` + t0 + `"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
					`{` + t0 + `"type":"prompt_resolved","prompt":1}`,
				}
				if strings.Join(rest, "\n") != strings.Join(want, "\n") {
					t.Errorf("after the signal:\n%s\nwant:\n%s", strings.Join(rest, "\n"), strings.Join(want, "\n"))
				}
				if !strings.Contains(stderr.String(), "ending the session") {
					t.Errorf("stderr: %q", stderr.String())
				}
			})
		}
	}
}

// TestRPCSecondSIGINTExitsAtOnce: a second SIGINT exits with 130 even when
// the server is stuck. A chain is open, so the first SIGINT's abort has
// events to write, and the test fills the server's stdout pipe first (it
// keeps a copy of the write end), so that writing them blocks.
func TestRPCSecondSIGINTExitsAtOnce(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	path := writeScenario(t, longBackoff)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd := helperCommand(t, "rpc", "--virtual", "--scenario", path)
	cmd.Stdout = w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderr := testkit.ReadScreen(stderrPipe)
	if _, err := io.WriteString(stdin, `{"id":"p","type":"prompt","message":"hi"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(r)
	for {
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"type":"auto_retry_start"`) {
			break
		}
	}
	fillPipe(t, w) // the abort's auto_retry_end cannot be written now
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stderr.WaitFor(t, 0, "ending the session")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
}

// fillPipe writes to w until the pipe is full. The write end is made
// non-blocking for that, then blocking again (the child shares it, and is
// idle meanwhile).
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var werr error
	if err := rc.Control(func(fd uintptr) {
		if werr = syscall.SetNonblock(int(fd), true); werr != nil {
			return
		}
		defer syscall.SetNonblock(int(fd), false)
		for {
			if _, err := syscall.Write(int(fd), buf); err != nil {
				if err != syscall.EAGAIN {
					werr = err
				}
				return
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
}

// TestRPCSignalWinsOverEOFInTheProcess: the real binary, on virtual time,
// gets SIGTERM and then the end of its input at once (the signal sent
// first): the signal wins, as SPEC §10 promises, so virtual time does not
// run on to the pending retry. The in-process test
// (TestServeVirtualSignalWinsOverEOF) cannot see the delay between the
// signal's arrival and its cancelling the session; under load the end of
// input used to win in about half of the runs.
func TestRPCSignalWinsOverEOFInTheProcess(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	path := writeScenario(t, longBackoff)
	want := strings.Join([]string{
		`{"t":0,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`,
		`{"t":0,"type":"prompt_resolved","prompt":1}`,
	}, "\n")
	for round := range 12 {
		cmd, stdin, screen, stderr, at := rpcInBackoff(t, "rpc", "--scenario", path, "--virtual")
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		stdin.Close()
		select {
		case <-screen.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("the process did not end within 30s")
		}
		if code := exitCode(t, cmd); code != exitOK {
			t.Fatalf("round %d: exit %d, want 0; stderr:\n%s", round, code, stderr.String())
		}
		rest := strings.Join(strings.Split(strings.TrimSpace(screen.String()[at:]), "\n")[1:], "\n")
		if rest != want {
			t.Fatalf("round %d: after SIGTERM and the end of input:\n%s\nwant (the signal wins):\n%s", round, rest, want)
		}
	}
}

// rpcInBackoff starts "retrysim ARGS" (an rpc command on longBackoff),
// sends a prompt and waits for its auto_retry_start: the chain is then in
// its backoff. at is that line's offset in the screen.
func rpcInBackoff(t *testing.T, args ...string) (cmd *exec.Cmd, stdin io.WriteCloser, screen *testkit.Screen, stderr *strings.Builder, at int) {
	t.Helper()
	cmd = helperCommand(t, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	screen = testkit.ReadScreen(stdout)
	if _, err := io.WriteString(stdin, `{"id":"p","type":"prompt","message":"hi"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, screen, stderr, screen.WaitFor(t, 0, `"type":"auto_retry_start"`)
}
