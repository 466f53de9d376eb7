//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/cmd/internal/cli"
)

// fullWriter fails every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestLogUnwritableStops: a wire log that cannot be written (a full
// disk) is said at once, after the request it failed on was answered, and
// stops the proxy with exit status 1 (it served on silently before).
func TestLogUnwritableStops(t *testing.T) {
	var errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- serve(ctx, &cli.ProxyRun{Listen: "127.0.0.1:0", Log: fullWriter{}, Stderr: &errOut, MaxBody: 1 << 20,
			Ready: func(addr string) {
				res, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
				if err != nil || res.StatusCode != 200 {
					t.Errorf("the request: %v %v, want it answered", res, err)
				}
				if res != nil {
					res.Body.Close()
				}
			}})
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(errOut.String(), "writing the wire log: no space left on device; stopping") {
			t.Errorf("exit %d, stderr %q; want 1 and the log's error", code, errOut.String())
		}
	case <-time.After(20 * time.Second): // a bound: it stops at once
		cancel()
		<-done
		t.Fatalf("still serving with a log that cannot be written; stderr %q", errOut.String())
	}
}

var built struct {
	once sync.Once
	path string
	err  error
}

// binary is this program built into a temporary folder, once.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "retrysim-proxy-test-")
		if err != nil {
			built.err = err
			return
		}
		built.path = filepath.Join(dir, "retrysim-proxy")
		if out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if built.err != nil {
		t.Fatalf("building retrysim-proxy: %v", built.err)
	}
	return built.path
}

// TestMain removes the built binary.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.path != "" {
		_ = os.RemoveAll(filepath.Dir(built.path))
	}
	os.Exit(code)
}

// TestStdoutClosed: with its standard output (the log) a pipe no one
// reads (retrysim-proxy | head -c 10), the proxy answers the request, says
// the log cannot be written and exits 1 (it died of SIGPIPE, silent).
func TestStdoutClosed(t *testing.T) {
	cmd := exec.Command(binary(t), "--listen", "127.0.0.1:0")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // the reader is gone
	cmd.Stdout = w
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() }) // a bound, not a pause
	defer timer.Stop()
	lines := bufio.NewScanner(stderr)
	var said []string
	next := func() string {
		if !lines.Scan() {
			return ""
		}
		said = append(said, lines.Text())
		return lines.Text()
	}
	first := next()
	addr, ok := strings.CutPrefix(first, "retrysim proxy: listening on http://")
	if !ok {
		t.Fatalf("first line %q", first)
	}
	addr, _, _ = strings.Cut(addr, " ")
	res, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil || res.StatusCode != 200 {
		t.Errorf("the request: %v %v, want it answered", res, err)
	}
	if res != nil {
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	for next() != "" {
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(strings.Join(said, "\n"), "writing the wire log: write /dev/stdout: broken pipe; stopping") {
		t.Errorf("exit %v, stderr %q; want 1 and the log's error", err, said)
	}
}
