package fleet_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/fleet"
)

// FuzzParseFleet: whatever the text, Parse never panics; it either gives a
// fleet that validates, with a mix and a range of seeds, or a *FileError that names the file and
// says what is wrong in one line.
func FuzzParseFleet(f *testing.F) {
	for _, name := range []string{"../fleets/outage-529.yaml", "../fleets/rate-limited.yaml", "../fleets/quota-window.yaml"} {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{"", "sessions: 1\n", "{sessions: 0}", "sessions: 1\noutages: [{start: 1s, duration: 1s, kind: 999}]\n",
		"sessions: 1\nprofile: \"a=50%,b=50%\"\n", "- 1\n- 2\n", "sessions: &a 1\nrate: *a\n", "sessions: 1\nthink: exp:-1s\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		spec, err := fleet.Parse("f.yaml", []byte(text))
		if err != nil {
			var fe *fleet.FileError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "f.yaml") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %T %q: want a one-line *FileError naming the file", err, err)
			}
			return
		}
		if spec == nil || len(spec.Mixes) == 0 || spec.SeedFrom > spec.SeedTo {
			t.Fatalf("spec %+v without an error", spec)
		}
		if err := spec.Config.Validate(); err != nil {
			t.Fatalf("parsed, but its fleet does not validate: %v", err)
		}
	})
}

// FuzzMergePartials: whatever the text of one shard's partial result,
// ReadPartial and MergePartials never panic; an error quotes at most 64
// bytes of any value (one bounded line); a merge that succeeds gives each
// group exactly the sweep's seeds and no negative count.
func FuzzMergePartials(f *testing.F) {
	var cfgs []fleet.Config
	for _, name := range []string{"a", "b"} {
		for seed := int64(1); seed <= 3; seed++ {
			c := fleet.Default(10)
			c.Name, c.Seed = name, seed
			cfgs = append(cfgs, c)
		}
	}
	whole, err := fleet.Sweep(cfgs, 1)
	if err != nil {
		f.Fatal(err)
	}
	var parts [2]*fleet.Partial
	for i := range parts {
		if parts[i], err = fleet.RunShard(cfgs, fleet.Shard{Index: i, Count: 2}, 1); err != nil {
			f.Fatal(err)
		}
	}
	good, err := parts[1].JSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(strings.Replace(string(good), `"calls": `, `"calls": 9223372036854775807`, 1)))
	f.Add([]byte(strings.Replace(string(good), "\"seeds\": [\n        2", "\"seeds\": [\n        7", 1)))
	f.Add([]byte(`{"shard": {"format": 2}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := fleet.ReadPartial(data)
		if err != nil {
			if msg := err.Error(); len(msg) > 2000 || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("a %d-byte or multi-line error: %.500q", len(msg), msg)
			}
			return
		}
		res, err := fleet.MergePartials([]*fleet.Partial{parts[0], p}, []string{"a.json", "b.json"})
		if err != nil {
			if msg := err.Error(); len(msg) > 2000 || strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("a %d-byte or multi-line error: %.500q", len(msg), msg)
			}
			return
		}
		if len(res.Groups) != len(whole.Groups) {
			t.Fatalf("%d groups merged, the sweep has %d", len(res.Groups), len(whole.Groups))
		}
		for i, g := range res.Groups {
			if !slices.Equal(g.Seeds, whole.Groups[i].Seeds) {
				t.Fatalf("group %d: seeds %v, the sweep's %v", i, g.Seeds, whole.Groups[i].Seeds)
			}
			for _, s := range g.Profiles {
				for _, v := range []int64{s.Sessions, s.Prompts, s.Succeeded, s.Failed, s.Waiting, s.Calls, s.WireCalls, s.Rejected,
					s.InRetryAfter, s.ChainsSucceeded, s.ChainsExhausted, s.ChainsFailFast, s.ChainsOther, s.PeakDuring, s.PeakAfter} {
					if v < 0 {
						t.Fatalf("group %d, %s: a negative count: %+v", i, s.Profile, s)
					}
				}
			}
		}
		if _, err := res.JSON(); err != nil {
			t.Fatal(err)
		}
	})
}
