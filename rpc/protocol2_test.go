package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestProtocol2: the newer protocol's shape (issue 24): a ready line
// first, errorId on every auto_retry_start, completedAt and duration on an
// assistant message_end, and prompt_result (the prompt's id, status,
// the error) then session_settled where prompt_resolved was; the other
// lines as protocol 1's.
func TestProtocol2(t *testing.T) {
	out := serveProtocol(t, omp18Abort, 2, abortAtAttempt2)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var first struct {
		Type                      string
		ProtocolVersion           int
		SupportedProtocolVersions []int
		MaxFrameBytes             int
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Type != "ready" || first.ProtocolVersion != 2 ||
		len(first.SupportedProtocolVersions) != 2 || first.MaxFrameBytes != rpc.MaxLineSize {
		t.Errorf("first line %s (%v)", lines[0], err)
	}
	want := []string{
		`{"t":600,"type":"prompt_result","id":"p1","agentInvoked":true,"status":"error","sessionSettled":true,"error":"Retry cancelled"}`,
		`{"t":600,"type":"session_settled"}`,
	}
	if got := lines[len(lines)-2:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("last lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Count(out, `"errorId":"err-`) != 2 || !strings.Contains(out, `"delayMs":891,`) || !strings.Contains(out, `"errorId":"err-2"}`) {
		t.Errorf("auto_retry_start lines:\n%s", out)
	}
	if !strings.Contains(out, `"timestamp":1771200000445,"completedAt":1771200000445,"duration":0}`) || strings.Contains(out, "prompt_resolved") {
		t.Errorf("message_end or prompt_resolved:\n%s", out)
	}
	// Without the new lines and fields, the lines are protocol 1's.
	one := serveProtocol(t, omp18Abort, 1, abortAtAttempt2)
	stripped := strings.Join(lines[1:len(lines)-2], "\n") + "\n"
	for _, f := range []string{`,"errorId":"err-1"`, `,"errorId":"err-2"`} {
		stripped = strings.ReplaceAll(stripped, f, "")
	}
	for _, ts := range []string{"1771200000000", "1771200000445"} {
		stripped = strings.ReplaceAll(stripped, `,"completedAt":`+ts+`,"duration":0`, "")
	}
	if wantOne := strings.TrimSuffix(one, `{"t":600,"type":"prompt_resolved","prompt":1}`+"\n"); stripped != wantOne {
		t.Errorf("protocol 2 without its additions\n%s\nprotocol 1\n%s", stripped, wantOne)
	}

	ok := serveProtocol(t, filepath.Join("..", "scenarios", "profiles", "pi-ai-anthropic", "529-529-ok.yaml"), 2, `{"id":"p7","type":"prompt","message":"hi"}`+"\n")
	if !strings.Contains(ok, `{"t":1500,"type":"prompt_result","id":"p7","agentInvoked":true,"status":"ok","sessionSettled":true}`+"\n"+`{"t":1500,"type":"session_settled"}`) ||
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
