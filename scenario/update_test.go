package scenario_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

const updateTurns = "turns:\n  - {stopReason: error, errorMessage: \"529 overloaded_error\"}\n  - {stopReason: stop}\n"

// runExpect runs a scenario and returns the expect block of its run.
func runExpect(t *testing.T, name, text string) *scenario.Expect {
	t.Helper()
	sc, err := scenario.Parse(name, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunScenario(sc, sim.Options{NoJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	x, err := scenario.ExpectFromTrace(res.Records)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// The expect block of a one-error run, as SetExpect writes it in YAML
// (indent "") and in JSON (members indented by two spaces).
const (
	wantExpectYAML = `expect:
  events:
    - {t: 0, type: agent_run, kind: prompt, model: claude-sonnet-4-5}
    - {t: 0, type: auto_retry_start, attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "529 overloaded_error"}
    - {t: 2000, type: agent_run, kind: continue, model: claude-sonnet-4-5}
    - {t: 2000, type: auto_retry_end, success: true, attempt: 1}
    - {t: 2000, type: prompt_resolved, prompt: 1}
  final: {state: idle, attempt: 0, isRetrying: false, unresolvedPrompts: []}
`
	wantExpectJSON = `{
    "events": [
      {"t": 0, "type": "agent_run", "kind": "prompt", "model": "claude-sonnet-4-5"},
      {"t": 0, "type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "529 overloaded_error"},
      {"t": 2000, "type": "agent_run", "kind": "continue", "model": "claude-sonnet-4-5"},
      {"t": 2000, "type": "auto_retry_end", "success": true, "attempt": 1},
      {"t": 2000, "type": "prompt_resolved", "prompt": 1}
    ],
    "final": {"state": "idle", "attempt": 0, "isRetrying": false, "unresolvedPrompts": []}
  }`
)

func TestExpectFromTrace(t *testing.T) {
	x := runExpect(t, "f.yaml", updateTurns)
	var types []string
	for _, ev := range x.Events {
		types = append(types, ev.Fields["type"].(string))
		if ev.Keys[0] != "t" || ev.Keys[1] != "type" || len(ev.Keys) != len(ev.Fields) {
			t.Errorf("event keys %q: want every field, t and type first", ev.Keys)
		}
	}
	want := "agent_run auto_retry_start agent_run auto_retry_end prompt_resolved"
	if strings.Join(types, " ") != want {
		t.Errorf("event types %q, want %q", types, want)
	}
	if f := x.Final; f == nil || *f.State != "idle" || *f.Attempt != 0 || *f.IsRetrying || !f.HasUnresolved || len(f.UnresolvedPrompts) != 0 {
		t.Errorf("final %+v", x.Final)
	}
	if _, err := scenario.ExpectFromTrace([]trace.Record{{Type: trace.AgentRun}}); err == nil {
		t.Error("a trace without a final line gave an expect block")
	}
}

// TestSetExpect: the expect block is replaced, or added, and every other
// byte of the file stays, comments and layout included, in YAML and JSON.
func TestSetExpect(t *testing.T) {
	tests := []struct {
		name, file string
		in         string
		want       string // the result, "%s" standing for the block
		block      string
	}{
		{
			name: "YAML, expect between keys, comments around it",
			file: "f.yaml",
			in: "# a scenario\nname:   odd-spacing   # kept\n" + updateTurns +
				"# about the expectations (kept)\nexpect:   # replaced\n  events:\n    - {type: agent_run}\n# inside (replaced)\n    - {type: final}\n  final:\n    state: backoff\n\n# about the actions (kept)\nactions: []\n# the end\n",
			want: "# a scenario\nname:   odd-spacing   # kept\n" + updateTurns +
				"# about the expectations (kept)\n%s\n# about the actions (kept)\nactions: []\n# the end\n",
			block: wantExpectYAML,
		},
		{
			name:  "YAML without expect, no final newline, a closing comment",
			file:  "f.yml",
			in:    "name: x\n" + updateTurns + "\n# closing comment",
			want:  "name: x\n" + updateTurns + "%s\n# closing comment",
			block: wantExpectYAML,
		},
		{
			name:  "YAML, expect last, document markers",
			file:  "f.yaml",
			in:    "---\n" + updateTurns + "expect: {final: {state: idle}}\n...\n",
			want:  "---\n" + updateTurns + "%s...\n",
			block: wantExpectYAML,
		},
		{
			name:  "YAML without expect, no final newline",
			file:  "f.yaml",
			in:    strings.TrimSuffix(updateTurns, "\n"),
			want:  updateTurns + "%s",
			block: wantExpectYAML,
		},
		{
			name:  "YAML with CRLF line ends",
			file:  "f.yaml",
			in:    strings.ReplaceAll(updateTurns+"expect:\n  final: {state: idle}\nactions: []\n", "\n", "\r\n"),
			want:  strings.ReplaceAll(updateTurns, "\n", "\r\n") + "%sactions: []\r\n",
			block: strings.ReplaceAll(wantExpectYAML, "\n", "\r\n"),
		},
		{
			name:  "JSON, expect replaced",
			file:  "f.json",
			in:    "{\n  \"name\": \"j\",\n  \"expect\": {\"final\": {\"state\": \"backoff\"}},\n  \"turns\": [{\"stopReason\": \"error\", \"errorMessage\": \"529 overloaded_error\"},\n            {\"stopReason\": \"stop\"}]\n}\n",
			want:  "{\n  \"name\": \"j\",\n  \"expect\": %s,\n  \"turns\": [{\"stopReason\": \"error\", \"errorMessage\": \"529 overloaded_error\"},\n            {\"stopReason\": \"stop\"}]\n}\n",
			block: wantExpectJSON,
		},
		{
			name:  "JSON without expect: a last member",
			file:  "f.json",
			in:    "{\n  \"turns\": [{\"stopReason\": \"error\", \"errorMessage\": \"529 overloaded_error\"}, {\"stopReason\": \"stop\"}]\n}",
			want:  "{\n  \"turns\": [{\"stopReason\": \"error\", \"errorMessage\": \"529 overloaded_error\"}, {\"stopReason\": \"stop\"}],\n  \"expect\": %s\n}",
			block: wantExpectJSON,
		},
		{
			name:  "JSON, the first member on the brace's line, the others on lines of their own",
			file:  "f.json",
			in:    "{\"name\": \"j\",\n  \"turns\": [{\"stopReason\": \"error\", \"errorMessage\": \"529 overloaded_error\"}, {\"stopReason\": \"stop\"}]}\n",
			want:  "{\"name\": \"j\",\n  \"turns\": [{\"stopReason\": \"error\", \"errorMessage\": \"529 overloaded_error\"}, {\"stopReason\": \"stop\"}],\n  \"expect\": %s}\n",
			block: wantExpectJSON,
		},
		{
			name: "JSON in a .yaml file, on one line",
			file: "f.yaml",
			in:   `{"turns":[{"stopReason":"error","errorMessage":"529 overloaded_error"},{"stopReason":"stop"}]}`,
			want: `{"turns":[{"stopReason":"error","errorMessage":"529 overloaded_error"},{"stopReason":"stop"}], "expect": %s}`,
			block: strings.NewReplacer("\n", "", "  ", "").Replace(
				strings.Replace(strings.Replace(wantExpectJSON, "},\n", "}, ", -1), "],\n", "], ", 1)),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := runExpect(t, tt.file, tt.in)
			got, err := scenario.SetExpect(tt.file, []byte(tt.in), x)
			if err != nil {
				t.Fatal(err)
			}
			before, after, _ := strings.Cut(tt.want, "%s")
			want := before + tt.block + after
			if string(got) != want {
				t.Fatalf("got\n%s\nwant\n%s", got, want)
			}
			sc, err := scenario.Parse(tt.file, got)
			if err != nil {
				t.Fatalf("the updated file does not load: %v\n%s", err, got)
			}
			res, err := sim.RunScenario(sc, sim.Options{NoJSON: true})
			if err != nil || !res.Passed() {
				t.Fatalf("the updated file does not pass: %v %q", err, res.Failures)
			}
			// Updating again changes nothing.
			again, err := scenario.SetExpect(tt.file, got, x)
			if err != nil || string(again) != string(got) {
				t.Errorf("a second update changed the file (err %v):\n%s", err, again)
			}
		})
	}
}

func TestSetExpectRefusesFlowYAML(t *testing.T) {
	in := "{turns: [{stopReason: stop}], name: flow}\n"
	x := runExpect(t, "f.yaml", in)
	_, err := scenario.SetExpect("f.yaml", []byte(in), x)
	if err == nil || !strings.Contains(err.Error(), "flow style") || !strings.Contains(err.Error(), "block style") {
		t.Fatalf("err = %v, want one that says the flow style cannot be kept and what to do", err)
	}
}

// FuzzSetExpect: for any file Parse accepts, SetExpect either refuses it
// or gives a file that Parse accepts with the new expect block and
// everything else as it was (Format, which writes every key, agrees), and
// that a second SetExpect leaves as it is. It never panics.
func FuzzSetExpect(f *testing.F) {
	for _, s := range []string{
		updateTurns,
		"# c\n" + updateTurns + "expect:  # r\n  final: {state: idle}\n\n# next\nactions: []\n",
		"name: x\nexpect:\n  events: []\n...\n",
		"  name: indented\n  turns: []\n  expect: {final: {state: idle}}\n",
		"expect: {}\nname: first\n",
		"description: >\n  folded\n  text\nexpect:\n  events:\n  # only a comment\n    - {type: agent_run}\n",
		"{\"turns\": [], \"expect\": {}}",
		"{\n\t\"expect\": {},\n\t\"name\": \"tabs\"\n}\n",
		"\ufeff{\"name\": \"bom\"}",
		"{turns: [], name: flow}\n",
		"---\nname: marked\n",
		"name: \"a\\r\\nb\"\r\nexpect:\r\n  final: {state: idle}\r\n",
	} {
		f.Add([]byte(s))
	}
	attempt, retrying, state := 0, false, "idle"
	x := &scenario.Expect{
		Events: []scenario.ExpectEvent{{Keys: []string{"t", "type", "kind"}, Fields: map[string]any{"t": 0.0, "type": "agent_run", "kind": "prompt"}}},
		Final:  &scenario.ExpectFinal{State: &state, Attempt: &attempt, IsRetrying: &retrying, UnresolvedPrompts: []int{}, HasUnresolved: true},
	}
	// A name not ending in .json: data that is valid JSON is read, and
	// updated, as JSON.
	const name = "f.yaml"
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := scenario.Parse(name, data)
		if err != nil {
			return
		}
		out, err := scenario.SetExpect(name, data, x)
		if err != nil {
			return
		}
		sc2, err := scenario.Parse(name, out)
		if err != nil {
			t.Fatalf("the updated file does not load: %v\n--- in\n%q\n--- out\n%q", err, data, out)
		}
		if sc2.Expect == nil || len(sc2.Expect.Events) != 1 || sc2.Expect.Final == nil || *sc2.Expect.Final.State != "idle" {
			t.Fatalf("the updated file's expect is not the one written:\n%q", out)
		}
		sc.Expect, sc2.Expect = nil, nil
		if a, b := scenario.Format(sc), scenario.Format(sc2); string(a) != string(b) {
			t.Fatalf("the update changed more than expect:\n--- in\n%q\n--- out\n%q\n--- before\n%s--- after\n%s", data, out, a, b)
		}
		again, err := scenario.SetExpect(name, out, x)
		if err != nil || string(again) != string(out) {
			t.Fatalf("a second update changed the file (err %v):\n%q\n%q", err, out, again)
		}
	})
}
