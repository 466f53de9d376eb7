package sim

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/trace"
)

// expectTrace is a hand-written trace: 1-based line numbers in comments.
const expectTrace = `{"t":0,"type":"agent_run","kind":"prompt"}
{"t":0,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"}}
{"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
{"t":2000,"type":"agent_run","kind":"continue"}
{"t":2000,"type":"auto_retry_end","success":true,"attempt":1}
{"t":2000,"type":"prompt_resolved","prompt":1}
{"t":2000,"type":"final","state":"idle","attempt":0,"isRetrying":false,"unresolvedPrompts":[],"turnsConsumed":2}
`

// expectScenario parses a YAML scenario whose expect block starts on line
// 3: the events are on lines 5, 6, ... (column 7), and final on line
// 5+len(events)+1 (column 5).
func expectScenario(t *testing.T, events []string, final string) *scenario.Scenario {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: x\n")
	b.WriteString("turns: [{stopReason: stop}]\n")
	b.WriteString("expect:\n")
	if events != nil {
		b.WriteString("  events:\n")
		for _, e := range events {
			b.WriteString("    - " + e + "\n")
		}
	}
	if final != "" {
		b.WriteString("  final:\n")
		b.WriteString("    " + final + "\n")
	}
	sc, err := scenario.Parse("x.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

var expectIdleFinal = Final{State: policy.StateIdle, UnresolvedPrompts: []int{}}

// expectRecords are expectTrace's records.
func expectRecords(t *testing.T) []trace.Record {
	t.Helper()
	rs, err := trace.Parse([]byte(expectTrace))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestCheckExpect(t *testing.T) {
	tests := []struct {
		name   string
		events []string
		final  string
		f      Final
		want   []string // one substring set per failure, in order
	}{
		{
			name: "subsequence matches",
			events: []string{
				"{type: agent_run, kind: prompt}",
				"{type: auto_retry_start, attempt: 1, delayMs: 2000}",
				"{t: 2000, type: auto_retry_end, success: true, attempt: 1}",
				"{type: prompt_resolved}",
			},
			f: expectIdleFinal,
		},
		{
			name:   "numbers compare as float64",
			events: []string{"{t: 2000.0, attempt: 1.0, type: auto_retry_end}"},
			f:      expectIdleFinal,
		},
		{
			name:   "nested value equal",
			events: []string{`{message: {role: assistant, stopReason: error, errorMessage: "529 overloaded_error"}}`},
			f:      expectIdleFinal,
		},
		{
			name:   "list value equal",
			events: []string{"{type: final, unresolvedPrompts: []}"},
			f:      expectIdleFinal,
		},
		{
			name:   "nested objects match as subsets",
			events: []string{"{type: message_end, message: {errorMessage: 529 overloaded_error}}"},
			f:      expectIdleFinal,
		},
		{
			name:   "a nested value must be equal",
			events: []string{"{type: message_end, message: {role: assistant, stopReason: stop}}"},
			f:      expectIdleFinal,
			want: []string{`x.yaml:5:7: expect.events[0] {"type":"message_end","message":{"role":"assistant","stopReason":"stop"}}: no matching line in the trace (7 lines); ` +
				`nearest: trace line 2 has message={"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"}`},
		},
		{
			name:   "field value differs",
			events: []string{"{type: agent_run, kind: prompt}", "{type: auto_retry_end, success: true, attempt: 2}"},
			f:      expectIdleFinal,
			want: []string{`x.yaml:6:7: expect.events[1] {"type":"auto_retry_end","success":true,"attempt":2}: ` +
				`no matching line after trace line 1 (of 7); nearest: trace line 5 has attempt=1`},
		},
		{
			name:   "field missing",
			events: []string{"{type: auto_retry_end, success: true, finalError: x}"},
			f:      expectIdleFinal,
			want: []string{`x.yaml:5:7: expect.events[0] {"type":"auto_retry_end","success":true,"finalError":"x"}: no matching line in the trace (7 lines); ` +
				`nearest: trace line 5 has finalError missing`},
		},
		{
			name:   "nearest line shows the differences",
			events: []string{"{type: auto_retry_start, attempt: 1, errorMessage: fetch failed}"},
			f:      expectIdleFinal,
			want:   []string{`nearest: trace line 3 has errorMessage="529 overloaded_error"`},
		},
		{
			name:   "nearest earlier line",
			events: []string{"{type: agent_run, kind: continue}", "{type: auto_retry_start, attempt: 2}"},
			f:      expectIdleFinal,
			want: []string{`x.yaml:6:7: expect.events[1] {"type":"auto_retry_start","attempt":2}: ` +
				`no matching line after trace line 4 (of 7); nearest earlier: trace line 3 has attempt=1`},
		},
		{
			name: "out of order",
			events: []string{
				"{type: auto_retry_end}",
				"{type: auto_retry_start, attempt: 1}",
				"{type: final}",
			},
			f: expectIdleFinal,
			want: []string{`x.yaml:6:7: expect.events[1] {"type":"auto_retry_start","attempt":1}: ` +
				`no matching line after trace line 5 (of 7); out of order: it matches trace line 3`},
		},
		{
			name: "a failed event does not move the search on",
			events: []string{
				"{type: agent_run, kind: continue}",
				"{type: prompt_rejected}",
				"{type: auto_retry_end}",
				"{type: agent_run, kind: prompt}",
			},
			f: expectIdleFinal,
			want: []string{
				`x.yaml:6:7: expect.events[1] {"type":"prompt_rejected"}: no matching line after trace line 4 (of 7)`,
				`x.yaml:8:7: expect.events[3] {"type":"agent_run","kind":"prompt"}: no matching line after trace line 5 (of 7); out of order: it matches trace line 1`,
			},
		},
		{
			name:  "final matches",
			final: "{state: idle, attempt: 0, isRetrying: false, unresolvedPrompts: []}",
			f:     expectIdleFinal,
		},
		{
			name:  "final matches nil prompts",
			final: "{unresolvedPrompts: []}",
			f:     Final{State: policy.StateIdle},
		},
		{
			name:  "final mismatches",
			final: "{state: exhausted, attempt: 2, isRetrying: true, unresolvedPrompts: [1, 2]}",
			f:     Final{State: policy.StateIdle, Attempt: 0, IsRetrying: false, UnresolvedPrompts: []int{1}},
			want: []string{
				`x.yaml:5:5: expect.final.state: got "idle", want "exhausted"`,
				`x.yaml:5:5: expect.final.attempt: got 0, want 2`,
				`x.yaml:5:5: expect.final.isRetrying: got false, want true`,
				`x.yaml:5:5: expect.final.unresolvedPrompts: got [1], want [1,2]`,
			},
		},
		{
			name:  "final unlisted fields are ignored",
			final: "{attempt: 0}",
			f:     Final{State: policy.StateBackoff, IsRetrying: true, UnresolvedPrompts: []int{3}},
		},
		{
			name:   "events then final",
			events: []string{"{type: continue_rejected}"},
			final:  "{state: cancelled}",
			f:      expectIdleFinal,
			want: []string{
				`x.yaml:5:7: expect.events[0] {"type":"continue_rejected"}: no matching line in the trace (7 lines)`,
				`x.yaml:7:5: expect.final.state: got "idle", want "cancelled"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := expectScenario(t, tt.events, tt.final)
			got := CheckExpect(sc, expectRecords(t), tt.f)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d failures, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("failure %d:\n got %s\nwant it to contain %s", i, got[i], w)
				}
			}
		})
	}
}

func TestCheckExpectNoExpectBlock(t *testing.T) {
	sc, err := scenario.Parse("x.yaml", []byte("turns: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := CheckExpect(sc, expectRecords(t), Final{State: policy.StateBackoff}); got != nil {
		t.Fatalf("got %q, want nil", got)
	}
	if got := CheckExpect(nil, nil, Final{}); got != nil {
		t.Fatalf("nil scenario: got %q, want nil", got)
	}
}

func TestCheckExpectBuiltInCode(t *testing.T) {
	// Values put in by code (ints, typed slices) compare like parsed ones,
	// and a position without a file falls back to the scenario's path.
	sc := &scenario.Scenario{Path: "code.yaml", Expect: &scenario.Expect{Events: []scenario.ExpectEvent{
		{Fields: map[string]any{"type": "auto_retry_end", "attempt": 1, "t": int64(2000)}},
		{Fields: map[string]any{"type": "final", "unresolvedPrompts": []int{}}},
		{Fields: map[string]any{"type": "final", "attempt": 7}, Keys: []string{"type", "attempt"}, Pos: scenario.Pos{Line: 9, Column: 3}},
	}}}
	got := CheckExpect(sc, expectRecords(t), expectIdleFinal)
	want := []string{`code.yaml:9:3: expect.events[2] {"type":"final","attempt":7}: no matching line after trace line 7 (of 7); nearest earlier: trace line 7 has attempt=0`}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestRunScenarioResult(t *testing.T) {
	path := filepath.Join(publicConformanceDir, "03-three-errors-then-success.json")
	tests := []struct {
		name    string
		expect  *scenario.Expect
		passed  bool
		failure string
	}{
		{name: "no expect block", passed: true},
		{
			name: "matching",
			expect: &scenario.Expect{
				Events: []scenario.ExpectEvent{
					{Fields: map[string]any{"t": 14000.0, "type": "auto_retry_end", "success": true, "attempt": 3.0}},
					{Fields: map[string]any{"type": "prompt_resolved", "prompt": 1.0}},
				},
				Final: &scenario.ExpectFinal{State: expectPtr("idle"), Attempt: expectPtr(0), IsRetrying: expectPtr(false), UnresolvedPrompts: []int{}, HasUnresolved: true},
			},
			passed: true,
		},
		{
			name: "failing",
			expect: &scenario.Expect{Events: []scenario.ExpectEvent{
				{Fields: map[string]any{"type": "auto_retry_end", "attempt": 2.0}, Pos: scenario.Pos{File: path, Line: 4, Column: 2}},
			}},
			failure: path + `:4:2: expect.events[0] {"attempt":2,"type":"auto_retry_end"}: no matching line in the trace`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scenario.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			sc.Expect = tt.expect
			res, err := RunScenario(sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Passed() != tt.passed {
				t.Fatalf("Passed() = %v, failures %q", res.Passed(), res.Failures)
			}
			if tt.failure != "" && (len(res.Failures) != 1 || !strings.HasPrefix(res.Failures[0], tt.failure)) {
				t.Fatalf("failures %q, want one starting with %q", res.Failures, tt.failure)
			}
			if res.Variant != "sound" || res.Scenario != sc || res.RunErr != nil {
				t.Fatalf("Variant %q, scenario.Scenario %p (want %p), RunErr %v", res.Variant, res.Scenario, sc, res.RunErr)
			}
			if !strings.Contains(string(res.Trace), `{"t":14000,"type":"auto_retry_end","success":true,"attempt":3}`+"\n") {
				t.Fatalf("trace lacks the chain's end:\n%s", res.Trace)
			}
			if res.Final.State != policy.StateIdle || res.Final.At.Milliseconds() != 14000 {
				t.Fatalf("Final = %+v", res.Final)
			}
		})
	}
}

func TestRunScenarioResultUnknownVariant(t *testing.T) {
	sc, err := scenario.Parse("v.yaml", []byte("turns: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	sc.Variant = "no-such-variant"
	_, err = RunScenario(sc, Options{})
	var se *scenario.Error
	if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), "v.yaml: variant: unknown variant") {
		t.Fatalf("scenario variant: got %v (%T)", err, err)
	}
	sc.Variant = "sound"
	_, err = RunScenario(sc, Options{Variant: "no-such-variant"})
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), `unknown variant "no-such-variant"`) {
		t.Fatalf("override: got %v (%T)", err, err)
	}
}

func expectPtr[T any](v T) *T { return &v }
