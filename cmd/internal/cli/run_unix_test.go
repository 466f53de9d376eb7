//go:build unix

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runGuarded runs realMain in a goroutine. When it has not returned within
// a minute (it blocks on a named pipe), unblock writes to fifo (opening and
// closing it for writing, which ends the reader's wait) and the test fails.
func runGuarded(t *testing.T, fifo string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- realMain(args, &out, &errOut) }()
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	select {
	case code = <-done:
	case <-guard.C:
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatalf("retrysim %s blocked on the named pipe %s", strings.Join(args, " "), fifo)
	}
	return code, out.String(), errOut.String()
}

// TestRunSkipsFIFOInDirectory: a named pipe called *.yaml in a directory is
// skipped with a warning instead of blocking the run forever.
func TestRunSkipsFIFOInDirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": passScenario})
	fifo := filepath.Join(dir, "b.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runGuarded(t, fifo, "run", dir)
	if code != exitOK || lastLine(out) != "1 passed, 0 failed" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if want := "retrysim run: warning: " + fifo + ": skipped: a named pipe, not a regular file\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
}

// TestRunReadsExplicitPathAsGiven: a path given by name is read whatever it
// is: a named pipe (as from a shell's <(...)) and a regular file with a
// name that is not a scenario name.
func TestRunReadsExplicitPathAsGiven(t *testing.T) {
	dir := writeFiles(t, map[string]string{"scenario.txt": passScenario})
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- os.WriteFile(fifo, []byte(passScenario), 0o644) }()
	code, out, errOut := runMain(t, "run", fifo, filepath.Join(dir, "scenario.txt"))
	// If the run did not read the pipe, the writer still waits for a
	// reader: give it one so that it ends.
	if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		defer r.Close()
	}
	if err := <-wrote; err != nil {
		t.Errorf("writing the pipe: %v", err)
	}
	if code != exitOK || lastLine(out) != "2 passed, 0 failed" || errOut != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "PASS  passing  ("+fifo+")\n") {
		t.Errorf("stdout lacks the pipe's PASS line:\n%s", out)
	}
}
