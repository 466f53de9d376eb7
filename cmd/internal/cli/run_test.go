package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

const threeErrorsTurns = `turns:
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 503 service unavailable}
  - {stopReason: error, errorMessage: fetch failed}
  - {stopReason: stop}
`

// passScenario's expectations hold.
const passScenario = "name: passing\n" + threeErrorsTurns + `expect:
  events:
    - {t: 0, type: auto_retry_start, attempt: 1, delayMs: 2000}
    - {t: 14000, type: auto_retry_end, success: true, attempt: 3}
    - {type: prompt_resolved, prompt: 1}
  final: {state: idle, attempt: 0, isRetrying: false, unresolvedPrompts: []}
`

// failScenario's event (line 9, column 7) and final state (line 10,
// column 10) do not hold.
const failScenario = "name: failing\n" + threeErrorsTurns + `expect:
  events:
    - {type: auto_retry_end, success: true, attempt: 2}
  final: {state: exhausted}
`

// badScenario has an unknown stopReason at line 2, column 42.
const badScenario = "name: bad\nturns: [{stopReason: stop}, {stopReason: bogus}]\n"

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestRun(t *testing.T) {
	originalKnown := false
	if _, err := policy.VariantByName("original"); err == nil {
		originalKnown = true
	}
	passOnly := writeFiles(t, map[string]string{"pass.yaml": passScenario})
	mixed := writeFiles(t, map[string]string{"a-pass.yaml": passScenario, "b-fail.yaml": failScenario, "notes.txt": "x"})
	invalid := writeFiles(t, map[string]string{"a-pass.yaml": passScenario, "b-bad.yaml": badScenario})
	original := writeFiles(t, map[string]string{"orig.yaml": "variant: original\nturns: [{stopReason: stop}]\n"})
	empty := t.TempDir()

	tests := []struct {
		name           string
		args           []string
		code           int
		stdout         []string // substrings, in order
		closing        string
		stderr         []string
		noStderr       bool
		skipIfOriginal bool // run only while "original" is unknown
	}{
		{
			name:     "all pass",
			args:     []string{"run", passOnly},
			code:     exitOK,
			stdout:   []string{"PASS  passing  (" + filepath.Join(passOnly, "pass.yaml") + ")\n"},
			closing:  "1 passed, 0 failed",
			noStderr: true,
		},
		{
			name: "one passes, one fails",
			args: []string{"run", mixed},
			code: exitFail,
			stdout: []string{
				"PASS  passing  (" + filepath.Join(mixed, "a-pass.yaml") + ")\n",
				"FAIL  failing  (" + filepath.Join(mixed, "b-fail.yaml") + ")\n",
				"    " + filepath.Join(mixed, "b-fail.yaml") + `:9:7: expect.events[0] {"type":"auto_retry_end","success":true,"attempt":2}: ` +
					"no matching line in the trace",
				"nearest: trace line ",
				"has attempt=3\n",
				"    " + filepath.Join(mixed, "b-fail.yaml") + `:10:10: expect.final.state: got "idle", want "exhausted"` + "\n",
			},
			closing:  "1 passed, 1 failed",
			noStderr: true,
		},
		{
			name:    "files and directories mixed, flags after paths",
			args:    []string{"run", filepath.Join(mixed, "b-fail.yaml"), passOnly, "--variant", "sound"},
			code:    exitFail,
			stdout:  []string{"FAIL  failing", "PASS  passing"},
			closing: "1 passed, 1 failed",
		},
		{
			name:    "--variant=sound before paths",
			args:    []string{"run", "--variant=sound", passOnly},
			code:    exitOK,
			closing: "1 passed, 0 failed",
		},
		{
			name:    "invalid file: the valid ones still run",
			args:    []string{"run", invalid},
			code:    exitUsage,
			stdout:  []string{"PASS  passing"},
			closing: "1 passed, 1 failed (1 invalid)", // issue 19 §5: an invalid file counts as failed
			stderr:  []string{filepath.Join(invalid, "b-bad.yaml") + `:2:42: turns[1].stopReason: unknown value "bogus"`, "1 invalid"},
		},
		{
			name:    "missing path",
			args:    []string{"run", filepath.Join(empty, "nope.yaml"), passOnly},
			code:    exitUsage,
			stdout:  []string{"PASS  passing"},
			closing: "1 passed, 1 failed (1 invalid)",
			stderr:  []string{"nope.yaml", "no such file"},
		},
		{
			name:    "directory without scenarios",
			args:    []string{"run", empty},
			code:    exitUsage,
			closing: "0 passed, 1 failed (1 invalid)",
			stderr:  []string{"no scenario files"},
		},
		{
			name:           "scenario of an unknown variant",
			args:           []string{"run", original},
			code:           exitUsage,
			closing:        "0 passed, 1 failed (1 invalid)",
			stderr:         []string{filepath.Join(original, "orig.yaml") + `: variant: unknown variant "original"`},
			skipIfOriginal: true,
		},
		{
			name:    "conformance file",
			args:    []string{"run", filepath.Join(publicDir, "03-three-errors-then-success.json")},
			code:    exitOK,
			stdout:  []string{"PASS  03-three-errors-then-success  (" + filepath.Join(publicDir, "03-three-errors-then-success.json") + ")"},
			closing: "1 passed, 0 failed",
		},
		{name: "no paths", args: []string{"run"}, code: exitUsage, stderr: []string{"no scenario paths given"}},
		{name: "unknown --variant", args: []string{"run", passOnly, "--variant", "nope"}, code: exitUsage, stderr: []string{`unknown variant "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skipIfOriginal && originalKnown {
				t.Skip(`the "original" variant exists now`)
			}
			code, out, errOut := runMain(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			wantInOrder(t, out, tt.stdout)
			if tt.closing != "" && lastLine(out) != tt.closing {
				t.Errorf("closing line %q, want %q\nstdout:\n%s", lastLine(out), tt.closing, out)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.noStderr && errOut != "" {
				t.Errorf("stderr not empty:\n%s", errOut)
			}
		})
	}
}

// TestRunOriginalVariant runs a scenario of the "original" variant once it
// exists: it must run (exit 0 or 1), not be reported invalid.
func TestRunOriginalVariant(t *testing.T) {
	if _, err := policy.VariantByName("original"); err != nil {
		t.Skip(`no "original" variant yet`)
	}
	dir := writeFiles(t, map[string]string{"orig.yaml": "variant: original\nturns: [{stopReason: stop}]\n"})
	code, out, errOut := runMain(t, "run", dir)
	if code != exitOK || lastLine(out) != "1 passed, 0 failed" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestRunEscapesScenarioText: what a scenario controls (its name, its file
// name, the values its expectations quote) cannot forge PASS lines or hide
// the summary: each scenario is one PASS line, or one FAIL line and its
// failures, control characters printed escaped, other text as it is.
func TestRunEscapesScenarioText(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a-newline.yaml": "name: \"x\\nPASS  forged\"\nturns: [{stopReason: stop}]\n",
		"b-conceal.yaml": "name: \"\\x1b[8m\"\nturns: [{stopReason: stop}]\n",
		"c-thai.yaml":    "name: \"ทดสอบ 😀\"\nturns: [{stopReason: stop}]\n",
		"d-fail.yaml": "name: \"bidi \\u202eLIAF\"\nturns: [{stopReason: stop}]\n" +
			"expect: {events: [{type: agent_run, kind: \"prompt\\u202e\\x7f\\u0085\\x1b[2J\"}]}\n",
		// The default name is the file name, which may hold a newline.
		"e\nPASS  fake.yaml": "turns: [{stopReason: stop}]\n",
	})
	code, out, errOut := runMain(t, "run", dir)
	if code != exitFail {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitFail, out, errOut)
	}
	// The files without expect are warned about, their names escaped.
	for _, l := range strings.Split(strings.TrimSuffix(errOut, "\n"), "\n") {
		if !strings.HasPrefix(l, "retrysim run: warning: ") || !strings.Contains(l, ": no expect block") {
			t.Errorf("stderr line %q is not a warning about a file without expect", l)
		}
	}
	if n := strings.Count(errOut, "no expect block"); n != 4 {
		t.Errorf("%d warnings, want 4 (the files without expect):\n%s", n, errOut)
	}
	if strings.ContainsAny(out+errOut, "\x1b\x7f\u0085\u202e") {
		t.Errorf("control characters reach stdout:\n%q", out)
	}
	want := []string{
		"PASS  x\\nPASS  forged  (" + filepath.Join(dir, "a-newline.yaml") + ")",
		"PASS  \\x1b[8m  (" + filepath.Join(dir, "b-conceal.yaml") + ")",
		"PASS  ทดสอบ 😀  (" + filepath.Join(dir, "c-thai.yaml") + ")",
		"FAIL  bidi \\u202eLIAF  (" + filepath.Join(dir, "d-fail.yaml") + ")",
		"    " + filepath.Join(dir, "d-fail.yaml") + `:3:19: expect.events[0] {"type":"agent_run","kind":"prompt\u202e\x7f\u0085\u001b[2J"}: no matching line in the trace`,
		"PASS  e\\nPASS  fake  (" + filepath.Join(dir, "e\\nPASS  fake.yaml") + ")",
		"4 passed, 1 failed",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n%q\nwant prefix\n%q", i+1, lines[i], w)
		}
	}
}

// TestRunEscapesErrors: an invalid file's error line on stderr is escaped
// and bounded, and still names file:line:col.
func TestRunEscapesErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a-long.json": `{"` + strings.Repeat("k", 1_000_000) + `": 1}`,
		"b-esc.yaml":  "turns: [{stopReason: stop, \"\\e[8m\\n\": 1}]\n",
	})
	code, out, errOut := runMain(t, "run", dir)
	if code != exitUsage || lastLine(out) != "0 passed, 2 failed (2 invalid)" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%.2000s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d stderr lines, want 3:\n%.2000q", len(lines), errOut)
	}
	long, esc := lines[0], lines[1]
	longFile := "retrysim run: " + filepath.Join(dir, "a-long.json")
	// Bounded: under 300 bytes besides the file name and the list of the
	// allowed keys (the schema's, not the input's).
	if !strings.HasPrefix(long, longFile+":1:2: kkkk") || len(regexp.MustCompile(`\(allowed: [^)]*\)`).ReplaceAllString(long, ""))-len(longFile) > 300 {
		t.Errorf("long key: %d bytes: %.400q", len(long), long)
	}
	if want := "retrysim run: " + filepath.Join(dir, "b-esc.yaml") + `:1:28: turns[0].\x1b[8m\n: unknown key`; !strings.HasPrefix(esc, want) {
		t.Errorf("escape key: %q\nwant prefix %q", esc, want)
	}
	if strings.Contains(errOut, "\x1b") {
		t.Errorf("ESC reaches stderr: %.400q", errOut)
	}
	if lines[2] != "retrysim run: 2 invalid scenario files or paths" {
		t.Errorf("last stderr line %q", lines[2])
	}
}

// TestTraceTextEscapes: the text timeline escapes what JSON leaves as it is
// (DEL, C1 controls, bidirectional overrides); the JSON Lines trace stays
// byte for byte.
func TestTraceTextEscapes(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.yaml": "turns:\n" +
		"  - {stopReason: error, errorMessage: \"529 overloaded\\u202e\\x7f\\u009b2J\"}\n" +
		"  - {stopReason: stop}\n"})
	path := filepath.Join(dir, "s.yaml")
	code, out, errOut := runMain(t, "trace", "--format", "text", path)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if strings.ContainsAny(out, "\x7f\u009b\u202e") {
		t.Errorf("control characters in the timeline:\n%q", out)
	}
	if !strings.Contains(out, `errorMessage="529 overloaded\u202e\x7f\u009b2J"`) {
		t.Errorf("timeline lacks the escaped message:\n%s", out)
	}
	_, jsonl, _ := runMain(t, "trace", path)
	if !strings.Contains(jsonl, "529 overloaded\u202e\x7f\u009b2J") {
		t.Errorf("the JSON Lines trace changed:\n%q", jsonl)
	}
}

// TestWatchEscapesName: run --watch prints its verdict like run.
func TestWatchEscapesName(t *testing.T) {
	dir := writeFiles(t, map[string]string{"w.yaml": "name: \"x\\nPASS  forged\\x1b[8m\"\nturns: [{stopReason: stop}]\n"})
	path := filepath.Join(dir, "w.yaml")
	code, out, errOut := runMain(t, "run", "--watch", path)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if want := "PASS  x\\nPASS  forged\\x1b[8m  (" + path + ")\n1 passed, 0 failed\n"; !strings.HasSuffix(out, want) || strings.Contains(out, "\x1b") {
		t.Errorf("stdout:\n%q\nwant suffix %q", out, want)
	}
}

// TestRunManyFilesInOrder runs more files than one batch of runFiles,
// passing, failing and invalid mixed: every file's verdict is printed once,
// in the files' order, and the totals count them all.
func TestRunManyFilesInOrder(t *testing.T) {
	n := runBatch + runBatch/2 + 3
	files := map[string]string{}
	var want []string
	for i := range n {
		name := fmt.Sprintf("s%04d.yaml", i)
		switch i % 7 {
		case 3:
			files[name] = failScenario
			want = append(want, "FAIL  failing")
		case 5:
			files[name] = badScenario
		default:
			files[name] = strings.Replace(passScenario, "name: passing", fmt.Sprintf("name: pass-%d", i), 1)
			want = append(want, fmt.Sprintf("PASS  pass-%d", i))
		}
	}
	dir := writeFiles(t, files)
	var stdout, stderr strings.Builder
	if code := realMain([]string{"run", dir}, &stdout, &stderr); code != exitUsage {
		t.Fatalf("exit %d, want %d (invalid files)", code, exitUsage)
	}
	var got []string
	for line := range strings.Lines(stdout.String()) {
		if strings.HasPrefix(line, "PASS  ") || strings.HasPrefix(line, "FAIL  ") {
			got = append(got, line[:strings.Index(line, "  (")])
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("verdicts out of order or missing: got %d lines, want %d\nfirst got: %q", len(got), len(want), got[:min(5, len(got))])
	}
	fails := n/7 + btoi(n%7 > 3)
	bad := n/7 + btoi(n%7 > 5)
	if wantLast := fmt.Sprintf("%d passed, %d failed (%d invalid)", n-fails-bad, fails+bad, bad); lastLine(stdout.String()) != wantLast {
		t.Errorf("last line %q, want %q", lastLine(stdout.String()), wantLast)
	}
	if got := strings.Count(stderr.String(), "stopReason"); got != bad {
		t.Errorf("%d invalid files reported, want %d:\n%s", got, bad, stderr.String())
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("%d invalid scenario files", bad)) {
		t.Errorf("stderr lacks the invalid count %d:\n%s", bad, lastLine(stderr.String()))
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestGCTune: runFiles's collector settings are off-with-a-limit while it
// runs, back to proportional once the live heap passes half the limit,
// and restored after.
func TestGCTune(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOGC")
	os.Unsetenv("GOMEMLIMIT")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	limit := debug.SetMemoryLimit(-1)

	var g gcTune
	g.start()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GC percent %d while running, want -1 (off)", p)
	}
	if l := debug.SetMemoryLimit(-1); l != runMemoryLimit {
		t.Errorf("memory limit %d while running, want %d", l, runMemoryLimit)
	}
	g.check(runMemoryLimit / 4)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("a small live heap turned the collector back on (percent %d)", p)
	}
	g.check(runMemoryLimit/2 + 1)
	if p := debug.SetGCPercent(-1); p != 100 {
		t.Errorf("GC percent %d after the live heap passed half the limit, want 100", p)
	}
	debug.SetGCPercent(100)
	if l := debug.SetMemoryLimit(-1); l != limit {
		t.Errorf("memory limit %d after the switch, want %d", l, limit)
	}
	g.stop()
	if p := debug.SetGCPercent(-1); p != 100 {
		t.Errorf("stop after the switch changed the percent to %d", p)
	}
	debug.SetGCPercent(100)

	t.Setenv("GOGC", "50")
	var u gcTune
	u.start()
	if p := debug.SetGCPercent(-1); p != 100 {
		t.Errorf("with GOGC set, start changed the percent to %d", p)
	}
	debug.SetGCPercent(100)
	u.stop()
}

// TestRunPathsInOrder: the files of several paths run together, but what
// is printed keeps the paths' order: each file's verdict, a missing path's
// error and a directory's files, as the paths were given.
func TestRunPathsInOrder(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"a.yaml":     strings.Replace(passScenario, "name: passing", "name: pass-a", 1),
		"b.yaml":     strings.Replace(passScenario, "name: passing", "name: pass-b", 1),
		"d/c.yaml":   strings.Replace(passScenario, "name: passing", "name: pass-c", 1),
		"d/e.yaml":   failScenario,
		"empty/.txt": "",
	})
	var out strings.Builder
	args := []string{"run", filepath.Join(dir, "a.yaml"), filepath.Join(dir, "missing.yaml"), filepath.Join(dir, "d"),
		filepath.Join(dir, "empty"), filepath.Join(dir, "b.yaml")}
	if code := realMain(args, &out, &out); code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	var got []string
	for line := range strings.Lines(out.String()) {
		switch {
		case strings.HasPrefix(line, "PASS  ") || strings.HasPrefix(line, "FAIL  "):
			got = append(got, line[:strings.Index(line, "  (")])
		case strings.Contains(line, "missing.yaml"):
			got = append(got, "missing")
		case strings.Contains(line, "no scenario files"):
			got = append(got, "empty")
		}
	}
	want := []string{"PASS  pass-a", "missing", "PASS  pass-c", "FAIL  failing", "empty", "PASS  pass-b"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q\n%s", got, want, out.String())
	}
	if !strings.Contains(out.String(), "2 invalid scenario files or paths") {
		t.Errorf("no invalid count of 2:\n%s", out.String())
	}
}

// withStdin makes "run -" read text for the rest of the test.
func withStdin(t *testing.T, text string) {
	t.Helper()
	old := stdin
	stdin = strings.NewReader(text)
	t.Cleanup(func() { stdin = old })
}

// TestRunStdin: "run -" reads one scenario from standard input, named
// <stdin> in the output and in errors; "-" may come with other paths, once.
func TestRunStdin(t *testing.T) {
	dir := writeFiles(t, map[string]string{"fail.yaml": failScenario})
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{"YAML", passScenario, []string{"run", "-"}, exitOK, "PASS  passing  (<stdin>)\n1 passed, 0 failed\n", ""},
		{"JSON", `{"name": "j", "turns": [{"stopReason": "stop"}], "expect": {"final": {"state": "idle"}}}`, []string{"run", "-"}, exitOK, "PASS  j  (<stdin>)\n", ""},
		{"with a file", passScenario, []string{"run", filepath.Join(dir, "fail.yaml"), "-"}, exitFail,
			"FAIL  failing  (" + filepath.Join(dir, "fail.yaml") + ")", ""},
		{"invalid", badScenario, []string{"run", "-"}, exitUsage, "0 passed, 1 failed (1 invalid)", "retrysim run: <stdin>:2:42: turns[1].stopReason: "},
		{"empty", "", []string{"run", "-"}, exitUsage, "", "retrysim run: <stdin>: empty file"},
		{"twice", passScenario, []string{"run", "-", "-"}, exitUsage, "", "retrysim run: - (standard input) given 2 times: it holds one scenario"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withStdin(t, tt.stdin)
			code, out, errOut := runMain(t, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Fatalf("exit %d, want %d\nstdout (want %q):\n%s\nstderr (want %q):\n%s", code, tt.code, tt.stdout, out, tt.stderr, errOut)
			}
			if tt.stderr == "" && errOut != "" {
				t.Errorf("stderr not empty:\n%s", errOut)
			}
		})
	}
}

// TestRunWarnsWithoutExpect: a file without expect checks nothing; run
// says so on stderr (and the exit status stays 0).
func TestRunWarnsWithoutExpect(t *testing.T) {
	dir := writeFiles(t, map[string]string{"a.yaml": passScenario, "b.yaml": "turns: [{stopReason: stop}]\n"})
	code, out, errOut := runMain(t, "run", dir)
	b := filepath.Join(dir, "b.yaml")
	want := "retrysim run: warning: " + b + ": no expect block: nothing is checked (retrysim run --update " + b + " writes one)\n"
	if code != exitOK || errOut != want || lastLine(out) != "2 passed, 0 failed" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, out, errOut, want)
	}
}
