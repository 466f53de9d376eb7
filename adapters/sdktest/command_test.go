//go:build unix

package sdktest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ohmypi/retryfsm/policy"
)

// built is retrysim and retrysim-proxy, built once per test binary into
// one folder (retrysim finds retrysim-proxy beside itself); TestMain
// removes it.
var built struct {
	once sync.Once
	dir  string
	err  error
}

// buildRetrysim builds cmd/retrysim and cmd/retrysim-proxy in the root
// module (../..) and returns retrysim's path.
func buildRetrysim(t *testing.T) string {
	t.Helper()
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "retrysim-sdktest-"); built.err != nil {
			return
		}
		// retrysim in the root module, retrysim-proxy in its own
		for _, dir := range []string{filepath.Join("..", "..", "cmd", "retrysim"), filepath.Join("..", "..", "cmd", "retrysim-proxy")} {
			cmd := exec.Command(goCmd, "build", "-o", built.dir, ".")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				built.err = errors.New(dir + ": " + err.Error() + "\n" + string(out))
				return
			}
		}
	})
	if built.err != nil {
		t.Fatalf("building retrysim: %v", built.err)
	}
	return filepath.Join(built.dir, "retrysim")
}

// runRetrysim runs the built retrysim with args and returns its exit code
// and outputs.
func runRetrysim(t *testing.T, retrysim string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(retrysim, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errOut.String()
}

const proxyScenario = `
turns:
  - {stopReason: error, errorMessage: "Overloaded", status: 529, headers: {retry-after-ms: "1"}}
  - {stopReason: error, errorMessage: "Overloaded", status: 529, headers: {retry-after-ms: "2"}}
  - {stopReason: stop}
`

// TestProxyCommandLoop is the README's loop: "retrysim proxy" on loopback
// serves a scenario to the real anthropic-sdk-go (its own retries on),
// SIGTERM stops it with exit status 0 and the wire log whole, and
// "audit --wire" finds the log fitting anthropic-sdk-go (exit 0) and not
// pi (exit 1).
func TestProxyCommandLoop(t *testing.T) {
	retrysim := buildRetrysim(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(script, []byte(proxyScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "wire.jsonl")
	cmd := exec.Command(retrysim, "proxy", "--listen", "127.0.0.1:0", "--log", logPath, script)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() {
		t.Fatalf("no output from the proxy: %v", sc.Err())
	}
	addr := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+) `).FindStringSubmatch(sc.Text())
	if addr == nil {
		t.Fatalf("first line %q names no loopback address", sc.Text())
	}
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()

	client := anthropic.NewClient(option.WithBaseURL(addr[1]), option.WithAPIKey("sk-test"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-sonnet-4-5", MaxTokens: 16,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	if err != nil {
		t.Fatalf("the SDK's call through the proxy: %v", err)
	}
	if len(msg.Content) != 1 || msg.Content[0].Text == "" {
		t.Errorf("answer %+v", msg.Content)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	tail := <-rest
	if err := cmd.Wait(); err != nil {
		t.Fatalf("proxy after SIGTERM: %v (stderr %q), want exit status 0", err, tail)
	}
	if !strings.Contains(tail, "3 requests served") {
		t.Errorf("stderr %q, want 3 requests served", tail)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "\n"); n != 3 {
		t.Fatalf("wire log has %d lines, want 3:\n%s", n, log)
	}

	code, out, errOut := runRetrysim(t, retrysim, "audit", "--wire", "--profile", "anthropic-sdk-go", "--slack", "5000", logPath)
	if code != 0 || !strings.Contains(out, "audit --wire: clean in 1 log (3 lines: 3 requests, 0 skipped, 0 bad; 1 call, 2 retries; profile anthropic-sdk-go); best fit: ") {
		t.Errorf("audit under anthropic-sdk-go: exit %d, %q %q", code, out, errOut)
	}
	if !strings.Contains(out, "anthropic-sdk-go") || strings.Contains(out, "best fit: omp-2026-02") {
		t.Errorf("best fit line %q, want anthropic-sdk-go among the best and not the default", out)
	}
	code, out, _ = runRetrysim(t, retrysim, "audit", "--wire", "--json", "--profile", "anthropic-sdk-go", "--slack", "5000", logPath)
	var sum struct {
		Type, Profile            string
		Events, Chains, Findings int
		Fits                     []struct {
			Profile  string
			Findings int
		}
		Best []string
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &sum); err != nil || code != 0 || sum.Type != "summary" || sum.Events != 3 ||
		sum.Chains != 1 || len(sum.Fits) != len(policy.Profiles()) || !slices.Contains(sum.Best, "anthropic-sdk-go") {
		t.Errorf("audit --wire --json: exit %d, %q (%v)", code, out, err)
	}
	code, out, _ = runRetrysim(t, retrysim, "audit", "--wire", "--profile", "pi", logPath)
	if code != 1 || !strings.Contains(out, ":2: wire-wait: retry 1 waited") || !strings.Contains(out, "2 findings in 1 log") {
		t.Errorf("audit under pi: exit %d, %q; want the two waits reported", code, out)
	}
}
