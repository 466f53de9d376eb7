package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/scenario"
)

// fuzzScenario: errors of every kind the policy tells apart, short waits.
const fuzzScenario = `
settings: {maxRetries: 2, baseDelayMs: 10}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: toolUse}
  - {stopReason: error, errorMessage: "prompt is too long"}
  - {stopReason: error, errorMessage: "503 service unavailable", durationMs: 5}
  - {stopReason: stop, durationMs: 20}
  - {stopReason: error, errorMessage: "invalid api key"}
`

// FuzzServe: whatever the input, a --virtual server answers each non-blank
// line with exactly one response, every output line is a JSON object, and
// it ends without an error. Run with go test ./rpc -fuzz FuzzServe.
func FuzzServe(f *testing.F) {
	for _, seed := range []string{
		`{"id":"p","type":"prompt","message":"hi"}` + "\n" + `{"type":"advance","ms":15}` + "\n" + `{"id":"r","type":"abort_retry"}`,
		`{"type":"prompt","message":"x"}` + "\n" + `{"type":"prompt","message":"y"}` + "\n" + `{"type":"abort"}` + "\n" + `{"type":"get_state"}`,
		`{"type":"set_auto_retry","enabled":false}` + "\r\n" + `{"type":"set_auto_retry","enabled":"no"}` + "\n\n  \n",
		`{"id":"a","type":"get_state","type":"abort"}` + "\n" + `[1]` + "\n" + `nul` + "\n" + `{"id":7}`,
		`{"type":"advance","ms":1000000000000}` + "\n" + `{"type":"advance","ms":1e12}` + "\n" + `{"type":"advance","ms":-0}`,
		"{\"type\":\"prompt\",\"message\":\"\\u0000\\ud800\"}\n\xff\xfe\n{\"type\":\"\u2028\"}",
	} {
		f.Add(seed)
	}
	sc, err := scenario.Parse("fuzz.yaml", []byte(fuzzScenario))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var out bytes.Buffer
		if err := rpc.Serve(context.Background(), strings.NewReader(input), &out, rpc.Options{Scenario: sc, Virtual: true}); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		want := 0
		for line := range strings.Lines(input) {
			line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
			if len(bytes.TrimSpace([]byte(line))) > 0 {
				want++
			}
		}
		got := 0
		for line := range strings.Lines(out.String()) {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("output line is not a JSON object: %q (%v)", line, err)
			}
			if m["type"] == "response" {
				got++
			}
		}
		if got != want {
			t.Fatalf("%d responses to %d non-blank lines; output:\n%s", got, want, out.String())
		}
	})
}
