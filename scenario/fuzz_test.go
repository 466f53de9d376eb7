package scenario

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
)

// FuzzLoadScenario checks that Parse never panics, that every error
// is a *Error with a usable message and position (inside the file; a
// syntax error always has one, but for characters YAML does not allow
// in a text it cannot read), and that every accepted scenario respects
// the documented ranges. Each input is read both as YAML and as JSON
// (a .json name); a JSON file's errors never mention YAML.
func FuzzLoadScenario(f *testing.F) {
	seeds := []string{
		// Valid YAML and JSON.
		"{}",
		"turns:\n  - stopReason: error\n    errorMessage: 529 overloaded_error\n  - stopReason: stop\n",
		"settings: {enabled: true, maxRetries: 3, baseDelayMs: 2000}\nactions:\n  - {at: 1000, do: set_auto_retry, enabled: false}\n  - {at: 2000, do: prompt, message: again, id: p2}\n",
		`{"settings":{"enabled":true,"maxRetries":3,"baseDelayMs":2000},"contextWindow":200000,
 "turns":[{"stopReason":"error","errorMessage":"529 overloaded_error","usage":{"input":190000,"cacheRead":20000}},{"stopReason":"stop"}],
 "actions":[{"at":500,"do":"get_state","id":"s1"},{"at":1000,"do":"abort_retry","id":"r1"}]}`,
		`{"prompt":"a\/b \u00e9 \ud83d\ude00","expect":{"events":[{"type":"agent_run","t":0,"x":[1,{"y":null}]}],"final":{"state":"idle","unresolvedPrompts":[]}}}`,
		"expect:\n  events:\n    - {type: auto_retry_start, attempt: 1, delayMs: 2000}\n  final: {state: exhausted, attempt: 3, isRetrying: false}\n",
		"profile: codex\nsettings: {maxRetries: 1, jitter: {ratio: 0.5}, retryAfter: {use: floor}, fallback: [a]}\n",
		`{"profile":"omp-2026-06","settings":{"persistent":true,"retryablePatterns":["x+"],"classify":"strict"}}`,
		"seed: 7\nrandom: {fixed: 0.5}\nturns: [{stopReason: error, status: 429, headers: {retry-after: \"2\"}}]\n",
		// Broken.
		"",
		"seed: 0\nrandom: {fixed: 1}\n",
		"turns: [{stopReason: error, status: 99, headers: {Retry-After: 2}}]\n",
		"variant: original\nprofile: pi\n",
		"settings: {jitter: {mode: down, ratio: 2}, retryAfter: [1]}\n",
		"profile: omp-2026-06\nsettings: {baseDelayMs: 1e9, retryablePatterns: [\"(\"]}\n",
		"---\n",
		"- a\n- b\n",
		"a: 1\n---\nb: 2\n",
		"turns: [\n",
		"x: &a [*a, *a]\ny: *a\n",
		"settings: {maxRetries: \"3\", enabled: yes}\n",
		"settings: {<<: {enabled: true}}\n",
		"turns:\n  - stopReasn: stop\n",
		"actions: [{at: -1, do: set_auto_retry}]\n",
		"contextWindow: 99999999999999999999\n",
		`{"turns":[{"stopReason":"stop","stopReason":"stop"}]}`,
		"expect: {events: [{t: .nan, !!binary aGk=: 1}]}\n",
		"\t{\n",
		"? [a]\n: b\n",
		"!!map {prompt: !!int x}\n",
		// Hostile text: control characters and long keys.
		"name: \"x\\nPASS  forged\\e[8m\"\nturns: [{stopReason: stop, \"\\u202e\\e[8m\": 1}]\n",
		`{"` + strings.Repeat("k", 3000) + `": 1}`,
		"prompt: !!int \"\\e[8m\"\n",
		"x: &\u202e\u0085 1\ny: *\u202e\u0085\n",
		// Syntax errors, one of each kind located (syntax_test.go).
		"name: x\nprompt: \"a\\\"b\nturns: []\n",
		"name: x\nprompt: 'abc\n",
		"name: x\nprompt: \"a\\qb\"\n",
		"name: x\nsettings: {enabled: true\nturns: []\n",
		"turns: [\n  {stopReason: stop},\n  {stopReason: error\n]\n",
		"actions: [{at: 1000, do: abort} {at: 2000, do: abort}]\n",
		"actions:\n  - {\"at\": 1000 \"do\": \"abort\"}\n",
		"turns:\n  - stopReason: stop\n errorMessage: x\n",
		"turns:\n  - stopReason: stop\n   - stopReason: error\n",
		"name: x\nsettings:\n  enabled: true\n   maxRetries: 3\n",
		"a:\n  b: 1\n  c\n",
		"name: x\nsettings:\n  enabled: true\n\tmaxRetries: 3\n",
		"prompt: |\n  a\n\tb\n",
		"name: x\n  prompt: y\n",
		"name: x\nprompt: @x\n",
		"name: x\nprompt: *nope\n",
		"name: x\r\nprompt: \x01\r\n",
		"a: 1\n---\nb: [\n",
		`{"a":1,}`,
		"{\n \"turns\": [{\"stopReason\": \"stop\"},\n ],\n}",
		"{\"name\": \"x\"\n \"prompt\": \"y\"}",
		"{\"turns\": [\n  {\"stopReason\": \"stop\"}\n",
		`{"name": "abc`,
		"{}\n{}",
		"\ufeff{\"name\": \"x\"}",
		"{\"name\": \"a\xffb\"}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	for _, name := range []string{"all-keys.yaml", "new-keys.yaml"} {
		if data, err := os.ReadFile(filepath.Join("testdata", "scenario", name)); err == nil {
			f.Add(data)
		}
	}
	if data, err := os.ReadFile(filepath.Join(conformanceDir, "14-abort-during-retried-run-stale-counter.json")); err == nil {
		f.Add(data)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 { // keep inputs small; the 1 MiB cap is tested elsewhere
			data = data[:64<<10]
		}
		for _, name := range []string{"fuzz.yaml", "fuzz.json"} {
			sc, err := Parse(name, data)
			if err != nil {
				checkFuzzError(t, name, data, sc, err)
				continue
			}
			if !utf8.Valid(data) { // neither YAML nor JSON reads a byte that is not UTF-8
				t.Fatalf("%s: not UTF-8, loaded without an error", name)
			}
			checkFuzzScenario(t, sc)
		}
	})
}

// checkFuzzError checks an error of Parse(name, data).
func checkFuzzError(t *testing.T, name string, data []byte, sc *Scenario, err error) {
	t.Helper()
	if sc != nil {
		t.Fatalf("scenario returned with error %v", err)
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error %T %v is not a *Error", err, err)
	}
	if se.Error() == "" || se.Msg == "" {
		t.Fatalf("empty error message: %#v", se)
	}
	// One line, nothing a terminal would act on, bounded
	// whatever the size of the keys and values.
	if line := se.Error(); termsafe.Text(line) != line || len(line) > 2048 || len(se.Field) > 300 {
		t.Fatalf("error line not safe or too long (%d bytes, field %d bytes): %.500q", len(line), len(se.Field), line)
	}
	if se.Pos.File != name {
		t.Fatalf("error file %q, want %s: %v", se.Pos.File, name, err)
	}
	if se.Pos.Line < 0 || se.Pos.Column < 0 || (se.Pos.Column > 0 && se.Pos.Line < 1) {
		t.Fatalf("bad position %#v: %v", se.Pos, err)
	}
	// A syntax error has a position, inside the file: a line it has, a
	// column up to one past the line's last character. Lines are counted
	// as the YAML library counts them (JSON breaks only at line feeds).
	// Only a character YAML does not allow in a text may leave it unknown.
	if !strings.HasPrefix(se.Msg, "invalid YAML: ") && !strings.HasPrefix(se.Msg, "invalid JSON: ") {
		return
	}
	if se.Pos.Line < 1 || se.Pos.Column < 1 {
		if !strings.Contains(se.Msg, "UTF-") && !strings.Contains(se.Msg, "control characters") && !strings.Contains(se.Msg, "Unicode") {
			t.Fatalf("syntax error without line and column: %v", err)
		}
	} else {
		lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n").Replace(string(data)), "\n")
		if name == "fuzz.json" || json.Valid(data) { // read as JSON
			lines = strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n")
		}
		if se.Pos.Line > len(lines) || se.Pos.Column > utf8.RuneCountInString(lines[se.Pos.Line-1])+1 {
			t.Fatalf("position %d:%d outside the file (%d lines): %v", se.Pos.Line, se.Pos.Column, len(lines), err)
		}
	}
	if name == "fuzz.json" && strings.Contains(se.Msg, "YAML") {
		t.Fatalf("a JSON file's error mentions YAML: %v", err)
	}
}

// checkFuzzScenario checks that an accepted scenario is in range.
func checkFuzzScenario(t *testing.T, sc *Scenario) {
	t.Helper()
	if sc == nil {
		t.Fatal("nil scenario without error")
	}
	if err := sc.Settings.Validate(); err != nil {
		t.Fatalf("accepted invalid settings: %v", err)
	}
	prof, err := policy.ProfileByName(sc.Profile)
	if err != nil || prof.Name != sc.Profile {
		t.Fatalf("profile %q: %v", sc.Profile, err)
	}
	if sc.Variant == "original" && sc.Profile != policy.DefaultProfile {
		t.Fatalf("variant original with profile %s", sc.Profile)
	}
	if want, err := prof.Settings.Apply(sc.SettingsPatch); len(sc.SettingsPatch) > 0 && (err != nil || !want.Equal(sc.Settings)) {
		t.Fatalf("settings %+v are not profile %s with patch %s (%+v, %v)", sc.Settings, sc.Profile, sc.SettingsPatch, want, err)
	}
	if sc.Variant != "sound" && sc.Variant != "original" {
		t.Fatalf("variant %q", sc.Variant)
	}
	if sc.Seed < 1 || sc.RandomFixed < 0 || sc.RandomFixed >= 1 || (!sc.HasRandomFixed && sc.RandomFixed != 0) {
		t.Fatalf("seed %d, random %v %v", sc.Seed, sc.HasRandomFixed, sc.RandomFixed)
	}
	if sc.ContextWindow < 0 || sc.EpochMs < 0 {
		t.Fatalf("negative contextWindow %d or epochMs %d", sc.ContextWindow, sc.EpochMs)
	}
	if len(sc.Turns) > 10000 || len(sc.Actions) > 10000 {
		t.Fatalf("%d turns, %d actions", len(sc.Turns), len(sc.Actions))
	}
	for i, tr := range sc.Turns {
		switch tr.StopReason {
		case policy.StopReasonStop, policy.StopReasonLength, policy.StopReasonToolUse,
			policy.StopReasonError, policy.StopReasonAborted:
		default:
			t.Fatalf("turns[%d]: stop reason %q", i, tr.StopReason)
		}
		if tr.Duration < 0 || tr.Usage.Input < 0 || tr.Usage.CacheRead < 0 || tr.Pos.Line < 1 {
			t.Fatalf("turns[%d] = %+v", i, tr)
		}
		if r := tr.Reply(); r.ValidateHTTP() != nil || r.Status != tr.Status || (tr.Headers != nil && len(tr.Headers) == 0) {
			t.Fatalf("turns[%d]: status %d, headers %q: %v", i, tr.Status, tr.Headers, r.ValidateHTTP())
		}
	}
	for i, a := range sc.Actions {
		if a.At < 0 || a.Pos.Line < 1 {
			t.Fatalf("actions[%d] = %+v", i, a)
		}
		switch a.Do {
		case "set_auto_retry":
			if a.Enabled == nil {
				t.Fatalf("actions[%d]: set_auto_retry without enabled", i)
			}
		case "abort_retry", "abort", "prompt", "get_state":
			if a.Enabled != nil {
				t.Fatalf("actions[%d]: enabled on %s", i, a.Do)
			}
		default:
			t.Fatalf("actions[%d]: do %q", i, a.Do)
		}
		if a.Message != "" && a.Do != "prompt" {
			t.Fatalf("actions[%d]: message on %s", i, a.Do)
		}
	}
	if x := sc.Expect; x != nil {
		for i, ev := range x.Events {
			if len(ev.Keys) != len(ev.Fields) {
				t.Fatalf("events[%d]: keys %q vs fields %v", i, ev.Keys, ev.Fields)
			}
		}
		if fin := x.Final; fin != nil && fin.HasUnresolved != (fin.UnresolvedPrompts != nil) {
			t.Fatalf("final: HasUnresolved %v, UnresolvedPrompts %#v", fin.HasUnresolved, fin.UnresolvedPrompts)
		}
	}
}
