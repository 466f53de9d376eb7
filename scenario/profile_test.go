package scenario

import (
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// TestScenarioProfiles: "profile: NAME" gives that profile's settings, for
// every profile; the file's settings merge over them key by key, nested
// objects too.
func TestScenarioProfiles(t *testing.T) {
	for _, prof := range policy.Profiles() {
		sc, err := Parse("p.yaml", []byte("profile: "+prof.Name+"\n"))
		if err != nil {
			t.Fatalf("%s: %v", prof.Name, err)
		}
		if sc.Profile != prof.Name || !sc.Settings.Equal(prof.Settings) || sc.SettingsPatch != nil {
			t.Errorf("%s: profile %q, settings %+v, patch %s; want the profile's settings %+v", prof.Name, sc.Profile, sc.Settings, sc.SettingsPatch, prof.Settings)
		}
	}

	codex, err := policy.ProfileByName("codex")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Parse("p.yaml", []byte("profile: codex\nsettings:\n  maxRetries: 1\n  jitter: {ratio: 0.5}\n  retryAfter: {maxHintMs: 1000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := codex.Settings.Clone()
	want.MaxRetries = 1
	want.Jitter.Ratio = 0.5               // the mode stays codex's (updown)
	want.RetryAfter.MaxHint = time.Second // the use stays codex's (replace)
	if !sc.Settings.Equal(want) {
		t.Errorf("merged settings %+v\nwant %+v", sc.Settings, want)
	}
	if got := string(sc.SettingsPatch); got != `{"maxRetries":1,"jitter":{"ratio":0.5},"retryAfter":{"maxHintMs":1000}}` {
		t.Errorf("patch %s", got)
	}

	// Without "profile", the default; null changes nothing, as in policy.
	for _, in := range []string{"{}", "settings:\n", "settings: {enabled: null, jitter: null}", `{"settings":null}`} {
		sc, err := Parse("d.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if sc.Profile != policy.DefaultProfile || !sc.Settings.Equal(policy.DefaultSettings()) {
			t.Errorf("%q: profile %q, settings %+v", in, sc.Profile, sc.Settings)
		}
	}
}

// TestScenarioSettingsKeys: every settings key, in YAML and in JSON, gives
// the settings policy.Settings.Apply gives for the same JSON.
func TestScenarioSettingsKeys(t *testing.T) {
	yaml := `settings:
  enabled: false
  maxRetries: 7
  baseDelayMs: 250.5
  backoffFactor: 1.5
  maxBackoffMs: 60000
  jitter: {mode: full, ratio: 0.25}
  retryAfter: {use: floor, maxHintMs: 30000, maxWaitMs: 120000}
  classify: strict
  retryablePatterns: ["overloaded", "rate.?limit"]
  nonRetryablePatterns: ['\bquota\b']
  persistent: true
  fallback: [claude-haiku-4-5, gpt-5-mini]
`
	jsonPatch := `{"enabled":false,"maxRetries":7,"baseDelayMs":250.5,"backoffFactor":1.5,"maxBackoffMs":60000,` +
		`"jitter":{"mode":"full","ratio":0.25},"retryAfter":{"use":"floor","maxHintMs":30000,"maxWaitMs":120000},` +
		`"classify":"strict","retryablePatterns":["overloaded","rate.?limit"],"nonRetryablePatterns":["\\bquota\\b"],` +
		`"persistent":true,"fallback":["claude-haiku-4-5","gpt-5-mini"]}`
	want, err := policy.DefaultSettings().Apply([]byte(jsonPatch))
	if err != nil {
		t.Fatal(err)
	}
	if err := want.Validate(); err != nil {
		t.Fatal(err)
	}
	fromYAML, err := Parse("k.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := Parse("k.json", []byte(`{"settings":`+jsonPatch+`}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []*Scenario{fromYAML, fromJSON} {
		if !sc.Settings.Equal(want) {
			t.Errorf("%s: settings %+v\nwant %+v", sc.Path, sc.Settings, want)
		}
		if string(sc.SettingsPatch) != jsonPatch {
			t.Errorf("%s: patch %s\nwant  %s", sc.Path, sc.SettingsPatch, jsonPatch)
		}
	}
	if want.BaseDelay != 250500*time.Microsecond {
		t.Errorf("baseDelayMs 250.5 = %v", want.BaseDelay)
	}
}

// TestScenarioSettingsYAMLNumbers: numbers are taken as YAML reads them
// (0x10 is 16, 1_000 is 1000), and a float stays a float (1. or 2.0 is
// not an integer for maxRetries).
func TestScenarioSettingsYAMLNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want policy.Settings
	}{
		{"settings: {maxRetries: 0x10, baseDelayMs: 1_000}", policy.Settings{Enabled: true, MaxRetries: 16, BaseDelay: time.Second}},
		{"settings: {maxRetries: +5, baseDelayMs: .5}", policy.Settings{Enabled: true, MaxRetries: 5, BaseDelay: 500 * time.Microsecond}},
		{"settings: {baseDelayMs: 1e3, backoffFactor: 3}", policy.Settings{Enabled: true, MaxRetries: 3, BaseDelay: time.Second, BackoffFactor: 3}},
		{"settings: {baseDelayMs: 010}", policy.Settings{Enabled: true, MaxRetries: 3, BaseDelay: 8 * time.Millisecond}}, // YAML 1.1 octal
	} {
		sc, err := Parse("n.yaml", []byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if !sc.Settings.Equal(tc.want) {
			t.Errorf("%s: settings %+v, want %+v", tc.in, sc.Settings, tc.want)
		}
	}
	for _, in := range []string{"settings: {maxRetries: 2.0}", "settings: {maxRetries: 1.}"} {
		_, err := Parse("n.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), "is not an integer") {
			t.Errorf("%s: error %v, want \"is not an integer\"", in, err)
		}
	}
}

// TestSetProfile: SetProfile re-merges the file's settings over another
// profile's and checks the same rules as the loader; on error the
// scenario is left as it was.
func TestSetProfile(t *testing.T) {
	sc, err := Parse("s.yaml", []byte("name: s\nsettings:\n  maxRetries: 1\n  jitter: {ratio: 0.5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, prof := range policy.Profiles() {
		if err := sc.SetProfile(prof.Name); err != nil {
			t.Fatalf("SetProfile(%s): %v", prof.Name, err)
		}
		want := prof.Settings.Clone()
		want.MaxRetries, want.Jitter.Ratio = 1, 0.5
		if sc.Profile != prof.Name || !sc.Settings.Equal(want) {
			t.Errorf("SetProfile(%s): profile %q, settings %+v, want %+v", prof.Name, sc.Profile, sc.Settings, want)
		}
	}
	if err := sc.SetProfile(""); err != nil || sc.Profile != policy.DefaultProfile {
		t.Errorf(`SetProfile(""): %v, profile %q`, err, sc.Profile)
	}

	before := *sc
	checkErr := func(err error, pos, field, msg string) {
		t.Helper()
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("error %T %v is not a *Error", err, err)
		}
		if se.Pos.String() != pos || se.Field != field || !strings.Contains(se.Msg, msg) {
			t.Errorf("error %q, want %s: %s: ...%s...", err, pos, field, msg)
		}
		if sc.Profile != before.Profile || !sc.Settings.Equal(before.Settings) {
			t.Errorf("after a failed SetProfile: profile %q, settings %+v", sc.Profile, sc.Settings)
		}
	}
	checkErr(sc.SetProfile("nope"), "s.yaml", "profile", `unknown profile "nope" (allowed: omp-2026-02, omp-2026-06,`)
	// The unknown name is the caller's: not placed at the file's profile.
	sc, err = Parse("s.yaml", []byte("name: s\nprofile: pi\nvariant: sound\n"))
	if err != nil {
		t.Fatal(err)
	}
	before = *sc
	checkErr(sc.SetProfile("nope"), "s.yaml", "profile", `unknown profile "nope"`)
	if err := sc.SetVariant("buggy"); err == nil || !strings.HasPrefix(err.Error(), "s.yaml: variant: unknown value") {
		t.Errorf("SetVariant(buggy) = %v, want it at the file, not its variant", err)
	}

	// The file's base delay over a profile whose cap is lower.
	sc, err = Parse("s.yaml", []byte("name: s\nsettings: {baseDelayMs: 10000}\n"))
	if err != nil {
		t.Fatal(err)
	}
	before = *sc
	checkErr(sc.SetProfile("omp-2026-06"), "s.yaml:2:11", "settings.maxBackoffMs",
		"8000 (from profile omp-2026-06) is out of range (allowed: 0 (no cap) or at least baseDelayMs (10000))")
	// The field itself in the file: its position.
	sc, err = Parse("s.yaml", []byte("name: s\nprofile: omp-2026-06\nsettings:\n  baseDelayMs: 500\n  persistent: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	before = *sc
	checkErr(sc.SetProfile("pi"), "s.yaml:5:15", "settings.persistent", "true only with maxBackoffMs > 0")

	// Variant original: the default profile only.
	sc, err = Parse("o.yaml", []byte("variant: original\n"))
	if err != nil {
		t.Fatal(err)
	}
	before = *sc
	checkErr(sc.SetProfile("codex"), "o.yaml:1:10", "variant", "variant original allows only profile omp-2026-02, not codex")
	if err := sc.SetProfile(policy.DefaultProfile); err != nil {
		t.Errorf("SetProfile(default) on original: %v", err)
	}

	// A scenario built in Go, without a patch: the profile's settings.
	built := &Scenario{Path: "built", Variant: "sound", Settings: policy.Settings{Enabled: true, MaxRetries: 9}}
	if err := built.SetProfile("pi"); err != nil {
		t.Fatal(err)
	}
	if pi, _ := policy.ProfileByName("pi"); !built.Settings.Equal(pi.Settings) {
		t.Errorf("built: settings %+v, want pi's", built.Settings)
	}
}

// TestSetVariant: SetVariant takes sound or original, and original only
// with the default profile.
func TestSetVariant(t *testing.T) {
	sc, err := Parse("v.yaml", []byte("name: v\nprofile: codex\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ variant, pos, field, msg string }{
		{"original", "v.yaml:2:10", "profile", "variant original allows only profile omp-2026-02, not codex"},
		{"buggy", "v.yaml", "variant", `unknown value "buggy" (allowed: sound, original)`},
	} {
		err := sc.SetVariant(tc.variant)
		var se *Error
		if !errors.As(err, &se) || se.Pos.String() != tc.pos || se.Field != tc.field || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("SetVariant(%s) = %v, want %s: %s: ...%s...", tc.variant, err, tc.pos, tc.field, tc.msg)
		}
		if sc.Variant != "sound" {
			t.Errorf("variant %q after a failed SetVariant", sc.Variant)
		}
	}
	if err := sc.SetVariant("sound"); err != nil {
		t.Error(err)
	}
	// Profile first, then the variant: the combination is allowed.
	if err := sc.SetProfile(policy.DefaultProfile); err != nil {
		t.Fatal(err)
	}
	if err := sc.SetVariant("original"); err != nil || sc.Variant != "original" {
		t.Errorf("SetVariant(original) with the default profile: %v, variant %q", err, sc.Variant)
	}
}

// TestScenarioNewKeys: the file with every key that came with profiles
// reads to the expected fields, and a turn's reply carries its status and
// headers.
func TestScenarioNewKeys(t *testing.T) {
	path := filepath.Join("testdata", "scenario", "new-keys.yaml")
	sc, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	prof, _ := policy.ProfileByName("omp-2026-06")
	want := prof.Settings.Clone()
	want.MaxRetries, want.BackoffFactor, want.MaxBackoff = 4, 3, 20*time.Second
	want.Jitter.Mode = policy.JitterEqual // the ratio stays the profile's
	want.RetryAfter = policy.RetryAfter{Use: policy.HintReplace, MaxHint: time.Minute, MaxWait: prof.Settings.RetryAfter.MaxWait}
	want.Classify, want.Persistent = policy.ClassifyStatus, true
	want.RetryablePatterns, want.NonRetryablePatterns = []string{"overloaded", "rate.?limit"}, []string{`\bquota\b`}
	want.Fallback = []string{"claude-haiku-4-5", "gpt-5-mini"}
	if sc.Profile != "omp-2026-06" || !sc.Settings.Equal(want) {
		t.Errorf("profile %q, settings %+v\nwant %+v", sc.Profile, sc.Settings, want)
	}
	if sc.Seed != 42 || !sc.HasRandomFixed || sc.RandomFixed != 0.25 {
		t.Errorf("seed %d, random %v %v", sc.Seed, sc.HasRandomFixed, sc.RandomFixed)
	}
	wantHeaders := map[string]string{"retry-after": "3", "x-ratelimit-reset-ms": "1500", "x-empty": ""}
	if len(sc.Turns) != 2 || sc.Turns[0].Status != 429 || !reflect.DeepEqual(sc.Turns[0].Headers, wantHeaders) ||
		sc.Turns[1].Status != 200 || sc.Turns[1].Headers != nil {
		t.Fatalf("turns %+v", sc.Turns)
	}
	reply := sc.Turns[0].Reply()
	if reply.Status != 429 || !reflect.DeepEqual(reply.Headers, wantHeaders) || reply.StopReason != policy.StopReasonError ||
		reply.ErrorMessage != "429 rate limited" {
		t.Errorf("Reply() = %+v", reply)
	}
	if err := reply.ValidateHTTP(); err != nil {
		t.Errorf("Reply().ValidateHTTP: %v", err)
	}

	// Defaults: seed 1, no fixed draw, no status, no headers.
	sc, err = Parse("d.yaml", []byte("turns: [{stopReason: stop, headers: {}}]"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Seed != 1 || sc.HasRandomFixed || sc.RandomFixed != 0 || sc.Turns[0].Status != 0 || sc.Turns[0].Headers != nil {
		t.Errorf("defaults: seed %d, random %v %v, turn %+v", sc.Seed, sc.HasRandomFixed, sc.RandomFixed, sc.Turns[0])
	}
	if r := sc.Turns[0].Reply(); r.Status != 0 || r.Headers != nil {
		t.Errorf("default Reply() = %+v", r)
	}

	// The same in JSON.
	j, err := Parse("n.json", []byte(`{"seed":9223372036854775807,"random":{"fixed":0},
		"turns":[{"stopReason":"error","status":503,"headers":{"retry-after-ms":"250"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if j.Seed != math.MaxInt64 || !j.HasRandomFixed || j.RandomFixed != 0 || j.Turns[0].Status != 503 || j.Turns[0].Headers["retry-after-ms"] != "250" {
		t.Errorf("json: %+v", j)
	}
}

// TestSetVariantOriginalSettings: the original variant refuses settings it
// does not have, from the file or set by --variant.
func TestSetVariantOriginalSettings(t *testing.T) {
	sc, err := Parse("v.yaml", []byte("settings:\n  fallback: [m2]\n"))
	if err != nil {
		t.Fatal(err)
	}
	var se *Error
	if err := sc.SetVariant("original"); !errors.As(err, &se) || se.Pos.String() != "v.yaml:2:3" || !strings.Contains(se.Msg, "variant original takes only") {
		t.Errorf("SetVariant(original) = %v", err)
	}
	plain, err := Parse("p.yaml", []byte("settings: {maxRetries: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.SetVariant("original"); err != nil || plain.Variant != "original" {
		t.Errorf("plain settings: %v", err)
	}
}
