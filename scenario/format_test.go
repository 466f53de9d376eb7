package scenario

import (
	"path/filepath"
	"reflect"
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
		Provider: "p", ModelID: "m", BaseURL: "https://x/y", SessionID: "null",
		Turns:   []Turn{{StopReason: policy.StopReasonError, ErrorMessage: "a\\nb \"q\"", Usage: Usage{Input: 1, CacheRead: 2}, SwitchModel: true, Duration: 1500 * time.Millisecond}},
		Actions: []Action{{At: time.Second, Do: "set_auto_retry", ID: "1", Enabled: &yes}, {At: 2 * time.Second, Do: "prompt", Message: "hi: there"}},
	})
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

// sameScenario compares two scenarios, positions, paths and default
// spellings aside.
func sameScenario(a, b *Scenario) string {
	if !a.Settings.Equal(b.Settings) {
		return "settings differ"
	}
	strip := func(sc *Scenario) Scenario {
		c := *sc
		c.Path, c.Settings = "", policy.Settings{}
		if c.Variant == "" {
			c.Variant = "sound"
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
		if !reflect.DeepEqual(vx.Field(i).Interface(), vy.Field(i).Interface()) {
			out += vx.Type().Field(i).Name + ": " + reflect.ValueOf(vx.Field(i).Interface()).String() + "\n"
		}
	}
	return out
}
