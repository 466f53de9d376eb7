package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// rpcSession runs "retrysim rpc args..." in-process with stdin as input.
func rpcSession(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c := lookup("rpc")
	if c == nil {
		t.Fatal("no rpc command registered")
	}
	var out, errOut bytes.Buffer
	fs := newFlagSet(c, &errOut)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		t.Fatalf("flags %q: %v", args, err)
	}
	code = runRPC(fs, pos, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRPCVirtualSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(`
settings: {maxRetries: 2, baseDelayMs: 1000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
actions:
  - {at: 0, do: abort}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	input := `{"id":"1","type":"prompt","message":"hi"}
{"id":"2","type":"advance","ms":400}
{"id":"3","type":"abort_retry"}
oops
`
	code, out, errOut := rpcSession(t, input, "--virtual", "--scenario", path)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	want := `{"id":"1","type":"response","command":"prompt","success":true,"data":{"prompt":1}}
{"t":0,"type":"agent_start"}
{"t":0,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000000},"model":"claude-sonnet-4-5"}
{"t":0,"type":"agent_end","messages":[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1771200000000},{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error","content":[],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000000}]}
{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":2,"delayMs":1000,"errorMessage":"529 overloaded_error"}
{"id":"2","type":"response","command":"advance","success":true,"data":{"t":400}}
{"id":"3","type":"response","command":"abort_retry","success":true}
{"t":400,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}
{"t":400,"type":"prompt_resolved","prompt":1}
{"type":"response","command":"parse","success":false,"error":"Failed to parse command: invalid JSON: invalid character 'o' looking for beginning of value"}
`
	if out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

func TestRPCWithoutScenario(t *testing.T) {
	// Every model call succeeds; the real clock, and the end of the input
	// (an abort of nothing) ends the session.
	code, out, errOut := rpcSession(t, `{"type":"prompt","message":"hi"}`+"\n")
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	// On the real clock a message's timestamp is the scenario's epoch plus
	// the time since the start: checked, then replaced by T.
	out = realTimestamps(t, out)
	want := `{"type":"response","command":"prompt","success":true,"data":{"prompt":1}}
{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"(simulated)"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":T},"model":"claude-sonnet-4-5"}
{"type":"agent_end","messages":[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":T},{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"(simulated)"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":T}]}
{"type":"prompt_resolved","prompt":1}
`
	if out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

// realTimestamps checks that every "timestamp" of out is the default
// epoch (1771200000000) plus at most a minute, and replaces it by T.
func realTimestamps(t *testing.T, out string) string {
	t.Helper()
	return regexp.MustCompile(`"timestamp":\d+`).ReplaceAllStringFunc(out, func(m string) string {
		ms, err := strconv.ParseInt(strings.TrimPrefix(m, `"timestamp":`), 10, 64)
		if err != nil || ms < 1771200000000 || ms > 1771200000000+60000 {
			t.Errorf("%s: not the epoch plus the time since the start", m)
		}
		return `"timestamp":T`
	})
}

// TestRPCOriginalLaunchFlags: the original's RpcClient starts the agent
// with --mode rpc, --provider NAME and --model ID: they are accepted, and
// provider and model become the session's (the messages and get_state name
// them, with the provider's API); the reply's usage reaches its message.
func TestRPCOriginalLaunchFlags(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(path, []byte(`
turns:
  - {stopReason: error, errorMessage: "usage_limit_reached, retry-after: 30", switchModel: true}
  - {stopReason: stop, usage: {input: 1200, cacheRead: 300}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	input := `{"id":"p","type":"prompt","message":"hi"}
{"id":"s","type":"get_state"}
`
	code, out, errOut := rpcSession(t, input, "--mode", "rpc", "--provider", "openai", "--model", "gpt-5", "--virtual", "--scenario", path)
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	want := `{"id":"p","type":"response","command":"prompt","success":true,"data":{"prompt":1}}
{"t":0,"type":"agent_start"}
{"t":0,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"usage_limit_reached, retry-after: 30","content":[],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000000},"model":"gpt-5"}
{"t":0,"type":"agent_end","messages":[{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1771200000000},{"role":"assistant","stopReason":"error","errorMessage":"usage_limit_reached, retry-after: 30","content":[],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000000}]}
{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0,"errorMessage":"usage_limit_reached, retry-after: 30"}
{"t":0,"type":"agent_start"}
{"t":0,"type":"message_end","message":{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"(simulated)"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":1200,"output":0,"cacheRead":300,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000000},"model":"gpt-5"}
{"t":0,"type":"auto_retry_end","success":true,"attempt":1}
{"t":0,"type":"agent_end","messages":[{"role":"assistant","stopReason":"stop","content":[{"type":"text","text":"(simulated)"}],"api":"openai-responses","provider":"openai","model":"gpt-5","usage":{"input":1200,"output":0,"cacheRead":300,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000000}]}
{"t":0,"type":"prompt_resolved","prompt":1}
{"id":"s","type":"response","command":"get_state","success":true,"data":{"isStreaming":false,"messageCount":2,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":false,"retryAttempt":0,"retryState":"idle","nextRetryAt":null,"profile":"omp-2026-02","model":{"id":"gpt-5","provider":"openai","api":"openai-responses"},"thinkingLevel":"off","isCompacting":false,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}
`
	if out != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want)
	}
}

func TestRPCUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("turns: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"positional argument", []string{"rpc", "file.yaml"}, "unexpected arguments: file.yaml"},
		{"missing scenario", []string{"rpc", "--scenario", filepath.Join(dir, "nope.yaml")}, "nope.yaml"},
		{"invalid scenario", []string{"rpc", "--scenario", bad}, "bad.yaml"},
		{"scenario is a directory", []string{"rpc", "--scenario", dir}, "is a directory"},
		{"unknown variant", []string{"rpc", "--variant", "nope"}, "--variant"},
		{"unknown flag", []string{"rpc", "--bogus"}, "flag provided but not defined: -bogus"},
		{"another mode", []string{"rpc", "--mode", "json"}, "retrysim rpc: --mode json: only --mode rpc is served"},
		{"empty model", []string{"rpc", "--model", ""}, "retrysim rpc: --model: empty (give the model's id"},
		{"empty provider", []string{"rpc", "--provider="}, "retrysim rpc: --provider: empty (give the provider's name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := realMain(tt.args, &out, &errOut)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errOut.String())
			}
			if out.Len() != 0 {
				t.Errorf("stdout not empty:\n%s", out.String())
			}
		})
	}
}

func TestRPCHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := realMain([]string{"rpc", "--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, w := range []string{"Usage: retrysim rpc [flags]", "--scenario FILE", "--virtual", "--variant NAME", `{"type":"advance","ms":N}`,
		"--mode MODE", "--provider NAME", "--model ID", "set_auto_compaction {enabled}"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("rpc --help lacks %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	realMain([]string{"--help"}, &out, &errOut)
	if !strings.Contains(out.String(), "  rpc ") {
		t.Errorf("the command list lacks rpc:\n%s", out.String())
	}
}

// failingStdin returns its text, then err.
type failingStdin struct {
	text string
	err  error
}

func (f *failingStdin) Read(p []byte) (int, error) {
	if f.text == "" {
		return 0, f.err
	}
	n := copy(p, f.text)
	f.text = f.text[n:]
	return n, nil
}

// TestRPCStdinReadErrorReportedOnce: a failed read of stdin is reported on
// one line with one prefix (it used to be logged, then printed again as
// "retrysim rpc: rpc: ..."), after the session ends with an abort.
func TestRPCStdinReadErrorReportedOnce(t *testing.T) {
	for _, virtual := range []bool{false, true} {
		c := lookup("rpc")
		var out, errOut bytes.Buffer
		fs := newFlagSet(c, &errOut)
		args := []string{}
		if virtual {
			args = append(args, "--virtual")
		}
		pos, err := parseInterspersed(fs, args)
		if err != nil {
			t.Fatal(err)
		}
		stdin := &failingStdin{text: `{"id":"s","type":"get_state"}` + "\n", err: errors.New("boom")}
		code := runRPC(fs, pos, stdin, &out, &errOut)
		if code != exitFail {
			t.Errorf("virtual=%v: exit %d, want %d", virtual, code, exitFail)
		}
		if got, want := errOut.String(), "retrysim rpc: reading the input: boom\n"; got != want {
			t.Errorf("virtual=%v: stderr %q, want %q", virtual, got, want)
		}
		if !strings.Contains(out.String(), `"id":"s"`) {
			t.Errorf("virtual=%v: the command before the error was not answered:\n%s", virtual, out.String())
		}
	}
}
