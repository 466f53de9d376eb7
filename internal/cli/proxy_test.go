//go:build unix

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ohmypi/retryfsm/policy"
)

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
	companionOnPath(t, proxyCommand)
	dir := t.TempDir()
	script := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(script, []byte(proxyScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "wire.jsonl")
	cmd := helperCommand(t, "proxy", "--listen", "127.0.0.1:0", "--log", logPath, script)
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

	code, out, errOut := runMain(t, "audit", "--wire", "--profile", "anthropic-sdk-go", "--slack", "5000", logPath)
	if code != 0 || !strings.Contains(out, "audit --wire: clean in 1 log (3 lines: 3 requests, 0 skipped, 0 bad; 1 call, 2 retries; profile anthropic-sdk-go); best fit: ") {
		t.Errorf("audit under anthropic-sdk-go: exit %d, %q %q", code, out, errOut)
	}
	if !strings.Contains(out, "anthropic-sdk-go") || strings.Contains(out, "best fit: omp-2026-02") {
		t.Errorf("best fit line %q, want anthropic-sdk-go among the best and not the default", out)
	}
	code, out, _ = runMain(t, "audit", "--wire", "--json", "--profile", "anthropic-sdk-go", "--slack", "5000", logPath)
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
	code, out, _ = runMain(t, "audit", "--wire", "--profile", "pi", logPath)
	if code != 1 || !strings.Contains(out, ":2: wire-wait: retry 1 waited") || !strings.Contains(out, "2 findings in 1 log") {
		t.Errorf("audit under pi: exit %d, %q; want the two waits reported", code, out)
	}
}

// TestProxyCommandErrors: a bad script, address or flag is exit status 2
// with an error saying where (the script and address found by
// retrysim-proxy, which "retrysim proxy" runs, the flags before that).
func TestProxyCommandErrors(t *testing.T) {
	companionOnPath(t, proxyCommand)
	dir := writeFiles(t, map[string]string{
		"bad.yaml":   "faults:\n  - {request: 1, kind: stream-cutt}\n",
		"key.yaml":   "fualts: []\n",
		"turns.yaml": "turns:\n  - {stopReason: eror}\n",
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", filepath.Join(dir, "bad.yaml")}, `bad.yaml:2:24: faults[0].kind: "stream-cutt" is not a fault (allowed: latency, slow-body, stream-cut, sse-error, drop); did you mean stream-cut?`},
		{[]string{"proxy", filepath.Join(dir, "key.yaml")}, `key.yaml:1:1: unknown key "fualts" (allowed: scenario, fleet, repeat, text, faults); did you mean faults?`},
		{[]string{"proxy", filepath.Join(dir, "turns.yaml")}, `turns.yaml:2:18: turns[0].stopReason`},
		{[]string{"proxy", "--listen", "256.0.0.1:1", filepath.Join(dir, "key.yaml")}, `unknown key`},
		{[]string{"proxy", "--listen", "nonsense", "--max-body", "10"}, `--listen:`},
		{[]string{"proxy", "--max-body", "0"}, `--max-body: "0" is not a positive number of bytes`},
		{[]string{"proxy", "--upstream", "ftp://x", "--listen", "127.0.0.1:0"}, `upstream "ftp://x": not an http or https URL`},
		{[]string{"proxy", "a", "b"}, `one SCRIPT at most`},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestProxyCompanionMissing: without retrysim-proxy beside retrysim or on
// $PATH, "retrysim proxy" is a usage error saying how to get it, and
// "retrysim proxy --help" and a flag error still answer (retrysim knows
// the command's flags).
func TestProxyCompanionMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := runMain(t, "proxy", "--listen", "127.0.0.1:0")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "retrysim proxy: this command is the program retrysim-proxy (so that retrysim links no HTTP server)") ||
		!strings.Contains(errOut, "go install ./cmd/retrysim-proxy") || !strings.Contains(errOut, "go run ./cmd/retrysim-proxy proxy ...") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and how to install retrysim-proxy", code, out, errOut)
	}
	code, out, _ = runMain(t, "proxy", "--help")
	if code != exitOK || !strings.HasPrefix(out, "Usage: retrysim proxy [flags] [SCRIPT]") || !strings.Contains(out, "--max-body BYTES") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	code, _, errOut = runMain(t, "proxy", "--max-body", "x")
	if code != exitUsage || !strings.Contains(errOut, `invalid value "x" for flag -max-body`) || strings.Contains(errOut, "retrysim-proxy") {
		t.Errorf("a flag error: exit %d, %q; want 2 from retrysim itself", code, errOut)
	}
}
