//go:build unix

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
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
				cmd := helperCommand(t, args...)
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				defer stdin.Close()
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				var stderr strings.Builder
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				screen := readScreen(stdout)
				if _, err := io.WriteString(stdin, `{"id":"p","type":"prompt","message":"hi"}`+"\n"); err != nil {
					t.Fatal(err)
				}
				at := screen.waitFor(t, 0, `"type":"auto_retry_start"`)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				if code := exitCode(t, cmd); code != exitOK {
					t.Fatalf("exit %d, want 0; stderr:\n%s\nstdout:\n%s", code, stderr.String(), screen.String())
				}
				<-screen.done
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
// the server is stuck: its stdout is a pipe the test filled and never
// reads, so the first SIGINT's abort cannot write its events.
func TestRPCSecondSIGINTExitsAtOnce(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	fillPipe(t, w)
	cmd := helperCommand(t, "rpc", "--virtual")
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
	w.Close() // the child's copy stays
	stderr := readScreen(stderrPipe)
	// More input than a pipe holds: once it is all written, the server
	// has been reading, so its signal handling is in place.
	line := `{"type":"get_state"}` + "\n"
	input := strings.Repeat(line, 200<<10/len(line))
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(stdin, input[:100<<10])
		written <- err
		io.WriteString(stdin, input[100<<10:]) // blocks until stdin is closed
	}()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	stderr.waitFor(t, 0, "ending the session")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != exitInterrupted {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
}

// fillPipe writes to w until the pipe is full.
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		for {
			if _, err := syscall.Write(int(fd), buf); err != nil {
				if err != syscall.EAGAIN {
					werr = err
				}
				return true
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
}
