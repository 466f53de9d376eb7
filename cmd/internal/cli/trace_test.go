package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

var threeErrors = filepath.Join(publicDir, "03-three-errors-then-success.json")

func TestTrace(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.yaml": badScenario, "pass.yaml": passScenario})
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string
		stderr   []string
		noStdout bool
	}{
		{
			name: "jsonl by default",
			args: []string{"trace", threeErrors},
			code: exitOK,
			stdout: []string{
				`{"t":0,"type":"agent_run","kind":"prompt","model":"claude-sonnet-4-5"}` + "\n",
				`{"t":6000,"type":"auto_retry_start","attempt":3,"maxAttempts":3,"delayMs":8000,"errorMessage":"fetch failed"}` + "\n",
				`{"t":14000,"type":"auto_retry_end","success":true,"attempt":3}` + "\n",
				`{"t":14000,"type":"final","state":"idle"`,
			},
		},
		{
			name:   "--format jsonl",
			args:   []string{"trace", "--format", "jsonl", threeErrors},
			code:   exitOK,
			stdout: []string{`{"t":14000,"type":"auto_retry_end","success":true,"attempt":3}` + "\n"},
		},
		{
			name: "text, flags after the file",
			args: []string{"trace", threeErrors, "--format=text", "--variant", "sound"},
			code: exitOK,
			stdout: []string{
				"  0.000s  agent_run ",
				"kind=prompt model=claude-sonnet-4-5\n",
				"   2000   2.000s  ",
				`attempt=2 maxAttempts=3 delayMs=4000 errorMessage="503 service unavailable"` + "\n",
				"  14000  14.000s  auto_retry_end ",
				" success=true attempt=3\n",
			},
		},
		{
			name:   "a YAML scenario with an expect block",
			args:   []string{"trace", filepath.Join(dir, "pass.yaml")},
			code:   exitOK,
			stdout: []string{`"type":"auto_retry_end","success":true,"attempt":3}`},
		},
		{name: "no file", args: []string{"trace"}, code: exitUsage, stderr: []string{"want exactly one scenario file, got 0"}, noStdout: true},
		{name: "two files", args: []string{"trace", threeErrors, threeErrors}, code: exitUsage, stderr: []string{"got 2"}, noStdout: true},
		{name: "unknown format", args: []string{"trace", "--format", "xml", threeErrors}, code: exitUsage, stderr: []string{`unknown format "xml" (allowed: jsonl, text)`}, noStdout: true},
		{name: "unknown variant", args: []string{"trace", "--variant", "nope", threeErrors}, code: exitUsage, stderr: []string{`unknown variant "nope"`}, noStdout: true},
		{
			name: "invalid scenario", args: []string{"trace", filepath.Join(dir, "bad.yaml")}, code: exitUsage,
			stderr: []string{filepath.Join(dir, "bad.yaml") + `:2:42: turns[1].stopReason: unknown value "bogus"`}, noStdout: true,
		},
		{name: "missing file", args: []string{"trace", filepath.Join(dir, "nope.yaml")}, code: exitUsage, stderr: []string{"nope.yaml", "no such file"}, noStdout: true},
		{name: "a directory", args: []string{"trace", dir}, code: exitUsage, stderr: []string{"is a directory"}, noStdout: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			wantInOrder(t, out, tt.stdout)
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.code == exitOK && errOut != "" {
				t.Errorf("stderr not empty:\n%s", errOut)
			}
			if tt.noStdout && out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
		})
	}
}

// TestTraceDeterministic: two runs print the same bytes, and jsonl is the
// simulator's trace byte for byte.
func TestTraceDeterministic(t *testing.T) {
	sc, err := scenario.Load(threeErrors)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	text, err := trace.FormatText(res.Trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		format string
		want   string
	}{{"jsonl", string(res.Trace)}, {"text", string(text)}} {
		t.Run(tt.format, func(t *testing.T) {
			_, first, _ := runMain(t, "trace", "--format", tt.format, threeErrors)
			code, second, errOut := runMain(t, "trace", "--format", tt.format, threeErrors)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if first != second {
				t.Fatalf("two runs differ:\n%s\n---\n%s", first, second)
			}
			if first != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", first, tt.want)
			}
		})
	}
}
