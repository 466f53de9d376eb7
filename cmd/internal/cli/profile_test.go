package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

// fourErrorsTurns fail four times, then succeed: exhausted with the default
// profile's 3 retries, a success at attempt 4 with codex's 5.
const fourErrorsTurns = `turns:
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: stop}
`

const (
	// exhaustedScenario passes with 3 retries.
	exhaustedScenario = "name: exhausted\n" + fourErrorsTurns + `expect:
  events:
    - {type: auto_retry_end, success: false, attempt: 3}
  final: {state: exhausted}
`
	// recoveredScenario passes with 4 retries or more.
	recoveredScenario = "name: recovered\n" + fourErrorsTurns + `expect:
  events:
    - {type: auto_retry_end, success: true, attempt: 4}
  final: {state: idle}
`
)

// TestRunProfileFlag: --profile replaces each scenario's profile, the
// scenario's own settings still merged over it.
func TestRunProfileFlag(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"exhausted.yaml":         exhaustedScenario,
		"recovered-codex.yaml":   "profile: codex\n" + strings.Replace(recoveredScenario, "name: recovered", "name: recovered-codex", 1),
		"own-settings-wins.yaml": "settings: {maxRetries: 2}\n" + strings.Replace(exhaustedScenario, "attempt: 3}", "attempt: 2}", 1),
	})
	file := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
	}{
		{"each scenario's profile", []string{"run", dir}, exitOK, []string{"PASS  exhausted", "PASS  exhausted", "PASS  recovered-codex", "3 passed, 0 failed"}},
		{"--profile codex", []string{"run", "--profile", "codex", file("exhausted.yaml"), file("recovered-codex.yaml"), file("own-settings-wins.yaml")}, exitFail,
			[]string{"FAIL  exhausted", "PASS  recovered-codex", "PASS  exhausted", "2 passed, 1 failed"}},
		{"--profile default over a file's codex", []string{"run", file("recovered-codex.yaml"), "--profile=" + policy.DefaultProfile}, exitFail,
			[]string{"FAIL  recovered-codex", "0 passed, 1 failed"}},
		{"--profile with --variant sound", []string{"run", "--variant", "sound", "--profile", "codex", file("recovered-codex.yaml")}, exitOK,
			[]string{"PASS  recovered-codex", "1 passed, 0 failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != tt.code || errOut != "" {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			wantInOrder(t, out, tt.stdout)
		})
	}
}

// TestProfileFlagErrors: an unknown --profile, or a profile other than the
// default with --variant original, is a usage error naming the allowed
// profiles, on every command that has the flag; a combination that one
// scenario file forbids is that file's error.
func TestProfileFlagErrors(t *testing.T) {
	if _, err := policy.VariantByName("original"); err != nil {
		t.Skip("the original variant is not known")
	}
	dir := writeFiles(t, map[string]string{
		"s.yaml":    exhaustedScenario,
		"orig.yaml": "variant: original\n" + exhaustedScenario,
		"pi.yaml":   "profile: pi\n" + exhaustedScenario,
		"cap.yaml":  "settings: {baseDelayMs: 10000}\n" + exhaustedScenario,
	})
	s := filepath.Join(dir, "s.yaml")
	allowed := `unknown profile "nope" (allowed: omp-2026-02, omp-2026-06, pi, codex,`
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"run unknown", []string{"run", "--profile", "nope", s}, []string{"retrysim run: --profile: " + allowed, "Usage: retrysim run"}},
		{"trace unknown", []string{"trace", "--profile", "nope", s}, []string{"retrysim trace: --profile: " + allowed}},
		{"rpc unknown", []string{"rpc", "--profile", "nope"}, []string{"retrysim rpc: --profile: " + allowed}},
		{"run original and codex", []string{"run", "--variant", "original", "--profile", "codex", s},
			[]string{"retrysim run: --profile codex: variant original allows only profile omp-2026-02"}},
		{"rpc original and codex", []string{"rpc", "--variant", "original", "--profile", "codex"}, []string{"variant original allows only profile omp-2026-02"}},
		{"file of variant original", []string{"run", "--profile", "pi", filepath.Join(dir, "orig.yaml")},
			[]string{filepath.Join(dir, "orig.yaml") + ":1:10: variant: variant original allows only profile omp-2026-02, not pi", "1 invalid"}},
		{"file of profile pi, --variant original", []string{"trace", "--variant", "original", filepath.Join(dir, "pi.yaml")},
			[]string{filepath.Join(dir, "pi.yaml") + ":1:10: profile: variant original allows only profile omp-2026-02, not pi"}},
		{"file's settings over the profile's cap", []string{"trace", "--profile", "omp-2026-06", filepath.Join(dir, "cap.yaml")},
			[]string{filepath.Join(dir, "cap.yaml") + ":1:11: settings.maxBackoffMs: 8000 (from profile omp-2026-06) is out of range"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code int
			var errOut string
			if tt.args[0] == "rpc" {
				code, _, errOut = rpcSession(t, "", tt.args[1:]...)
			} else {
				code, _, errOut = runMain(t, tt.args...)
			}
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitUsage, errOut)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
		})
	}
	// --variant original with the default profile is fine.
	if code, _, errOut := runMain(t, "run", "--variant", "original", "--profile", policy.DefaultProfile, filepath.Join(dir, "orig.yaml")); code != exitOK {
		t.Errorf("original with the default profile: exit %d\n%s", code, errOut)
	}
	// The help lists the profiles.
	for _, cmd := range []string{"run", "trace", "rpc"} {
		_, out, _ := runMain(t, cmd, "--help")
		if !strings.Contains(out, "--profile NAME") || !strings.Contains(out, "omp-2026-02, omp-2026-06, pi") {
			t.Errorf("%s --help lacks --profile and the profiles:\n%s", cmd, out)
		}
	}
}

// TestTraceProfileFlag: trace runs the scenario under --profile's
// settings (maxAttempts is maxRetries).
func TestTraceProfileFlag(t *testing.T) {
	dir := writeFiles(t, map[string]string{"s.yaml": exhaustedScenario})
	code, out, errOut := runMain(t, "trace", "--profile", "codex", filepath.Join(dir, "s.yaml"))
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, `"type":"auto_retry_start","attempt":1,"maxAttempts":5,`) {
		t.Errorf("trace does not retry with codex's 5 retries:\n%s", out)
	}
	_, out, _ = runMain(t, "trace", filepath.Join(dir, "s.yaml"))
	if !strings.Contains(out, `"type":"auto_retry_start","attempt":1,"maxAttempts":3,`) {
		t.Errorf("trace without --profile:\n%s", out)
	}
}

// TestRPCProfileFlag: with --scenario, the scenario's settings merged over
// the profile's; without, the profile's settings are the session's.
func TestRPCProfileFlag(t *testing.T) {
	// random.fixed 0.5 makes codex's ±10 % jitter neutral: the wait is the base.
	dir := writeFiles(t, map[string]string{"s.yaml": "random: {fixed: 0.5}\nsettings: {baseDelayMs: 1000}\n" + exhaustedScenario})
	code, out, errOut := rpcSession(t, `{"type":"prompt","message":"hi"}`+"\n", "--virtual", "--profile", "codex", "--scenario", filepath.Join(dir, "s.yaml"))
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, `"type":"auto_retry_start","attempt":1,"maxAttempts":5,"delayMs":1000,`) {
		t.Errorf("rpc --profile codex --scenario: not codex's 5 retries with the file's 1000 ms:\n%s", out)
	}

	for _, prof := range policy.Profiles() {
		var errBuf bytes.Buffer
		sc, code := rpcScenario("", overrides{profile: prof.Name}, &errBuf)
		if sc == nil || code != exitOK {
			t.Fatalf("%s: exit %d: %s", prof.Name, code, errBuf.String())
		}
		if sc.Profile != prof.Name || !sc.Settings.Equal(prof.Settings) {
			t.Errorf("rpc --profile %s without --scenario: profile %q, settings %+v", prof.Name, sc.Profile, sc.Settings)
		}
	}
	sc, _ := rpcScenario("", overrides{}, &bytes.Buffer{})
	if sc == nil || !sc.Settings.Equal(policy.DefaultSettings()) {
		t.Errorf("rpc without --profile: %+v", sc)
	}
}

// TestRunWatchProfileFlag: run --watch plays the scenario under --profile's
// settings too (no waiting: the file's base delay is 0).
func TestRunWatchProfileFlag(t *testing.T) {
	dir := writeFiles(t, map[string]string{"w.yaml": "settings: {baseDelayMs: 0}\n" + recoveredScenario})
	var out, errOut bytes.Buffer
	code := realMain([]string{"run", "--watch", "--profile", "codex", filepath.Join(dir, "w.yaml")}, &out, &errOut)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "maxAttempts=5 delayMs=0") || !strings.Contains(out.String(), "1 passed, 0 failed") {
		t.Errorf("stdout:\n%s", out.String())
	}
}
