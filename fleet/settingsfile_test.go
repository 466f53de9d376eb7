package fleet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
)

// TestSettingsReplaceProfiles: a fleet whose Settings are its profile's
// own gives the profile's result byte for byte; other settings change it,
// and the rows keep the profile's name.
func TestSettingsReplaceProfiles(t *testing.T) {
	cfg := fleetspec.Default(200)
	cfg.Profiles = fleetspec.Mix{{Profile: "omp-2026-06", Percent: 100}}
	run := func(c fleetspec.Config) *Result {
		t.Helper()
		p, err := Run(context.Background(), PlanOf(c), Options{})
		if err != nil {
			t.Fatal(err)
		}
		return &p.Result
	}
	base := run(cfg)
	prof, _ := policy.ProfileByName("omp-2026-06")
	same := cfg
	same.Settings = &prof.Settings
	if got := run(same); !reflect.DeepEqual(got, base) {
		t.Fatal("the profile's own settings as Settings changed the result")
	}
	one := policy.Settings{Enabled: true, MaxRetries: 1, BaseDelay: time.Second}
	other := cfg
	other.Settings = &one
	got := run(other)
	if reflect.DeepEqual(got, base) {
		t.Fatal("other settings gave the profile's result")
	}
	s := &got.Groups[0].Profiles[0]
	if s.Profile != "omp-2026-06" || s.Failed != s.Prompts { // three 529s: one retry cannot get through
		t.Fatalf("row %s: %d of %d prompts failed, want every one", s.Profile, s.Failed, s.Prompts)
	}
	idBase, _ := PlanOf(cfg).ID()
	idOther, _ := PlanOf(other).ID()
	if idBase == idOther {
		t.Fatal("the sweep's identity does not see the settings")
	}
}

// TestReadSettingsRoundTrip: the JSON of a Settings value, as a file, reads
// back as the same settings (what retrysim tune --out writes and
// retryfsm.Do's json.Unmarshal reads); a bad file says where and what.
func TestReadSettingsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := policy.Settings{Enabled: true, MaxRetries: 7, BaseDelay: 750 * time.Millisecond, MaxBackoff: 20 * time.Second,
		Jitter: policy.Jitter{Mode: policy.JitterFull}, RetryAfter: policy.RetryAfter{Use: policy.HintFloor, MaxWait: time.Minute}}
	data, _ := json.Marshal(want)
	path := filepath.Join(dir, "s.json")
	os.WriteFile(path, data, 0o644)
	got, err := fleetspec.ReadSettings(path)
	if err != nil || !got.Equal(want) {
		t.Fatalf("ReadSettings = %+v, %v; want %+v", got, err, want)
	}
	for _, c := range []struct{ body, want string }{
		{`{"maxRetries": -1}`, "maxRetries = -1 is out of range"},
		{`{"maxRetrys": 3}`, "maxRetrys"},
		{`[1]`, "s.json"},
	} {
		os.WriteFile(path, []byte(c.body), 0o644)
		if _, err := fleetspec.ReadSettings(path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "s.json") {
			t.Errorf("%s: error %v, want one naming the file and %q", c.body, err, c.want)
		}
	}
}

// TestParseSettingsKey: a fleet file's settings mapping is read onto the
// defaults; an invalid one is an error at its line and column.
func TestParseSettingsKey(t *testing.T) {
	spec, err := fleetspec.Parse("x.yaml", []byte("sessions: 10\nsettings: {maxRetries: 5, baseDelayMs: 500, jitter: {mode: down, ratio: 0.5}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := policy.Settings{Enabled: true, MaxRetries: 5, BaseDelay: 500 * time.Millisecond, Jitter: policy.Jitter{Mode: policy.JitterDown, Ratio: 0.5}}
	if spec.Config.Settings == nil || !spec.Config.Settings.Equal(want) {
		t.Fatalf("settings = %+v, want %+v", spec.Config.Settings, want)
	}
	for _, c := range []struct{ src, want string }{
		{"sessions: 10\nsettings: {maxRetries: -2}\n", "x.yaml:2:11: settings: retry settings: maxRetries = -2 is out of range"},
		{"sessions: 10\nsettings: 3\n", "x.yaml:2:11: settings:"},
		{"sessions: 10\nsettings: {bogus: 1}\n", "x.yaml:2:11: settings:"},
	} {
		_, err := fleetspec.Parse("x.yaml", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to start with %q", c.src, err, c.want)
		}
	}
}
