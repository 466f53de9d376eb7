package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/scenario"
)

// serveProtocol serves the commands in to the scenario file's session on
// virtual time, speaking protocol p.
func serveProtocol(t *testing.T, file string, p int, in string) string {
	t.Helper()
	sc, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rpc.Serve(context.Background(), strings.NewReader(in), &out, rpc.Options{Scenario: sc, Virtual: true, Protocol: p}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

const abortAtAttempt2 = `{"id":"p1","type":"prompt","message":"hi"}
{"type":"advance","ms":600}
{"id":"r1","type":"abort_retry"}
`

var omp18Abort = filepath.Join("..", "scenarios", "profiles", "omp-18", "abort-retry-during-attempt-2-wait.yaml")

// TestProtocol1Unchanged: protocol 1 (and 0, the default) is today's
// protocol byte for byte: no ready line, prompt_resolved, no new fields.
func TestProtocol1Unchanged(t *testing.T) {
	def := serveProtocol(t, omp18Abort, 0, abortAtAttempt2)
	if one := serveProtocol(t, omp18Abort, 1, abortAtAttempt2); one != def {
		t.Errorf("protocol 1 differs from the default:\n%s\n%s", one, def)
	}
	for _, s := range []string{`"ready"`, `"prompt_result"`, `"session_settled"`, `"errorId"`, `"completedAt"`} {
		if strings.Contains(def, s) {
			t.Errorf("protocol 1 has %s:\n%s", s, def)
		}
	}
	if !strings.HasSuffix(def, `{"t":600,"type":"prompt_resolved","prompt":1}`+"\n") {
		t.Errorf("protocol 1 does not end with prompt_resolved:\n%s", def)
	}
}

// TestProtocol2: the newer protocol's shape, as the agent writes it (the
// lines recorded from it: TestProtocol2AsTheAgent): a ready line first
// (protocolVersion 1, the versions supported), errorId (a number) on every
// auto_retry_start and error reply, completedAt, duration and messageId on
// an assistant message_end, isTerminal and yielded on agent_end, and
// prompt_result (the prompt's id; status completed, aborted or error with
// the last reply's error as an object) then session_settled where
// prompt_resolved was; the other lines as protocol 1's.
func TestProtocol2(t *testing.T) {
	out := serveProtocol(t, omp18Abort, 2, abortAtAttempt2)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var first struct {
		Type                      string
		ProtocolVersion           int
		SupportedProtocolVersions []int
		MaxFrameBytes             int
		MaxReassembledFrameBytes  int
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Type != "ready" || first.ProtocolVersion != 1 ||
		len(first.SupportedProtocolVersions) != 2 || first.MaxFrameBytes != rpc.MaxLineSize || first.MaxReassembledFrameBytes != rpc.MaxLineSize {
		t.Errorf("first line %s (%v)", lines[0], err)
	}
	// abort_retry: the result is the last reply's error, not the chain's
	// "Retry cancelled" (the agent's)
	const e529 = `529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}`
	want := []string{
		`{"t":600,"type":"prompt_result","id":"p1","agentInvoked":true,"status":"error","sessionSettled":true,"error":{"message":"` + e529 + `","provider":"anthropic","model":"claude-sonnet-4-5","retryable":true}}`,
		`{"t":600,"type":"session_settled"}`,
	}
	if got := lines[len(lines)-2:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("last lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Count(out, `"errorId":`) != 6 || !strings.Contains(out, `"delayMs":891,`) || !strings.Contains(out, `"errorId":2}`+"\n") {
		t.Errorf("auto_retry_start lines:\n%s", out)
	}
	if !strings.Contains(out, `"timestamp":1771200000445,"errorId":2,"completedAt":1771200000445,"duration":0},"model":"claude-sonnet-4-5","messageId":"msg-2"}`) ||
		!strings.Contains(out, `],"isTerminal":true,"yielded":true}`) || strings.Contains(out, "prompt_resolved") {
		t.Errorf("message_end, agent_end or prompt_resolved:\n%s", out)
	}
	// Without the new lines and fields, the lines are protocol 1's.
	one := serveProtocol(t, omp18Abort, 1, abortAtAttempt2)
	stripped := strings.Join(lines[1:len(lines)-2], "\n") + "\n"
	for _, f := range []string{`,"errorId":1}`, `,"errorId":2}`, `,"messageId":"msg-1"`, `,"messageId":"msg-2"`, `,"isTerminal":true,"yielded":true`} {
		stripped = strings.ReplaceAll(stripped, f, strings.Repeat("}", strings.Count(f, "}")))
	}
	for i, ts := range []string{"1771200000000", "1771200000445"} {
		stripped = strings.ReplaceAll(stripped, fmt.Sprintf(`,"errorId":%d,"completedAt":%s,"duration":0`, i+1, ts), "")
	}
	if wantOne := strings.TrimSuffix(one, `{"t":600,"type":"prompt_resolved","prompt":1}`+"\n"); stripped != wantOne {
		t.Errorf("protocol 2 without its additions\n%s\nprotocol 1\n%s", stripped, wantOne)
	}

	ok := serveProtocol(t, filepath.Join("..", "scenarios", "profiles", "pi-ai-anthropic", "529-529-ok.yaml"), 2, `{"id":"p7","type":"prompt","message":"hi"}`+"\n")
	if !strings.Contains(ok, `{"t":1500,"type":"prompt_result","id":"p7","agentInvoked":true,"status":"completed","sessionSettled":true}`+"\n"+`{"t":1500,"type":"session_settled"}`) ||
		!strings.Contains(ok, `"completedAt":1771200001500,"duration":0}`) {
		t.Errorf("a prompt that succeeds:\n%s", ok)
	}
}

// TestProtocolUnknown: a version other than 1 and 2 is refused.
func TestProtocolUnknown(t *testing.T) {
	sc, err := scenario.Load(omp18Abort)
	if err != nil {
		t.Fatal(err)
	}
	err = rpc.Serve(context.Background(), strings.NewReader(""), &bytes.Buffer{}, rpc.Options{Scenario: sc, Protocol: 3})
	if err == nil || !strings.Contains(err.Error(), "rpc: protocol 3 (allowed: 1, the original's, or 2") {
		t.Errorf("protocol 3: %v", err)
	}
}
