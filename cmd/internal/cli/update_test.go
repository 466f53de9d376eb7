package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The files of TestRunUpdate: their expect blocks are stale or missing;
// around them, comments and layout that --update keeps.
const (
	updateYAMLHead = "# A scenario whose expectations are out of date.\nname: stale   # the name\n" +
		"turns:\n  - {stopReason: error, errorMessage: \"529 overloaded_error\"}\n\n  # then success\n  - {stopReason: stop}\n" +
		"# what to expect (this comment stays)\n"
	updateYAMLOld  = "expect:       # this one goes\n  events:\n    - {type: auto_retry_end, success: false}\n  final: {state: exhausted}\n"
	updateYAMLTail = "\n# the actions (this comment stays)\nactions: []\n"

	updateYAMLNew = `expect:
  events:
    - {t: 0, type: agent_run, kind: prompt, model: claude-sonnet-4-5}
    - {t: 0, type: auto_retry_start, attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "529 overloaded_error"}
    - {t: 2000, type: agent_run, kind: continue, model: claude-sonnet-4-5}
    - {t: 2000, type: auto_retry_end, success: true, attempt: 1}
    - {t: 2000, type: prompt_resolved, prompt: 1}
  final: {state: idle, attempt: 0, isRetrying: false, unresolvedPrompts: []}
`

	updateJSONHead = "{\n    \"name\": \"json\",\n    \"expect\": "
	updateJSONOld  = "{\"final\": {\"state\": \"backoff\"}}"
	updateJSONTail = ",\n    \"turns\": [{\"stopReason\": \"stop\"}]\n}\n"
	updateJSONNew  = `{
        "events": [
            {"t": 0, "type": "agent_run", "kind": "prompt", "model": "claude-sonnet-4-5"},
            {"t": 0, "type": "prompt_resolved", "prompt": 1}
        ],
        "final": {"state": "idle", "attempt": 0, "isRetrying": false, "unresolvedPrompts": []}
    }`

	updateNone    = "name: none\nturns: [{stopReason: stop}]  # no expect yet"
	updateNoneNew = "name: none\nturns: [{stopReason: stop}]  # no expect yet\n" + `expect:
  events:
    - {t: 0, type: agent_run, kind: prompt, model: claude-sonnet-4-5}
    - {t: 0, type: prompt_resolved, prompt: 1}
  final: {state: idle, attempt: 0, isRetrying: false, unresolvedPrompts: []}
`
)

// TestRunUpdate: run --update writes each file's expect block from its
// run, every other byte of the file kept (comments included, in YAML and
// JSON, a file without expect gets one at its end); the updated files
// pass and are no longer warned about; a second update changes nothing.
func TestRunUpdate(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml": updateYAMLHead + updateYAMLOld + updateYAMLTail,
		"b.json": updateJSONHead + updateJSONOld + updateJSONTail,
		"c.yaml": updateNone,
	})
	if err := os.Chmod(filepath.Join(dir, "a.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runMain(t, "run", dir)
	if code != exitFail || !strings.Contains(errOut, "c.yaml: no expect block") {
		t.Fatalf("before the update: exit %d, want 1 and a warning about c.yaml\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	code, out, errOut = runMain(t, "run", "--update", dir)
	want := "UPDATED  stale  (" + filepath.Join(dir, "a.yaml") + ")\n" +
		"UPDATED  json  (" + filepath.Join(dir, "b.json") + ")\n" +
		"UPDATED  none  (" + filepath.Join(dir, "c.yaml") + ")\n" +
		"3 updated, 0 unchanged\n"
	if code != exitOK || errOut != "" || out != want {
		t.Fatalf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
	for name, want := range map[string]string{
		"a.yaml": updateYAMLHead + updateYAMLNew + updateYAMLTail,
		"b.json": updateJSONHead + updateJSONNew + updateJSONTail,
		"c.yaml": updateNoneNew,
	} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s after --update:\n%s\nwant:\n%s", name, got, want)
		}
	}
	if info, err := os.Stat(filepath.Join(dir, "a.yaml")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("a.yaml's permissions changed: %v %v", info.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d entries in the directory, want the 3 files (no temporary file left)", len(entries))
	}

	code, out, errOut = runMain(t, "run", dir)
	if code != exitOK || errOut != "" || lastLine(out) != "3 passed, 0 failed" {
		t.Fatalf("after the update: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, _ = runMain(t, "run", "--update", dir)
	if code != exitOK || !strings.HasPrefix(out, "UNCHANGED  stale  (") || lastLine(out) != "0 updated, 3 unchanged" {
		t.Fatalf("a second update: exit %d\n%s", code, out)
	}
}

// TestRunUpdateRefuses: what --update cannot do is an error that says so,
// and leaves the file as it was.
func TestRunUpdateRefuses(t *testing.T) {
	flow := "{name: flow, turns: [{stopReason: stop}]}\n"
	dir := writeFiles(t, map[string]string{"flow.yaml": flow, "ok.yaml": passScenario})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"flow-style YAML", []string{"run", "--update", filepath.Join(dir, "flow.yaml")}, exitUsage,
			"retrysim run: " + filepath.Join(dir, "flow.yaml") + ": not updated: the top-level mapping is written in flow style"},
		{"with --variant", []string{"run", "--update", "--variant", "original", dir}, exitUsage, "retrysim run: --update writes what each file does as it is: it takes no --variant or --profile"},
		{"with --profile", []string{"run", "--update", "--profile", "pi", dir}, exitUsage, "it takes no --variant or --profile"},
		{"standard input", []string{"run", "--update", "-"}, exitUsage, "retrysim run: --update rewrites files: it cannot update - (standard input)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, want %d; stderr lacks %q:\n%s\nstdout:\n%s", code, tt.code, tt.want, errOut, out)
			}
			for name, text := range map[string]string{"flow.yaml": flow, "ok.yaml": passScenario} {
				if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != text {
					t.Errorf("%s changed:\n%s", name, got)
				}
			}
		})
	}
}
