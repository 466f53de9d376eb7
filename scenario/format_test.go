package scenario

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// TestFormatRoundTrip: Format writes every scenario of the repository, the
// public conformance set and a scenario with every key so that Parse reads
// back the same scenario (positions aside).
func TestFormatRoundTrip(t *testing.T) {
	files, err := Files(filepath.Join("..", "scenarios"), filepath.Join("..", "testdata", "conformance", "public"),
		filepath.Join("testdata", "scenario"))
	if err != nil {
		t.Fatal(err)
	}
	var scs []*Scenario
	for _, f := range files {
		sc, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	yes := true
	scs = append(scs, &Scenario{Name: "all", Description: "Every key.", Variant: "original",
		Settings:      policy.Settings{Enabled: true, MaxRetries: 10, BaseDelay: 500 * time.Millisecond},
		ContextWindow: 1000, Compaction: Compaction{Enabled: true, Succeed: false}, Prompt: "yes", EpochMs: 5,
		Provider: "p", ModelID: "m", BaseURL: "https://x/y", SessionID: "null", Seed: 1 << 40, RandomFixed: 1e-9, HasRandomFixed: true,
		Turns: []Turn{{StopReason: policy.StopReasonError, ErrorMessage: "a\\nb \"q\"", Usage: Usage{Input: 1, CacheRead: 2}, SwitchModel: true, Duration: 1500 * time.Millisecond,
			Status: 429, Headers: map[string]string{"retry-after": "30", "x-no": "no", "x-e": "", "!#$%&'*+-.^_`|~": "a: b\n"}}},
		Actions: []Action{{At: time.Second, Do: "set_auto_retry", ID: "1", Enabled: &yes}, {At: 2 * time.Second, Do: "prompt", Message: "hi: there"},
			{At: 3 * time.Second, Do: "set_retry_settings", Settings: []byte(`{"maxRetries":2,"jitter":{"mode":"full"},"fallback":["a: b"]}`)},
			{At: 4 * time.Second, Do: "set_auto_compaction", Enabled: &yes}},
	})
	// Settings built in Go, over a profile: written as they differ from it,
	// a key set back to its default (jitter none) included.
	codex, _ := policy.ProfileByName("codex")
	set := codex.Settings.Clone()
	set.MaxRetries, set.Jitter, set.MaxBackoff, set.Persistent = 1, policy.Jitter{Mode: policy.JitterNone}, 90*time.Second, true
	set.RetryablePatterns, set.Fallback = []string{`\bslow down\b`, "yes"}, []string{"null", "m: 1"}
	built := func(name, profile string, set policy.Settings) *Scenario {
		sc, err := Parse("", []byte("{}")) // the defaults
		if err != nil {
			t.Fatal(err)
		}
		sc.Name, sc.Profile, sc.Settings = name, profile, set
		return sc
	}
	scs = append(scs, built("over-codex", "codex", set))
	gem, _ := policy.ProfileByName("gemini-cli")
	scs = append(scs, built("gemini", "gemini-cli", gem.Settings))
	// A patch that no longer gives the settings (changed by hand) is not written.
	patched, err := Parse("p.yaml", []byte("profile: pi\nsettings: {maxRetries: 1, jitter: {mode: full}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	patched.Settings.BaseDelay = 3 * time.Second
	scs = append(scs, patched)
	for _, sc := range scs {
		out := Format(sc)
		back, err := Parse(sc.Path+".formatted.yaml", out)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Path, err, out)
		}
		if msg := sameScenario(sc, back); msg != "" {
			t.Errorf("%s: %s\n%s", sc.Path, msg, out)
		}
	}
}

// TestFormatSettingsPatch: a scenario read from a file has its profile and
// its settings written as the file had them, so that a --profile given
// later merges the same keys.
func TestFormatSettingsPatch(t *testing.T) {
	in := "name: x\nprofile: codex\nsettings:\n  maxRetries: 1\n  jitter: {ratio: 0.5}\n  fallback: [\"a b\", c]\n  classify: null\nturns: []\n"
	sc, err := Parse("x.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out := string(Format(sc))
	for _, want := range []string{"\nprofile: codex\n", "\nsettings: {maxRetries: 1, jitter: {ratio: 0.5}, fallback: [\"a b\", c], classify: null}\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("Format:\n%s\nwant it to contain %q", out, want)
		}
	}
	back, err := Parse("x.yaml", []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := back.SetProfile("pi"); err != nil {
		t.Fatal(err)
	}
	if err := sc.SetProfile("pi"); err != nil {
		t.Fatal(err)
	}
	if !back.Settings.Equal(sc.Settings) {
		t.Errorf("after SetProfile(pi): %+v, want %+v", back.Settings, sc.Settings)
	}
	// Built in Go with the default profile: the original's three keys, as
	// before profiles.
	built := Format(&Scenario{Settings: policy.DefaultSettings()})
	if !strings.Contains(string(built), "variant: sound\nsettings: {enabled: true, maxRetries: 3, baseDelayMs: 2000}\n") {
		t.Errorf("Format(built):\n%s", built)
	}
}

// sameScenario compares two scenarios, positions, paths and default
// spellings aside.
func sameScenario(a, b *Scenario) string {
	if !a.Settings.Equal(b.Settings) {
		return "settings differ"
	}
	// A scenario without a patch, or whose patch no longer gives its
	// settings, has its settings written out: the one read back has another
	// patch (the same settings, compared above).
	ignorePatch := a.SettingsPatch == nil
	if prof, err := policy.ProfileByName(a.Profile); err == nil && !ignorePatch {
		set, err := prof.Settings.Apply(a.SettingsPatch)
		ignorePatch = err != nil || !set.Equal(a.Settings)
	}
	strip := func(sc *Scenario) Scenario {
		c := *sc
		c.Path, c.Settings, c.src, c.pol = "", policy.Settings{}, nil, nil // the settings are compared above (Equal)
		if c.Variant == "" {
			c.Variant = "sound"
		}
		if c.Profile == "" {
			c.Profile = policy.DefaultProfile
		}
		if c.Seed == 0 { // Go's zero value stands for the default
			c.Seed = 1
		}
		if ignorePatch {
			c.SettingsPatch = nil
		}
		c.Turns = append([]Turn{}, sc.Turns...)
		for i := range c.Turns {
			c.Turns[i].Pos = Pos{}
		}
		c.Actions = append([]Action{}, sc.Actions...)
		for i := range c.Actions {
			c.Actions[i].Pos = Pos{}
		}
		if x := sc.Expect; x != nil {
			e := *x
			e.Events = append([]ExpectEvent{}, x.Events...)
			for i := range e.Events {
				e.Events[i].Pos = Pos{}
			}
			if e.Final != nil {
				f := *e.Final
				f.Pos = Pos{}
				e.Final = &f
			}
			c.Expect = &e
		}
		return c
	}
	x, y := strip(a), strip(b)
	if !reflect.DeepEqual(x, y) {
		return "scenarios differ:\n" + formatDiff(x, y)
	}
	return ""
}

func formatDiff(x, y Scenario) string {
	vx, vy := reflect.ValueOf(x), reflect.ValueOf(y)
	out := ""
	for i := range vx.NumField() {
		if !vx.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(vx.Field(i).Interface(), vy.Field(i).Interface()) {
			out += vx.Type().Field(i).Name + ": " + reflect.ValueOf(vx.Field(i).Interface()).String() + "\n"
		}
	}
	return out
}
