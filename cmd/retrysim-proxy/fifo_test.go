//go:build unix

package main

import (
	"bufio"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScriptFIFOStops: a script that is a named pipe with no writer is
// waited for, saying so, and SIGTERM stops the wait: exit status 0 (the
// first SIGTERM said "ending the session" and did nothing before).
func TestScriptFIFOStops(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "script.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	cmd := exec.Command(binary(t), "--listen", "127.0.0.1:0", fifo)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() }) // a bound, not a pause
	defer timer.Stop()
	lines := bufio.NewScanner(stderr)
	var said []string
	for lines.Scan() {
		said = append(said, lines.Text())
		if strings.Contains(lines.Text(), "a named pipe: waiting for its writer") {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			break
		}
	}
	for lines.Scan() {
		said = append(said, lines.Text())
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if err != nil || !strings.Contains(strings.Join(said, "\n"), "stopped before serving: "+fifo+" was not read") {
		t.Errorf("exit %v, stderr %q; want 0 and the stop", err, said)
	}
}
