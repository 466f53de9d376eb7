package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	if !strings.Contains(out, `"timestamp":1771200000445,"errorId":2,"completedAt":1771200000445,"duration":0},"messageId":"msg-2"}`) ||
		!strings.Contains(out, `],"isTerminal":true,"yielded":true}`) || strings.Contains(out, "prompt_resolved") {
		t.Errorf("message_end, agent_end or prompt_resolved:\n%s", out)
	}
	// Without the new lines and fields, the lines are protocol 1's.
	one := serveProtocol(t, omp18Abort, 1, abortAtAttempt2)
	stripped := strings.Join(lines[1:len(lines)-2], "\n") + "\n"
	for _, f := range []string{`,"errorId":1}`, `,"errorId":2}`, `,"isTerminal":true,"yielded":true`} {
		stripped = strings.ReplaceAll(stripped, f, strings.Repeat("}", strings.Count(f, "}")))
	}
	for i := 1; i <= 2; i++ { // protocol 1's message_end names the model after the message
		stripped = strings.ReplaceAll(stripped, fmt.Sprintf(`},"messageId":"msg-%d"}`, i), `},"model":"claude-sonnet-4-5"}`)
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

// TestProtocol2AsTheAgent: protocol 2 writes what the real agent writes,
// field for field (names and JSON kinds, at every depth; ids and times
// aside), compared with the lines recorded from it (the audit's
// testdata/realagent): each line type both write has the same fields,
// but those the simulator does not have (listed, and in SPEC.md §10.1).
func TestProtocol2AsTheAgent(t *testing.T) {
	agent := fieldsOf(t, readLines(t, filepath.Join("..", "audit", "testdata", "realagent", "sse-error", "rpc.jsonl")),
		readLines(t, filepath.Join("..", "audit", "testdata", "realagent", "abort-retry-during-wait", "rpc.jsonl")),
		readLines(t, filepath.Join("..", "audit", "testdata", "realagent", "529-529-ok", "rpc.jsonl")))
	ours := fieldsOf(t, serveProtocol(t, filepath.Join("..", "scenarios", "profiles", "pi-ai-anthropic", "529-529-ok.yaml"), 2, `{"id":"p1","type":"prompt","message":"hi"}`+"\n"),
		serveProtocol(t, omp18Abort, 2, abortAtAttempt2))
	// what the simulator does not have: the HTTP status, the provider's
	// response id, the time to first token, the retried errors' records;
	// and what only it writes: virtual time, the prompt's number
	agentOnly := map[string]bool{".message.errorStatus:number": true, ".message.responseId:string": true, ".message.ttft:number": true,
		".error.httpStatus:number": true}
	oursOnly := map[string]bool{".t:number": true, ".data:object": true, ".data.prompt:number": true, ".data.t:number": true}
	compared := 0
	for typ, a := range agent {
		o, ok := ours[typ]
		if !ok {
			continue
		}
		compared++
		for f := range a {
			if !o[f] && !agentOnly[f] && !strings.HasPrefix(f, ".retryErrors") {
				t.Errorf("%s: the agent writes %s, protocol 2 does not", typ, f)
			}
		}
		for f := range o {
			if !a[f] && !oursOnly[f] {
				t.Errorf("%s: protocol 2 writes %s, the agent does not", typ, f)
			}
		}
	}
	// ready, the prompt's response, agent_start, agent_end, both
	// assistant message_ends, auto_retry_start, auto_retry_end, both
	// prompt_results, session_settled, abort_retry's response
	if compared != 12 {
		t.Errorf("%d line types compared, want 12: agent %v", compared, keysOf(agent))
	}
}

func readLines(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func keysOf(m map[string]map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// fieldsOf returns, per line type (message_end by role and stop reason,
// response by command, prompt_result by status), the fields of the logs'
// lines as ".path:kind" (arrays' elements as "[]"; agent_end's messages
// not entered).
func fieldsOf(t *testing.T, logs ...string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	for _, log := range logs {
		for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			typ, _ := v["type"].(string)
			switch typ {
			case "message_end":
				m, _ := v["message"].(map[string]any)
				typ += fmt.Sprintf("/%v/%v", m["role"], m["stopReason"])
			case "response":
				typ += fmt.Sprintf("/%v", v["command"])
			case "prompt_result":
				typ += fmt.Sprintf("/%v", v["status"])
			}
			if out[typ] == nil {
				out[typ] = map[string]bool{}
			}
			addFields(out[typ], "", v)
		}
	}
	return out
}

func addFields(set map[string]bool, path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			kind := "object"
			switch x.(type) {
			case string:
				kind = "string"
			case float64:
				kind = "number"
			case bool:
				kind = "bool"
			case []any:
				kind = "array"
			case nil:
				kind = "null"
			}
			set[path+"."+k+":"+kind] = true
			if k != "messages" {
				addFields(set, path+"."+k, x)
			}
		}
	case []any:
		for _, x := range v {
			addFields(set, path+"[]", x)
		}
	}
}
