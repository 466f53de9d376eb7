package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
)

// FuzzLoadScenario checks that Parse never panics, that every error
// is a *Error with a usable message and position, and that every
// accepted scenario respects the documented ranges.
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
		// Broken.
		"",
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
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile(filepath.Join("testdata", "scenario", "all-keys.yaml")); err == nil {
		f.Add(data)
	}
	if data, err := os.ReadFile(filepath.Join(conformanceDir, "14-abort-during-retried-run-stale-counter.json")); err == nil {
		f.Add(data)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 { // keep inputs small; the 1 MiB cap is tested elsewhere
			data = data[:64<<10]
		}
		sc, err := Parse("fuzz.yaml", data)
		if err != nil {
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
			if se.Pos.File != "fuzz.yaml" {
				t.Fatalf("error file %q, want fuzz.yaml: %v", se.Pos.File, err)
			}
			if se.Pos.Line < 0 || se.Pos.Column < 0 || (se.Pos.Column > 0 && se.Pos.Line < 1) {
				t.Fatalf("bad position %#v: %v", se.Pos, err)
			}
			return
		}
		if sc == nil {
			t.Fatal("nil scenario without error")
		}
		if err := sc.Settings.Validate(); err != nil {
			t.Fatalf("accepted invalid settings: %v", err)
		}
		if sc.Variant != "sound" && sc.Variant != "original" {
			t.Fatalf("variant %q", sc.Variant)
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
	})
}
