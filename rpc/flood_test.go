package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/rpc"
)

// TestServeRealClockFloodAnswersEachCommandWithItsOwnResponse floods a
// real-clock server (1 ms backoffs, so timers keep coming due while
// commands are handled) with 20,000 mixed commands and checks that every
// request gets exactly one response and that the response is its own: its
// command, a prompt's own number, get_state's autoRetryEnabled as the last
// set_auto_retry before it set it. Issue 8's first defect answered
// commands with the response of the next one.
func TestServeRealClockFloodAnswersEachCommandWithItsOwnResponse(t *testing.T) {
	testkit.Need(t, testkit.Soak, "a flood on the real clock")
	var sc strings.Builder
	sc.WriteString("settings: {baseDelayMs: 1, maxRetries: 3}\nturns:\n")
	for range 3000 {
		sc.WriteString("  - {stopReason: error, errorMessage: \"529 overloaded_error\"}\n  - {stopReason: error, errorMessage: \"503 service unavailable\"}\n  - {stopReason: stop}\n")
	}
	type request struct {
		typ     string
		prompt  int  // a prompt's number
		enabled bool // set_auto_retry's value; for get_state, the value in force
	}
	const n = 20000
	rng := rand.New(rand.NewPCG(8, 1))
	reqs := make(map[string]request, n)
	var in bytes.Buffer
	prompts, enabled := 0, true
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		var r request
		switch k := rng.IntN(20); {
		case k < 8:
			prompts++
			r = request{typ: "prompt", prompt: prompts}
			fmt.Fprintf(&in, `{"id":%q,"type":"prompt","message":"m%d"}`+"\n", id, i)
		case k < 12:
			r = request{typ: "get_state", enabled: enabled}
			fmt.Fprintf(&in, `{"id":%q,"type":"get_state"}`+"\n", id)
		case k < 15:
			enabled = rng.IntN(4) != 0
			r = request{typ: "set_auto_retry", enabled: enabled}
			fmt.Fprintf(&in, `{"id":%q,"type":"set_auto_retry","enabled":%v}`+"\n", id, enabled)
		case k < 19:
			r = request{typ: "abort_retry"}
			fmt.Fprintf(&in, `{"id":%q,"type":"abort_retry"}`+"\n", id)
		default:
			r = request{typ: "abort"}
			fmt.Fprintf(&in, `{"id":%q,"type":"abort"}`+"\n", id)
		}
		reqs[id] = r
	}
	var out, log bytes.Buffer
	if err := rpc.Serve(context.Background(), &in, &out, rpc.Options{Scenario: parseScenario(t, sc.String()), Log: &log}); err != nil {
		t.Fatalf("Serve: %v (log: %s)", err, log.String())
	}
	if log.Len() > 0 {
		t.Errorf("diagnostics: %s", log.String())
	}
	answered := make(map[string]bool, n)
	accepted, resolved, bad := 0, 0, 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf(format, args...)
		}
	}
	for _, line := range splitLines(out.String()) {
		var m struct {
			ID      *string         `json:"id"`
			Type    string          `json:"type"`
			Command string          `json:"command"`
			Success bool            `json:"success"`
			Data    json.RawMessage `json:"data"`
			Error   string          `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("output line is not JSON: %s", line)
		}
		switch m.Type {
		case "prompt_resolved":
			resolved++
			continue
		case "response":
		default:
			continue
		}
		if m.ID == nil {
			fail("response without id: %s", line)
			continue
		}
		r, ok := reqs[*m.ID]
		if !ok || answered[*m.ID] {
			fail("response to an unknown or already answered id: %s", line)
			continue
		}
		answered[*m.ID] = true
		if m.Command != r.typ {
			fail("%s is a %s, answered as %q: %s", *m.ID, r.typ, m.Command, line)
			continue
		}
		switch r.typ {
		case "prompt":
			if !m.Success {
				if !strings.Contains(m.Error, "Agent is already processing") {
					fail("prompt %s rejected with %q", *m.ID, m.Error)
				}
				continue
			}
			accepted++
			if want := fmt.Sprintf(`{"prompt":%d}`, r.prompt); string(m.Data) != want {
				fail("prompt %s answered with data %s, want %s", *m.ID, m.Data, want)
			}
		case "get_state":
			var st struct {
				AutoRetryEnabled *bool `json:"autoRetryEnabled"`
			}
			if !m.Success || json.Unmarshal(m.Data, &st) != nil || st.AutoRetryEnabled == nil || *st.AutoRetryEnabled != r.enabled {
				fail("get_state %s answered %s, want autoRetryEnabled %v", *m.ID, line, r.enabled)
			}
		default:
			if !m.Success || m.Data != nil {
				fail("%s %s answered %s, want a plain success", r.typ, *m.ID, line)
			}
		}
	}
	if len(answered) != n {
		t.Errorf("%d of %d requests answered", len(answered), n)
	}
	if accepted == 0 || resolved != accepted {
		t.Errorf("%d prompts accepted, %d prompt_resolved", accepted, resolved)
	}
}
