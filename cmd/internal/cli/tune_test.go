package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ohmypi/retryfsm"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/tune"
)

// tuneFleet is a small fleet file: a 529 outage over a capacity (shared
// with the module cmd/retrysim-plot's --plot test), read when a test first
// needs it (this test binary also runs as other programs, elsewhere).
var tuneFleet = sync.OnceValue(func() string {
	b, err := os.ReadFile("testdata/tune-small.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
})

// tuneArgs is a small tune of tuneFleet.
var tuneArgs = []string{"--axes", "maxRetries=1,4,8;baseDelayMs=200,1000;jitter=none,full", "--seeds", "2"}

// TestTuneSettingsFile: the settings file tune --out writes is the chosen
// point's settings; retrysim fleet --settings runs it to the objectives
// the report gives for that point's first seed; Go code reads it with
// json.Unmarshal, policy.Compile compiles it and retryfsm.Do runs with it.
func TestTuneSettingsFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{"small.yaml": tuneFleet()})
	fleetPath, settingsPath := filepath.Join(dir, "small.yaml"), filepath.Join(dir, "tuned.json")
	code, out, errOut := runMain(t, append([]string{"tune", "--json", "--out", settingsPath, fleetPath}, tuneArgs...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r, err := tune.ReadReport([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	chosen, ok := r.ChosenSettings()
	if !ok {
		t.Fatal("no point chosen")
	}
	data, err := os.ReadFile(settingsPath)
	if err != nil {
		t.Fatal(err)
	}
	var s policy.Settings
	if err := json.Unmarshal(data, &s); err != nil || !s.Equal(chosen) {
		t.Fatalf("settings file %s reads as %+v (%v), want the chosen %+v", data, s, err, chosen)
	}
	pol, err := policy.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := retryfsm.Do(context.Background(), pol, func(context.Context) (string, error) { return "ok", nil })
	if err != nil || got != "ok" {
		t.Fatalf("retryfsm.Do with the settings: %q, %v", got, err)
	}
	code, out, errOut = runMain(t, "fleet", "--json", "--settings", settingsPath, fleetPath)
	if code != exitOK {
		t.Fatalf("fleet --settings: exit %d: %s", code, errOut)
	}
	var res struct {
		Fleets []struct {
			Profiles []struct{ Prompts, Succeeded, WireCalls int64 }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	st := res.Fleets[0].Profiles[0]
	c := r.Candidates[r.Chosen-1]
	fail, calls := float64(st.Prompts-st.Succeeded)/float64(st.Prompts), float64(st.WireCalls)/float64(st.Prompts)
	if fail != c.Seeds[0][0] || calls != c.Seeds[0][2] {
		t.Errorf("fleet --settings: fail %v, calls %v; the report's first seed: %v", fail, calls, c.Seeds[0])
	}
}

// TestTuneTable: the table names every profile, marks the chosen point
// and places each profile; merge of the shards prints a table of the
// same form, and refuses a shard missing.
func TestTuneTable(t *testing.T) {
	dir := writeFiles(t, map[string]string{"small.yaml": tuneFleet()})
	fleetPath := filepath.Join(dir, "small.yaml")
	code, out, errOut := runMain(t, append([]string{"tune", fleetPath}, tuneArgs...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, p := range policy.Profiles() {
		if !strings.Contains(out, "\n"+p.Name+" ") {
			t.Errorf("profile %s not in the table", p.Name)
		}
	}
	for _, want := range []string{"tune small  design 12 points", "front: ", "* ", "profiles against the front", "chosen: #"} {
		if !strings.Contains(out, want) {
			t.Errorf("table without %q:\n%s", want, out)
		}
	}
	var parts []string
	for _, sh := range []string{"0/2", "1/2"} {
		code, out, errOut := runMain(t, append([]string{"tune", "--json", "--shard", sh, fleetPath}, tuneArgs...)...)
		if code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", sh, code, errOut)
		}
		path := filepath.Join(dir, strings.Replace(sh, "/", "of", 1)+".json")
		os.WriteFile(path, []byte(out), 0o644)
		parts = append(parts, path)
	}
	code, out, errOut = runMain(t, "tune", "merge", parts[1], parts[0])
	if code != exitOK || !strings.Contains(out, "profiles against the front") || !strings.Contains(out, "chosen: #") {
		t.Fatalf("merge: exit %d, %s\n%s", code, errOut, out)
	}
	code, _, errOut = runMain(t, "tune", "merge", parts[1])
	if code != exitUsage || !strings.Contains(errOut, "shard 0/2 missing") {
		t.Errorf("merge of one shard of two: exit %d, %s", code, errOut)
	}
}

// TestTuneUsage: bad flags and arguments are usage errors saying what is
// allowed.
func TestTuneUsage(t *testing.T) {
	dir := writeFiles(t, map[string]string{"small.yaml": tuneFleet()})
	fleetPath := filepath.Join(dir, "small.yaml")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tune"}, "give one fleet file"},
		{[]string{"tune", "--axes", "retries=3", fleetPath}, `--axes: unknown axis "retries"`},
		{[]string{"tune", "--objectives", "fail,latency", fleetPath}, `--objectives: unknown objective "latency"`},
		{[]string{"tune", "--shard", "0/2", fleetPath}, "--shard prints a shard's report as JSON"},
		{[]string{"tune", "--base", "nope", fleetPath}, `--base: unknown profile "nope"`},
		{[]string{"tune", "--keep", "2", fleetPath}, "--keep 2 (allowed: a share above 0, at most 1)"},
		{[]string{"tune", "--keep", "0", fleetPath}, "--keep 0 (allowed: a share above 0, at most 1)"},
		{[]string{"tune", "--scale", "0", fleetPath}, "--scale 0 (allowed: above 0, at most 1)"},
		{[]string{"tune", "--seeds", "0", fleetPath}, "--seeds 0 (allowed: 1 to 1000)"},
		{[]string{"tune", "merge", "--seeds", "2", fleetPath}, "not a flag of merge"},
		{[]string{"tune", "merge", fleetPath}, "not a tune report"},
	} {
		code, out, errOut := runMain(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestRPCSettingsFile: retrysim rpc --settings FILE starts the session with
// the file's settings in place of the scenario's: its first retry says
// the file's maxRetries and baseDelayMs; with --profile, a usage error.
func TestRPCSettingsFile(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"s.yaml":     "settings: {maxRetries: 2, baseDelayMs: 1000}\nturns:\n  - {stopReason: error, errorMessage: \"529 overloaded_error\"}\n  - {stopReason: stop}\n",
		"tuned.json": `{"maxRetries": 7, "baseDelayMs": 250, "jitter": {"mode": "none"}}`,
	})
	input := `{"id":"1","type":"prompt","message":"hi"}` + "\n" + `{"id":"2","type":"abort_retry"}` + "\n"
	code, out, errOut := rpcSession(t, input, "--virtual", "--scenario", filepath.Join(dir, "s.yaml"), "--settings", filepath.Join(dir, "tuned.json"))
	if code != exitOK || errOut != "" {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, `"type":"auto_retry_start","attempt":1,"maxAttempts":7,"delayMs":250,`) {
		t.Errorf("the first retry does not follow the settings file:\n%s", out)
	}
	code, _, errOut = rpcSession(t, input, "--profile", "pi", "--settings", filepath.Join(dir, "tuned.json"))
	if code != exitUsage || !strings.Contains(errOut, "give one") {
		t.Errorf("--settings with --profile: exit %d, %s", code, errOut)
	}
	code, _, errOut = rpcSession(t, input, "--settings", filepath.Join(dir, "s.yaml"))
	if code != exitUsage || !strings.Contains(errOut, "--settings: ") || !strings.Contains(errOut, "s.yaml") {
		t.Errorf("--settings of a file that is not JSON settings: exit %d, %s", code, errOut)
	}
}
