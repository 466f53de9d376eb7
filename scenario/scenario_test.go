package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

const conformanceDir = "../testdata/conformance/public" // the repo's copy of the public set

func scnBoolPtr(b bool) *bool       { return &b }
func scnIntPtr(i int) *int          { return &i }
func scnStrPtr(s string) *string    { return &s }
func scnDur(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

func TestScenarioDefaults(t *testing.T) {
	for _, in := range []string{"{}", "# only a comment\n{}\n", "turns: []\n"} {
		sc, err := Parse("some/dir/my-case.yaml", []byte(in))
		if err != nil {
			t.Fatalf("Parse(%q): %v", in, err)
		}
		want := &Scenario{
			Path:          "some/dir/my-case.yaml",
			Name:          "my-case",
			Variant:       "sound",
			Profile:       policy.DefaultProfile,
			Settings:      policy.Settings{Enabled: true, MaxRetries: 3, BaseDelay: 2 * time.Second},
			ContextWindow: 200000,
			Compaction:    Compaction{Enabled: true, Succeed: true},
			InitialPrompt: true,
			Prompt:        "hello",
			EpochMs:       1771200000000,
			Provider:      "anthropic",
			ModelID:       "claude-sonnet-4-5",
			BaseURL:       "https://api.anthropic.com",
			SessionID:     "session-1",
			Seed:          1,
		}
		if in == "turns: []\n" {
			want.Turns = []Turn{}
		}
		if sc.pol == nil {
			t.Errorf("Parse(%q): the settings were not kept compiled", in)
		}
		sc.pol = nil // compared by TestLoadedPolicyIsTheOneCheck
		if !reflect.DeepEqual(sc, want) {
			t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", in, sc, want)
		}
		if !sc.Settings.Equal(policy.DefaultSettings()) {
			t.Errorf("settings %+v, want policy.DefaultSettings()", sc.Settings)
		}
	}

	// No name: Path and Name stay empty.
	sc, err := Parse("", []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Path != "" || sc.Name != "" {
		t.Errorf("Path, Name = %q, %q; want empty", sc.Path, sc.Name)
	}

	// Defaults inside partial groups, turns and actions.
	sc, err = Parse("x.json", []byte(`{"settings":{"maxRetries":1},"compaction":{"succeed":false},
		"turns":[{"stopReason":"stop"}],"actions":[{"at":5,"do":"prompt"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := (policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: 2 * time.Second}); !sc.Settings.Equal(want) {
		t.Errorf("settings = %+v, want %+v", sc.Settings, want)
	}
	if want := (Compaction{Enabled: true, Succeed: false}); sc.Compaction != want {
		t.Errorf("compaction = %+v, want %+v", sc.Compaction, want)
	}
	wantTurn := Turn{StopReason: policy.StopReasonStop, Pos: Pos{"x.json", 2, 12}}
	if !reflect.DeepEqual(sc.Turns, []Turn{wantTurn}) {
		t.Errorf("turns = %+v, want %+v", sc.Turns, wantTurn)
	}
	wantAction := Action{At: 5 * time.Millisecond, Do: "prompt", Pos: Pos{"x.json", 2, 46}}
	if !reflect.DeepEqual(sc.Actions, []Action{wantAction}) {
		t.Errorf("actions = %+v, want %+v", sc.Actions, wantAction)
	}
	if sc.Expect != nil {
		t.Errorf("Expect = %+v, want nil", sc.Expect)
	}
	if sc.Name != "x" {
		t.Errorf("Name = %q, want x", sc.Name)
	}
}

func TestScenarioConformanceFiles(t *testing.T) {
	if _, err := os.Stat(conformanceDir); err != nil {
		t.Fatalf("conformance scenarios missing: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(conformanceDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	byName := map[string]*Scenario{}
	for _, f := range files {
		if filepath.Base(f) == "manifest.json" { // the index, not a scenario
			continue
		}
		n++
		sc, err := Load(f)
		if err != nil {
			t.Errorf("Load(%s): %v", f, err)
			continue
		}
		if sc.Path != f || sc.Name != strings.TrimSuffix(filepath.Base(f), ".json") {
			t.Errorf("%s: Path, Name = %q, %q", f, sc.Path, sc.Name)
		}
		if len(sc.Turns) == 0 {
			t.Errorf("%s: no turns", f)
		}
		byName[sc.Name] = sc
	}
	if n != 29 { // 01-24 with the b, c, d variants
		t.Errorf("found %d conformance scenarios, want 29", n)
	}

	// Spot checks of values that only some files set.
	if sc := byName["05-max-retries-zero"]; sc != nil && sc.Settings.MaxRetries != 0 {
		t.Errorf("05: maxRetries = %d, want 0", sc.Settings.MaxRetries)
	}
	if sc := byName["08-disabled"]; sc != nil && sc.Settings.Enabled {
		t.Error("08: settings.enabled = true, want false")
	}
	if sc := byName["09b-silent-overflow-usage"]; sc != nil {
		if want := (Usage{Input: 190000, CacheRead: 20000}); sc.Turns[0].Usage != want {
			t.Errorf("09b: usage = %+v, want %+v", sc.Turns[0].Usage, want)
		}
	}
	if sc := byName["11-usage-limit-switch"]; sc != nil && !sc.Turns[0].SwitchModel {
		t.Error("11: switchModel = false, want true")
	}
	if sc := byName["13-disable-during-backoff-then-error"]; sc != nil {
		a := sc.Actions[0]
		if a.Do != "set_auto_retry" || a.Enabled == nil || *a.Enabled || a.At != time.Second || a.ID != "d1" {
			t.Errorf("13: action[0] = %+v", a)
		}
		if a.Pos.Line != 3 {
			t.Errorf("13: action[0] at line %d, want 3", a.Pos.Line)
		}
	}
	if sc := byName["14-abort-during-retried-run-stale-counter"]; sc != nil {
		if sc.Turns[1].Duration != 3*time.Second {
			t.Errorf("14: turns[1].durationMs = %v, want 3s", sc.Turns[1].Duration)
		}
		if a := sc.Actions[2]; a.Do != "prompt" || a.Message != "next" || a.ID != "p2" {
			t.Errorf("14: action[2] = %+v", a)
		}
	}
	if sc := byName["17-substring-500-false-positive"]; sc != nil {
		if want := (policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: time.Second}); !sc.Settings.Equal(want) {
			t.Errorf("17: settings = %+v, want %+v", sc.Settings, want)
		}
	}
}

func TestScenarioAllKeysYAML(t *testing.T) {
	path := filepath.Join("testdata", "scenario", "all-keys.yaml")
	sc, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := func(line, col int) Pos { return Pos{path, line, col} }
	want := &Scenario{
		Path:          path,
		Name:          "every-key",
		Description:   "A scenario that sets every key.\n",
		Variant:       "original",
		Profile:       policy.DefaultProfile,
		Settings:      policy.Settings{Enabled: false, MaxRetries: 5, BaseDelay: 1500 * time.Millisecond},
		SettingsPatch: json.RawMessage(`{"enabled":false,"maxRetries":5,"baseDelayMs":1500}`),
		ContextWindow: 0,
		Compaction:    Compaction{Enabled: false, Succeed: false},
		InitialPrompt: false,
		Prompt:        "first prompt",
		EpochMs:       1700000000000,
		Provider:      "openai",
		ModelID:       "gpt-5",
		BaseURL:       "https://example.test/v1",
		SessionID:     "session-42",
		Seed:          1,
		Turns: []Turn{
			{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error",
				Usage: Usage{Input: 190000, CacheRead: 20000}, SwitchModel: true,
				Duration: 250 * time.Millisecond, Pos: p(22, 5)},
			{StopReason: policy.StopReasonStop, Pos: p(27, 5)},
		},
		Actions: []Action{
			{At: 0, Do: "prompt", ID: "p1", Message: "hi there", Pos: p(29, 5)},
			{At: scnDur(1000), Do: "set_auto_retry", Enabled: scnBoolPtr(true), Pos: p(33, 5)},
			{At: scnDur(1500), Do: "abort_retry", ID: "r1", Pos: p(36, 5)},
			{At: scnDur(2000), Do: "abort", Pos: p(37, 5)},
			{At: scnDur(2500), Do: "get_state", ID: "s1", Pos: p(38, 5)},
		},
		Expect: &Expect{
			Events: []ExpectEvent{
				{
					Fields: map[string]any{"type": "agent_run", "t": float64(0), "kind": "prompt"},
					Keys:   []string{"type", "t", "kind"},
					Pos:    p(41, 7),
				},
				{
					Fields: map[string]any{"type": "mark_usage_limit_reached", "retryAfterMs": nil, "returns": false},
					Keys:   []string{"type", "retryAfterMs", "returns"},
					Pos:    p(42, 7),
				},
				{
					Fields: map[string]any{"type": "final", "unresolvedPrompts": []any{float64(1), float64(2)}, "attempt": 1.5},
					Keys:   []string{"type", "unresolvedPrompts", "attempt"},
					Pos:    p(43, 7),
				},
				{
					Fields: map[string]any{"type": "response", "data": map[string]any{"isStreaming": true, "retryAttempt": float64(2)}},
					Keys:   []string{"type", "data"},
					Pos:    p(44, 7),
				},
			},
			Final: &ExpectFinal{
				State: scnStrPtr("exhausted"), Attempt: scnIntPtr(3), IsRetrying: scnBoolPtr(false),
				UnresolvedPrompts: []int{0, 2}, HasUnresolved: true, Pos: p(47, 5),
			},
		},
	}
	if sc.src == nil || sc.src.variant != p(5, 10) || sc.src.settings != p(7, 3) || sc.src.fields["maxRetries"] != p(8, 15) {
		t.Errorf("positions of variant and settings: %+v", sc.src)
	}
	sc.src, sc.pol = nil, nil
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("Load(%s) =\n%#v\nwant\n%#v", path, sc, want)
		if !reflect.DeepEqual(sc.Expect, want.Expect) {
			t.Errorf("expect: got %#v / %#v", sc.Expect.Events, sc.Expect.Final)
		}
	}
}

func TestScenarioExpectFinalUnresolved(t *testing.T) {
	sc, err := Parse("e.yaml", []byte("expect:\n  final: {unresolvedPrompts: []}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f := sc.Expect.Final
	if !f.HasUnresolved || f.UnresolvedPrompts == nil || len(f.UnresolvedPrompts) != 0 {
		t.Errorf("given empty: HasUnresolved=%v UnresolvedPrompts=%#v", f.HasUnresolved, f.UnresolvedPrompts)
	}
	if f.State != nil || f.Attempt != nil || f.IsRetrying != nil {
		t.Errorf("absent fields set: %+v", f)
	}

	sc, err = Parse("e.yaml", []byte("expect:\n  final: {state: idle}\n"))
	if err != nil {
		t.Fatal(err)
	}
	f = sc.Expect.Final
	if f.HasUnresolved || f.UnresolvedPrompts != nil || *f.State != "idle" {
		t.Errorf("absent: %+v", f)
	}
	if sc.Expect.Events != nil {
		t.Errorf("events = %#v, want nil", sc.Expect.Events)
	}
}

// TestScenarioYAMLAndJSONAgree checks that the same scenario written as
// YAML and as JSON (with escapes YAML libraries often reject) loads the same.
func TestScenarioYAMLAndJSONAgree(t *testing.T) {
	y := "turns:\n  - {stopReason: error, errorMessage: \"a/b \\u00e9 \\U0001F600\"}\nactions:\n  - {at: 7, do: set_auto_retry, enabled: false}\n"
	j := `{"turns":[{"stopReason":"error","errorMessage":"a\/b \u00e9 \ud83d\ude00"}],
 "actions":[{"at":7,"do":"set_auto_retry","enabled":false}]}`
	sy, err := Parse("s.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	sj, err := Parse("s.yaml", []byte(j))
	if err != nil {
		t.Fatal(err)
	}
	if sy.Turns[0].ErrorMessage != "a/b é 😀" {
		t.Errorf("yaml errorMessage = %q", sy.Turns[0].ErrorMessage)
	}
	// Positions differ; compare the rest.
	for i := range sy.Turns {
		sy.Turns[i].Pos, sj.Turns[i].Pos = Pos{}, Pos{}
	}
	for i := range sy.Actions {
		sy.Actions[i].Pos, sj.Actions[i].Pos = Pos{}, Pos{}
	}
	if !reflect.DeepEqual(sy, sj) {
		t.Errorf("yaml %+v\njson %+v", sy, sj)
	}
	if sj.Actions[0].Pos != (Pos{}) {
		t.Error("positions not cleared")
	}
}

func TestScenarioErrors(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		pos   string // Pos.String()
		field string
		msg   string // substring of Msg
	}{
		// Structure.
		{"empty file", "", "t.yaml", "", "empty file"},
		{"only comments", "# nothing\n\n", "t.yaml", "", "empty file"},
		{"empty document", "---\n", "t.yaml:2:1", "", "empty document"},
		{"top-level list", "- a\n- b\n", "t.yaml:1:1", "", "top level must be a mapping with the scenario keys, got a list"},
		{"top-level scalar", "hello\n", "t.yaml:1:1", "", `got string "hello"`},
		{"json top-level list", "[1, 2]", "t.yaml:1:1", "", "got a list"},
		{"multi-document", "turns: []\n---\nturns: []\n", "t.yaml:3:1", "", "more than one YAML document"},
		{"syntax error", "turns: [\n", "t.yaml:1:8", "", "invalid YAML"},
		{"bad indentation", "turns:\n  - stopReason: stop\n errorMessage: x\n", "t.yaml:3:2", "", "invalid YAML"},
		{"alias", "prompt: &p hi\nname: *p\n", "t.yaml:2:7", "", "aliases (*p) are not supported"},
		{"merge key", "settings:\n  <<: {enabled: true}\n", "t.yaml:2:3", "settings", "merge keys"},
		{"non-string key", "1: x\n", "t.yaml:1:1", "", "keys must be strings, got integer 1"},

		// Unknown and duplicate keys.
		{"unknown top-level key", "turns: []\nsetings: {}\n", "t.yaml:2:1", "setings", `unknown key "setings" (allowed: name, description, variant, profile, settings,`},
		{"unknown turn key", "turns:\n  - stopReason: stop\n  - stopReason: error\n    stopReasn: x\n", "t.yaml:4:5", "turns[1].stopReasn",
			`unknown key "stopReasn" (allowed: stopReason, errorMessage, usage, switchModel, durationMs, status, headers)`},
		{"unknown settings key", `{"settings":{"retries":3}}`, "t.yaml:1:14", "settings.retries", `unknown key "retries" (allowed: enabled, maxRetries, baseDelayMs, backoffFactor, maxBackoffMs, jitter, retryAfter, classify, retryablePatterns, nonRetryablePatterns, persistent, fallback)`},
		{"unknown usage key", "turns: [{stopReason: stop, usage: {output: 1}}]", "t.yaml:1:36", "turns[0].usage.output", "(allowed: input, cacheRead)"},
		{"unknown action key", "actions: [{at: 1, do: abort, when: 2}]", "t.yaml:1:30", "actions[0].when", "(allowed: at, do, id, message, enabled, settings)"},
		{"unknown compaction key", "compaction: {on: true}", "t.yaml:1:14", "compaction.on", "(allowed: enabled, succeed)"},
		{"unknown expect key", "expect: {finals: {}}", "t.yaml:1:10", "expect.finals", "(allowed: events, final)"},
		{"unknown final key", "expect:\n  final:\n    attempts: 1\n", "t.yaml:3:5", "expect.final.attempts", "(allowed: state, attempt, isRetrying, unresolvedPrompts)"},
		{"duplicate top-level key", "prompt: a\nprompt: b\n", "t.yaml:2:1", "prompt", `duplicate key "prompt" (first at line 1:1)`},
		{"duplicate json key", `{"turns":[{"stopReason":"stop","stopReason":"error"}]}`, "t.yaml:1:32", "turns[0].stopReason", "duplicate key"},
		{"duplicate event key", "expect: {events: [{type: a, type: b}]}", "t.yaml:1:29", "expect.events[0].type", "duplicate key"},

		// Wrong types.
		{"maxRetries string", `{"settings":{"maxRetries":"3"}}`, "t.yaml:1:27", "settings.maxRetries", `"3" is not an integer (allowed: an integer from 0 to 1000)`},
		{"maxRetries float", "settings: {maxRetries: 2.5}", "t.yaml:1:24", "settings.maxRetries", "2.5 is not an integer (allowed: an integer from 0 to 1000)"},
		{"enabled yes", "settings:\n  enabled: yes\n", "t.yaml:2:12", "settings.enabled", `"yes" is not a boolean (allowed: true or false)`},
		{"enabled quoted", `{"settings":{"enabled":"true"}}`, "t.yaml:1:24", "settings.enabled", `"true" is not a boolean (allowed: true or false)`},
		{"settings list", "settings: [1]", "t.yaml:1:11", "settings", "expected a mapping with keys enabled, maxRetries, baseDelayMs, backoffFactor, maxBackoffMs, jitter, retryAfter, classify, retryablePatterns, nonRetryablePatterns, persistent, fallback, got a list"},
		{"turns mapping", "turns: {stopReason: stop}", "t.yaml:1:8", "turns", "expected a list of turns, got a mapping"},
		{"turn scalar", "turns: [stop]", "t.yaml:1:9", "turns[0]", `got string "stop"`},
		{"prompt number", "prompt: 42", "t.yaml:1:9", "prompt", "expected a string, got integer 42"},
		{"prompt bool", `{"prompt":true}`, "t.yaml:1:11", "prompt", "expected a string, got boolean true"},
		{"errorMessage list", "turns: [{stopReason: error, errorMessage: [x]}]", "t.yaml:1:43", "turns[0].errorMessage", "expected a string, got a list"},
		{"stopReason number", "turns: [{stopReason: 1}]", "t.yaml:1:22", "turns[0].stopReason", "expected a string (one of: stop, length, toolUse, error, aborted), got integer 1"},
		{"contextWindow float", "contextWindow: 1e3", "t.yaml:1:16", "contextWindow", "expected a non-negative integer, got float 1e3"},
		{"id number", "actions: [{at: 1, do: abort, id: 7}]", "t.yaml:1:34", "actions[0].id", "expected a string"},
		{"event not mapping", "expect: {events: [x]}", "t.yaml:1:19", "expect.events[0]", "expected a mapping of trace fields"},
		{"event value infinity", "expect: {events: [{t: .inf}]}", "t.yaml:1:23", "expect.events[0].t", "expected a JSON value"},
		{"unresolvedPrompts item", "expect: {final: {unresolvedPrompts: [0, x]}}", "t.yaml:1:41", "expect.final.unresolvedPrompts[1]", "expected an integer from 0 to"},

		// Ranges.
		{"negative at", "actions:\n  - {at: -5, do: abort}\n", "t.yaml:2:10", "actions[0].at", "-5 is out of range (allowed: a duration from 0s to 2562047h47m16.854s (whole milliseconds)"},
		{"float at", "actions:\n  - {at: 1.5, do: abort}\n", "t.yaml:2:10", "actions[0].at", "got float 1.5"},
		{"huge at", "actions: [{at: 9223372036854776, do: abort}]", "t.yaml:1:16", "actions[0].at", "9223372036854776 is out of range"},
		{"negative durationMs", "turns: [{stopReason: stop, durationMs: -1}]", "t.yaml:1:40", "turns[0].durationMs", "out of range"},
		{"negative usage", `{"turns":[{"stopReason":"stop","usage":{"input":-1}}]}`, "t.yaml:1:49", "turns[0].usage.input", "-1 is out of range (allowed: an integer from 0 to"},
		{"too large for int64", "contextWindow: 99999999999999999999", "t.yaml:1:16", "contextWindow", "99999999999999999999 is out of range (allowed: a non-negative integer)"},
		{"too large json", `{"epochMs":18446744073709551616}`, "t.yaml:1:12", "epochMs", "out of range"},
		{"negative contextWindow", "contextWindow: -1", "t.yaml:1:16", "contextWindow", "out of range"},
		{"negative maxRetries", "settings: {maxRetries: -1}", "t.yaml:1:24", "settings.maxRetries", "-1 is out of range (allowed: an integer from 0 to 1000)"},
		{"maxRetries over limit", "settings:\n  enabled: true\n  maxRetries: 1001\n", "t.yaml:3:15", "settings.maxRetries", "1001 is out of range (allowed: an integer from 0 to 1000)"},
		{"negative baseDelayMs", "settings: {baseDelayMs: -1}", "t.yaml:1:25", "settings.baseDelayMs", "-1 is out of range (allowed: 0 to 86400000 ms)"},
		{"baseDelayMs over limit", "settings: {baseDelayMs: 86400001}", "t.yaml:1:25", "settings.baseDelayMs", "86400001 is out of range (allowed: 0 to 86400000 ms)"},
		{"baseDelayMs overflows Duration", "settings: {baseDelayMs: 9223372036854775807}", "t.yaml:1:25", "settings.baseDelayMs", "out of range (allowed: 0 to 86400000 ms)"},
		{"attempt negative", "expect: {final: {attempt: -1}}", "t.yaml:1:27", "expect.final.attempt", "out of range"},

		// Profiles and the opt-in settings: policy's rules, placed in the file.
		{"unknown profile", "profile: nope", "t.yaml:1:10", "profile", `unknown profile "nope" (allowed: omp-2026-02, omp-2026-06, pi, codex, gemini-cli, opencode, aider, anthropic-sdk, openai-sdk, anthropic-sdk-go, openai-sdk-go, omp-18, pi-ai-anthropic)`},
		{"empty profile", `{"profile":""}`, "t.yaml:1:12", "profile", `unknown profile "" (allowed: omp-2026-02,`},
		{"profile number", "profile: 3", "t.yaml:1:10", "profile", "expected a string, got integer 3"},
		{"original with a profile", "variant: original\nprofile: codex\n", "t.yaml:2:10", "profile", "variant original allows only profile omp-2026-02, not codex"},
		{"profile before original", "profile: pi\nvariant: original\n", "t.yaml:1:10", "profile", "variant original allows only profile omp-2026-02, not pi"},
		{"original with opt-in settings", "variant: original\nsettings: {maxRetries: 2, jitter: {mode: full}}\n", "t.yaml:2:11", "settings", "variant original takes only enabled, maxRetries and baseDelayMs"},
		{"jitter ratio over 1", "settings:\n  jitter: {mode: down, ratio: 1.5}\n", "t.yaml:2:31", "settings.jitter.ratio", "1.5 is out of range (allowed: a number from 0 to 1)"},
		{"jitter unknown key", "settings: {jitter: {mod: down}}", "t.yaml:1:21", "settings.jitter.mod", `unknown key "jitter.mod" (allowed: mode, ratio); did you mean mode?`},
		{"jitter mode number", "settings: {jitter: {mode: 1}}", "t.yaml:1:27", "settings.jitter.mode", "1 is not a string (allowed: none, down, updown, full or equal)"},
		{"jitter mode unknown", "settings: {jitter: {mode: sideways}}", "t.yaml:1:27", "settings.jitter.mode", `"sideways" is out of range (allowed: none, down, updown, full or equal)`},
		{"jitter not a mapping", "settings: {jitter: down}", "t.yaml:1:20", "settings.jitter", `expected a mapping with keys mode, ratio, got string "down"`},
		{"backoffFactor below 1", "settings: {backoffFactor: 0.5}", "t.yaml:1:27", "settings.backoffFactor", "0.5 is out of range (allowed: a number from 1 to 100)"},
		{"backoffFactor string", `{"settings":{"backoffFactor":"2"}}`, "t.yaml:1:30", "settings.backoffFactor", `"2" is not a number (allowed: a number from 1 to 100)`},
		{"backoffFactor NaN", "settings: {backoffFactor: .nan}", "t.yaml:1:27", "settings.backoffFactor", "expected a JSON value (string, finite number, boolean, null, list or mapping), got float .nan"},
		{"maxBackoffMs below base", "settings: {baseDelayMs: 1000, maxBackoffMs: 500}", "t.yaml:1:45", "settings.maxBackoffMs", "500 is out of range (allowed: 0 (no cap) or at least baseDelayMs (1000))"},
		{"base over the profile's cap", "profile: omp-2026-06\nsettings: {baseDelayMs: 10000}\n", "t.yaml:2:11", "settings.maxBackoffMs",
			"8000 (from profile omp-2026-06) is out of range (allowed: 0 (no cap) or at least baseDelayMs (10000))"},
		{"retryAfter use unknown", "settings:\n  retryAfter:\n    use: always\n", "t.yaml:3:10", "settings.retryAfter.use", `"always" is out of range (allowed: ignore, floor or replace)`},
		{"retryAfter maxWaitMs negative", "settings: {retryAfter: {maxWaitMs: -1}}", "t.yaml:1:36", "settings.retryAfter.maxWaitMs", "-1 is out of range (allowed: 0 (none) or 0 to 86400000 ms)"},
		{"retryAfter unknown key", "settings: {retryAfter: {maxWait: 1}}", "t.yaml:1:25", "settings.retryAfter.maxWait", `unknown key "retryAfter.maxWait" (allowed: use, maxHintMs, maxWaitMs)`},
		{"classify unknown", "settings: {classify: fuzzy}", "t.yaml:1:22", "settings.classify", `"fuzzy" is out of range (allowed: message, status or strict)`},
		{"pattern not a regexp", "settings:\n  retryablePatterns: [ok, \"(\"]\n", "t.yaml:2:22", "settings.retryablePatterns", "(allowed: Go regular expressions (RE2), not empty)"},
		{"patterns not a list", "settings: {nonRetryablePatterns: quota}", "t.yaml:1:34", "settings.nonRetryablePatterns", `"quota" is not a list of strings (allowed: a list of regular expressions)`},
		{"fallback with a number", "settings: {fallback: [a, 3]}", "t.yaml:1:22", "settings.fallback", `["a",3] is not a list of strings (allowed: a list of model ids)`},
		{"fallback with an empty model", "settings:\n  fallback:\n    - gpt-5\n    - \" \"\n", "t.yaml:4:7", "settings.fallback[1]", `" " is out of range (allowed: a model id (not empty))`},
		{"persistent without a cap", "settings: {persistent: true}", "t.yaml:1:24", "settings.persistent", "true is out of range (allowed: true only with maxBackoffMs > 0"},
		{"persistent string", "settings: {persistent: \"yes\"}", "t.yaml:1:24", "settings.persistent", `"yes" is not a boolean (allowed: true or false)`},
		{"settings duplicate key", "settings: {maxRetries: 1, maxRetries: 2}", "t.yaml:1:27", "settings.maxRetries", `duplicate key "maxRetries" (first at line 1:12)`},
		// Seed, random draws, HTTP status and headers.
		{"seed zero", "seed: 0", "t.yaml:1:7", "seed", "0 is out of range (allowed: an integer from 1 to 9223372036854775807)"},
		{"seed negative", "seed: -3", "t.yaml:1:7", "seed", "-3 is out of range"},
		{"seed float", "seed: 1.5", "t.yaml:1:7", "seed", "expected an integer from 1 to 9223372036854775807, got float 1.5"},
		{"seed string", `{"seed":"7"}`, "t.yaml:1:9", "seed", `got string "7"`},
		{"seed too large", "seed: 9223372036854775808", "t.yaml:1:7", "seed", "9223372036854775808 is out of range"},
		{"random not a mapping", "random: 0.5", "t.yaml:1:9", "random", "expected a mapping with keys fixed, got float 0.5"},
		{"random without fixed", "random: {}", "t.yaml:1:9", "random.fixed", "missing required key (a number from 0 to 1, 1 excluded"},
		{"random unknown key", "random: {seed: 1}", "t.yaml:1:10", "random.seed", `unknown key "seed" (allowed: fixed)`},
		{"random fixed 1", "random: {fixed: 1}", "t.yaml:1:17", "random.fixed", "1 is out of range (allowed: a number from 0 to 1, 1 excluded)"},
		{"random fixed negative", "random: {fixed: -0.1}", "t.yaml:1:17", "random.fixed", "-0.1 is out of range"},
		{"random fixed string", `{"random":{"fixed":"0.5"}}`, "t.yaml:1:20", "random.fixed", `expected a number from 0 to 1, 1 excluded, got string "0.5"`},
		{"random fixed NaN", "random: {fixed: .nan}", "t.yaml:1:17", "random.fixed", "expected a number from 0 to 1, 1 excluded, got float .nan"},
		{"status too low", "turns: [{stopReason: error, status: 99}]", "t.yaml:1:37", "turns[0].status", "99 is out of range (allowed: an HTTP status code, an integer from 100 to 599)"},
		{"status too high", "turns: [{stopReason: error, status: 600}]", "t.yaml:1:37", "turns[0].status", "600 is out of range"},
		{"status string", `{"turns":[{"stopReason":"error","status":"429"}]}`, "t.yaml:1:42", "turns[0].status", `expected an HTTP status code, an integer from 100 to 599, got string "429"`},
		{"headers list", "turns: [{stopReason: error, headers: [retry-after]}]", "t.yaml:1:38", "turns[0].headers", "expected a mapping of header names (lower-case) to strings, got a list"},
		{"header upper case", "turns:\n  - stopReason: error\n    headers: {Retry-After: \"5\"}\n", "t.yaml:3:15", "turns[0].headers.Retry-After",
			`name "Retry-After" has upper-case letters; names are lower-case ("retry-after")`},
		{"header name with a space", `{"turns":[{"stopReason":"error","headers":{"retry after":"5"}}]}`, "t.yaml:1:44", "turns[0].headers.retry after", `has ' ' at byte 5`},
		{"header number", "turns: [{stopReason: error, headers: {retry-after: 30}}]", "t.yaml:1:52", "turns[0].headers.retry-after", `expected a string, got integer 30 (quote it: "30")`},
		{"header null", "turns: [{stopReason: error, headers: {x-a: }}]", "t.yaml:1:44", "turns[0].headers.x-a", `expected a string, got null (write "" for an empty value)`},
		{"header list value", "turns: [{stopReason: error, headers: {x-a: [1]}}]", "t.yaml:1:44", "turns[0].headers.x-a", "expected a string, got a list"},
		{"duplicate header", "turns: [{stopReason: error, headers: {x-a: a, x-a: b}}]", "t.yaml:1:47", "turns[0].headers.x-a", `duplicate header "x-a" (first at line 1:39)`},
		{"header key not a string", "turns: [{stopReason: error, headers: {1: a}}]", "t.yaml:1:39", "turns[0].headers", "header names must be strings, got integer 1"},
		{"jitter duplicate key", "settings: {jitter: {mode: down, mode: full}}", "t.yaml:1:33", "settings.jitter.mode", "duplicate key"},

		// Enumerations.
		{"bad stopReason", "turns:\n  - stopReason: eror\n", "t.yaml:2:17", "turns[0].stopReason", `unknown value "eror" (allowed: stop, length, toolUse, error, aborted)`},
		{"bad variant", "variant: buggy", "t.yaml:1:10", "variant", `unknown value "buggy" (allowed: sound, original)`},
		{"bad do", "actions: [{at: 0, do: retry}]", "t.yaml:1:23", "actions[0].do", `unknown value "retry" (allowed: prompt, abort, abort_retry, set_auto_retry, set_retry_settings, set_auto_compaction, get_state`},
		{"bad state", "expect: {final: {state: done}}", "t.yaml:1:25", "expect.final.state", "(allowed: idle, backoff, continuing, exhausted, cancelled)"},

		// Required and kind-specific keys.
		{"turn without stopReason", "turns:\n  - errorMessage: x\n", "t.yaml:2:5", "turns[0].stopReason", "missing required key"},
		{"action without at", "actions: [{do: abort}]", "t.yaml:1:11", "actions[0].at", "missing required key"},
		{"action without do", "actions: [{at: 0}]", "t.yaml:1:11", "actions[0].do", "missing required key (one of: prompt, abort, abort_retry, set_auto_retry, set_retry_settings, set_auto_compaction, get_state"},
		{"set_auto_retry without enabled", "actions:\n  - at: 0\n    do: abort\n  - at: 10\n    do: set_auto_retry\n", "t.yaml:4:5", "actions[1].enabled", "missing required key for do: set_auto_retry"},
		{"set_auto_retry enabled string", `{"actions":[{"at":0,"do":"set_auto_retry","enabled":"no"}]}`, "t.yaml:1:53", "actions[0].enabled", `expected a boolean (true or false), got string "no"`},
		{"enabled on abort", "actions:\n  - at: 0\n    enabled: true\n    do: abort\n", "t.yaml:3:5", "actions[0].enabled", "not allowed for do: abort (only for set_auto_retry, set_auto_compaction"},
		{"message on get_state", "actions: [{at: 0, do: get_state, message: hi}]", "t.yaml:1:34", "actions[0].message", "not allowed for do: get_state (only for prompt)"},
		{"set_auto_compaction without enabled", "actions: [{at: 0, do: set_auto_compaction}]", "t.yaml:1:11", "actions[0].enabled", "missing required key for do: set_auto_compaction (true or false)"},
		{"set_retry_settings without settings", "actions: [{at: 0, do: set_retry_settings}]", "t.yaml:1:11", "actions[0].settings", "missing required key for do: set_retry_settings (an object of retry settings"},
		{"settings not an object", "actions: [{at: 0, do: set_retry_settings, settings: 3}]", "t.yaml:1:53", "actions[0].settings", "expected an object of retry settings (SPEC §1), merged key by key over those in force, got integer 3"},
		{"settings unknown key", "actions: [{at: 0, do: set_retry_settings, settings: {maxRetriez: 3}}]", "t.yaml:1:54", "actions[0].settings.maxRetriez", "maxRetries"},
		{"settings on abort", "actions: [{at: 0, do: abort, settings: {maxRetries: 1}}]", "t.yaml:1:30", "actions[0].settings", "not allowed for do: abort (only for set_retry_settings)"},

		// Limits.
		{"too many turns", "turns: [" + strings.Repeat("{stopReason: stop},", 10001) + "]", "t.yaml:1:8", "turns", "too many entries: 10001 (at most 10000 allowed)"},
		{"too many actions", `{"actions":[` + strings.TrimSuffix(strings.Repeat(`{"at":0,"do":"abort"},`, 10001), ",") + "]}", "t.yaml:1:12", "actions", "too many entries: 10001"},
		{"size cap", "# " + strings.Repeat("x", 1<<20) + "\n{}", "t.yaml", "", "larger than 1048576 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse("t.yaml", []byte(tc.in))
			if err == nil {
				t.Fatalf("no error; got %+v", sc)
			}
			if sc != nil {
				t.Errorf("scenario %+v returned with error", sc)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *Error", err, err)
			}
			if got := se.Pos.String(); got != tc.pos {
				t.Errorf("pos = %q, want %q (error: %v)", got, tc.pos, err)
			}
			if se.Field != tc.field {
				t.Errorf("field = %q, want %q (error: %v)", se.Field, tc.field, err)
			}
			if !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("msg = %q, want it to contain %q", se.Msg, tc.msg)
			}
			want := tc.pos
			if tc.field != "" {
				want += ": " + tc.field
			}
			want += ": " + se.Msg
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

func TestScenarioErrorString(t *testing.T) {
	e := &Error{Pos: Pos{"file", 3, 14}, Field: "turns[2].stopReason",
		Msg: `unknown value "eror" (allowed: stop, length, toolUse, error, aborted)`}
	want := `file:3:14: turns[2].stopReason: unknown value "eror" (allowed: stop, length, toolUse, error, aborted)`
	if e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
	for _, tc := range []struct {
		pos  Pos
		want string
	}{
		{Pos{"f.yaml", 3, 14}, "f.yaml:3:14"},
		{Pos{"", 3, 14}, "3:14"},
		{Pos{"f.yaml", 3, 0}, "f.yaml:3"},
		{Pos{"f.yaml", 0, 0}, "f.yaml"},
		{Pos{}, ""},
	} {
		if got := tc.pos.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.pos, got, tc.want)
		}
	}
	if got := (&Error{Msg: "m"}).Error(); got != "m" {
		t.Errorf("Error() without pos and field = %q", got)
	}
}

func TestScenarioSettingsErrorUnwrap(t *testing.T) {
	_, err := Parse("t.yaml", []byte("settings: {maxRetries: 5000}"))
	var se *policy.SettingsError
	if !errors.As(err, &se) || se.Field != "maxRetries" {
		t.Fatalf("error %v does not wrap a *policy.SettingsError for maxRetries", err)
	}
}

func TestLoadScenarioFileErrors(t *testing.T) {
	dir := t.TempDir()

	missing := filepath.Join(dir, "missing.yaml")
	_, err := Load(missing)
	var se *Error
	if !errors.As(err, &se) || se.Pos.File != missing || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", 2<<20)+"\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(big)
	if !errors.As(err, &se) || se.Pos != (Pos{File: big}) || !strings.Contains(se.Msg, "larger than 1048576 bytes") {
		t.Errorf("big file: %v", err)
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("turns:\n  - stopReason: stop\n  - {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if want := bad + ":3:5: turns[1].stopReason: missing required key"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("bad file: %v, want prefix %q", err, want)
	}

	// Exactly at the cap is accepted.
	exact := []byte("{}\n#")
	exact = append(exact, strings.Repeat("x", 1<<20-len(exact))...)
	if _, err := Parse("exact.yaml", exact); err != nil {
		t.Errorf("file of exactly 1 MiB: %v", err)
	}
}

func TestScenarioFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"b.yaml", "a.json", "c.yml", "01-x.json",
		"a.out.jsonl", "b.out.jsonl", ".hidden.yaml", "_draft.yaml", "notes.txt", "README.md", "upper.YAML", "x.jsonl",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil { // a directory with a scenario-like name
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub.yaml", "inner.yaml"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	single := filepath.Join(t.TempDir(), "_explicit.txt") // a file is taken as is
	if err := os.WriteFile(single, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := Files(single, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		single,
		filepath.Join(dir, "01-x.json"),
		filepath.Join(dir, "a.json"),
		filepath.Join(dir, "b.yaml"),
		filepath.Join(dir, "c.yml"),
		filepath.Join(dir, "sub.yaml", "inner.yaml"), // subdirectories are read too
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Files = %q\nwant %q", got, want)
	}

	if got, err := Files(); err != nil || len(got) != 0 {
		t.Errorf("Files() = %q, %v", got, err)
	}
	empty := t.TempDir()
	if got, err := Files(empty); err != nil || len(got) != 0 {
		t.Errorf("Files(empty dir) = %q, %v", got, err)
	}
	if _, err := Files(filepath.Join(dir, "nope")); err == nil {
		t.Error("Files(missing path): no error")
	}
}

// TestFindRecursive: a directory stands for its scenario files and those
// of its subdirectories, sorted by path; the skip rules hold in every
// directory, and directories named with '.' or '_' are not read.
func TestFindRecursive(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"b.yaml", "a-b.yaml",
		"a/x.yaml", "a/manifest.json", "a/y.out.jsonl", "a/_draft.yaml", "a/.h.yaml", "a/notes.txt",
		"a/deep/z.json",
		"_drafts/w.yaml", ".git/v.yaml",
		"profiles/codex/01-first.yaml", "profiles/codex/manifest.json", "profiles/pi/01-first.yml",
	} {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, skipped, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, name := range []string{"a-b.yaml", "a/deep/z.json", "a/x.yaml", "b.yaml", "profiles/codex/01-first.yaml", "profiles/pi/01-first.yml"} {
		want = append(want, filepath.Join(dir, filepath.FromSlash(name)))
	}
	if !reflect.DeepEqual(files, want) || len(skipped) != 0 {
		t.Errorf("Find = %q, skipped %q\nwant %q", files, skipped, want)
	}
	// The same tree twice gives the same list: the order does not depend
	// on the file system.
	again, _, _ := Find(dir)
	if !reflect.DeepEqual(again, files) {
		t.Errorf("second Find = %q", again)
	}
}

// TestFindDepthBound: directories more than scnMaxDepth levels below the
// directory given are not read, and are reported.
func TestFindDepthBound(t *testing.T) {
	dir := t.TempDir()
	level := dir
	var want []string
	for i := 1; i <= scnMaxDepth+1; i++ {
		level = filepath.Join(level, "d")
		if err := os.Mkdir(level, 0o755); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(level, "s.yaml")
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if i <= scnMaxDepth {
			want = append(want, f)
		}
	}
	slices.Sort(want) // by path: ".../d/d/s.yaml" before ".../d/s.yaml"
	files, skipped, err := Find(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(files, want) {
		t.Errorf("Find = %q\nwant %q", files, want)
	}
	wantSkipped := []SkippedFile{{Path: level, What: "a directory more than 16 levels deep"}}
	if !reflect.DeepEqual(skipped, wantSkipped) {
		t.Errorf("skipped = %q, want %q", skipped, wantSkipped)
	}
	if got, want := skipped[0].String(), level+": skipped: a directory more than 16 levels deep, not read"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// TestScenarioErrorHostileKeys: keys from the file appear in error lines
// escaped and shortened, so an error is one bounded line that still names
// file:line:col.
func TestScenarioErrorHostileKeys(t *testing.T) {
	// 64 KiB: a thousand times the 64 bytes an error quotes, over yaml's
	// 1024-byte bound on a simple key, far over the 300-byte line bound.
	const n = 64 << 10
	long := strings.Repeat("k", n)
	size := fmt.Sprintf("…(%d bytes)", n)
	tests := []struct {
		name, in string
		pos      string
		field    string // prefix of the Field
	}{
		{"json top-level key", `{"` + long + `": 1}`, "t.yaml:1:2", strings.Repeat("k", 64) + size},
		{"yaml explicit key", "? " + long + "\n: 1\n", "t.yaml:1:3", strings.Repeat("k", 64) + size},
		{"turn key", `{"turns":[{"stopReason":"stop","` + long + `":1}]}`, "t.yaml:1:32", "turns[0]." + strings.Repeat("k", 64) + "…"},
		{"duplicate event key", `{"expect":{"events":[{"` + long[:n/2] + `":1,"` + long[:n/2] + `":2}]}}`, fmt.Sprintf("t.yaml:1:%d", n/2+28), "expect.events[0].kkk"},
		{"event value under a long key", "expect:\n  events:\n    - ? " + long + "\n      : !!binary aGk=\n", "t.yaml:4:9", "expect.events[0].kkk"},
		{"settings key", `{"settings":{"` + long + `":1}}`, "t.yaml:1:14", "settings." + strings.Repeat("k", 64) + size},
		{"jitter key", `{"settings":{"jitter":{"` + long + `":1}}}`, "t.yaml:1:24", "settings.jitter." + strings.Repeat("k", 64) + "…"},
		{"long classify value", `{"settings":{"classify":"` + long + `"}}`, "t.yaml:1:25", "settings.classify"},
		{"long pattern", `{"settings":{"retryablePatterns":["(` + long + `"]}}`, "t.yaml:1:34", "settings.retryablePatterns"},
		{"long fallback value", `{"settings":{"fallback":"` + long + `"}}`, "t.yaml:1:25", "settings.fallback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tt.in))
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *Error", err)
			}
			line := se.Error()
			// Bounded whatever the input: 300 bytes besides the list of the
			// allowed keys, which is the schema's, not the input's.
			if len(allowedList.ReplaceAllString(line, "")) > 300 {
				t.Errorf("error line is %d bytes: %.300s...", len(line), line)
			}
			if !strings.HasPrefix(line, tt.pos+": ") {
				t.Errorf("error %.300q does not start with %q", line, tt.pos)
			}
			if !strings.HasPrefix(se.Field, tt.field) {
				t.Errorf("field %.300q, want prefix %q", se.Field, tt.field)
			}
		})
	}

	// Control characters in a key are escaped in the field path and in
	// the message.
	_, err := Parse("t.yaml", []byte(`{"turns":[{"stopReason":"stop","a\u001b[8m\nPASS\u202e":1}]}`))
	if err == nil {
		t.Fatal("no error")
	}
	want := `t.yaml:1:32: turns[0].a\x1b[8m\nPASS\u202e: unknown key "a\x1b[8m\nPASS\u202e" (allowed: `
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant prefix %q", err, want)
	}

	// Nested long keys: the field path keeps its start and its end.
	var b strings.Builder
	b.WriteString(`{"expect":{"events":[`)
	for range 40 {
		b.WriteString(`{"` + strings.Repeat("n", 100) + `":`)
	}
	b.WriteString(`{"deep": .5}`)
	// Not JSON: read as YAML, whose flow mappings take the same text.
	_, err = Parse("t.yaml", []byte(strings.ReplaceAll(b.String(), `{"deep": .5}`, `{"deep": !!binary aGk=}`)+strings.Repeat("}", 40)+"]}}"))
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("nested keys: error %v, want a *Error", err)
	}
	if len(se.Error()) > 400 || !strings.HasPrefix(se.Field, "expect.events[0].nnn") || !strings.HasSuffix(se.Field, ".deep") || !strings.Contains(se.Field, "…") {
		t.Errorf("nested keys: %d bytes, field %q", len(se.Error()), se.Field)
	}
}

// TestScenarioExpectSchema: expected events are checked against the
// trace's schema when the file is loaded: an unknown type, an unknown field
// for the type (or for any type, without one), a value of the wrong kind,
// and the same inside nested objects are load errors naming what is
// allowed, not failed expectations.
func TestScenarioExpectSchema(t *testing.T) {
	tests := []struct{ event, want string }{
		{`{type: nope}`, `e.yaml:2:19: expect.events[0].type: unknown trace line type "nope" (allowed: agent_run, message_end,`},
		{`{type: 7}`, `e.yaml:2:19: expect.events[0].type: expected the name of a trace line type, got integer 7`},
		{`{type: agent_run_end, kind: prompt}`, `e.yaml:2:34: expect.events[0].kind: unknown field for type agent_run_end (allowed: t, type)`},
		{`{type: prompt_resolved, prompt: "1"}`, `e.yaml:2:44: expect.events[0].prompt: expected a number, got string "1"`},
		{`{type: final, unresolvedPrompts: [1, x]}`, `e.yaml:2:45: expect.events[0].unresolvedPrompts: expected a list of numbers`},
		{`{type: response, data: {nope: 1}}`, `e.yaml:2:36: expect.events[0].data.nope: unknown field of data (allowed: isStreaming, messageCount,`},
		{`{type: response, data: {retryState: 1}}`, `e.yaml:2:48: expect.events[0].data.retryState: expected a string, got integer 1`},
		{`{type: message_end, message: stop}`, `e.yaml:2:41: expect.events[0].message: expected an object (the fields role, stopReason, errorMessage), got string "stop"`},
		{`{nope: 1}`, `e.yaml:2:13: expect.events[0].nope: no trace line has this field`},
		{`{attempt: "x"}`, `e.yaml:2:22: expect.events[0].attempt: expected a number, got string "x"`},
		{`{type: mark_usage_limit_reached, retryAfterMs: true}`, `expect.events[0].retryAfterMs: expected a number or null, got boolean true`},
	}
	for _, tt := range tests {
		_, err := Parse("e.yaml", []byte("expect:\n  events: ["+tt.event+"]\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v\nwant it to contain %s", tt.event, err, tt.want)
		}
	}
	// Subsets, nulls where allowed, and fields of some type without a type
	// are fine.
	for _, ok := range []string{`{type: response, data: {isStreaming: true}}`, `{retryAfterMs: null}`, `{attempt: 2}`,
		`{type: message_end, message: {}}`, `{t: 5, type: auto_retry_end}`} {
		if _, err := Parse("e.yaml", []byte("expect:\n  events: ["+ok+"]\n")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestParseDocumentMarkers: a single document with "---" before it or
// "..." after it (read by the Decoder, not the one-document fast path)
// loads as the bare document does.
func TestParseDocumentMarkers(t *testing.T) {
	const body = "name: marked\nturns:\n  - {stopReason: error, errorMessage: overloaded}\n"
	want, err := Parse("t.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"---\n" + body, body + "...\n", "--- # c\n" + body + "...\n"} {
		got, err := Parse("t.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got.Name != want.Name || len(got.Turns) != 1 || got.Turns[0].ErrorMessage != "overloaded" {
			t.Errorf("%q: got %+v", in, got)
		}
	}
}

// allowedList is an error's list of the allowed keys.
var allowedList = regexp.MustCompile(`\(allowed: [^)]*\)`)

// TestUnifiedSpellings: a scenario file takes the spellings every file
// kind shares: a duration as an integer number of milliseconds or a Go
// duration (a fleet file's; whole milliseconds), and compaction as on, off
// or fail (the fleet's) or {enabled, succeed}; old and new read the same.
func TestUnifiedSpellings(t *testing.T) {
	read := func(src string) *Scenario {
		t.Helper()
		sc, err := Parse("t.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		return sc
	}
	for _, src := range []string{
		"turns:\n  - {stopReason: stop, durationMs: 1500}\nactions:\n  - {at: 2000, do: abort}\n",
		"turns:\n  - {stopReason: stop, durationMs: 1.5s}\nactions:\n  - {at: \"2s\", do: abort}\n",
	} {
		if sc := read(src); sc.Turns[0].Duration != 1500*time.Millisecond || sc.Actions[0].At != 2*time.Second {
			t.Errorf("%q: turn %v, action at %v", src, sc.Turns[0].Duration, sc.Actions[0].At)
		}
	}
	for src, want := range map[string]Compaction{
		"compaction: on\n":               {Enabled: true, Succeed: true},
		"compaction: off\n":              {},
		"compaction: fail\n":             {Enabled: true},
		"compaction: {succeed: false}\n": {Enabled: true},
		"compaction: {enabled: false}\n": {Succeed: true},
		"compaction: {enabled: true}\n":  {Enabled: true, Succeed: true},
	} {
		if got := read(src).Compaction; got != want {
			t.Errorf("%q: %+v, want %+v", src, got, want)
		}
	}
	for src, want := range map[string]string{
		"turns:\n  - {stopReason: stop, durationMs: 1.5ms}\n": `turns[0].durationMs: "1.5ms" is out of range (allowed: a duration from 0s to`,
		"turns:\n  - {stopReason: stop, durationMs: 2x}\n":    `turns[0].durationMs: expected a duration from 0s to`,
		"compaction: maybe\n":                                 `compaction: `,
	} {
		if _, err := Parse("t.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}
