package fleet_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
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
		spec, err := fleetspec.Parse("f.yaml", []byte(text))
		if err != nil {
			var fe *fleetspec.FileError
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
	var cfgs []fleetspec.Config
	for _, name := range []string{"a", "b"} {
		for seed := int64(1); seed <= 3; seed++ {
			c := fleetspec.Default(10)
			c.Name, c.Seed = name, seed
			cfgs = append(cfgs, c)
		}
	}
	whole, err := sweepConfigs(cfgs, fleet.Options{Workers: 1})
	if err != nil {
		f.Fatal(err)
	}
	var parts [2]*fleet.Partial
	for i := range parts {
		if parts[i], err = fleet.Run(context.Background(), fleet.PlanOf(cfgs...), fleet.Options{Shard: fleet.Shard{Index: i, Count: 2}, Workers: 1}); err != nil {
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

// FuzzShardPlan: for sweeps of two specs (seed ranges, one or two mixes,
// the same fleet name or not, so that groups repeat and stretches join)
// and any split, every shard run from the specs is byte for byte the shard
// run from their expanded configurations, Plan.Sessions counts its
// sessions, and the shards merge into exactly the whole sweep.
func FuzzShardPlan(f *testing.F) {
	f.Add(uint16(1), uint8(3), uint8(2), false, true, uint8(2))
	f.Add(uint16(7), uint8(0), uint8(5), true, false, uint8(6))
	f.Add(uint16(1), uint8(4), uint8(4), false, false, uint8(0))
	f.Fuzz(func(t *testing.T, from uint16, n1, n2 uint8, twoMixes, sameName bool, split uint8) {
		a := fleetspec.NewSpec(fleetspec.Default(3))
		a.SeedFrom = int64(from) + 1
		a.SeedTo = a.SeedFrom + int64(n1%8)
		if twoMixes {
			a.Mixes = append(a.Mixes, fleetspec.Mix{{Profile: "pi", Percent: 100}})
		}
		b := fleetspec.NewSpec(fleetspec.Default(2))
		if !sameName {
			b.Config.Name = "b"
		}
		b.SeedFrom = a.SeedTo + 1 // continues a's last stretch when the configurations agree
		if n2%3 == 0 {
			b.Config.Sessions = 3
		}
		b.SeedTo = b.SeedFrom + int64(n2%8)
		specs := []*fleetspec.Spec{a, b}
		var cfgs []fleetspec.Config
		for _, s := range specs {
			cfgs = append(cfgs, s.Configs()...)
		}
		whole, err := sweepConfigs(cfgs, fleet.Options{Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		n := int(split%9) + 1
		var parts []*fleet.Partial
		for i := range n {
			sh := fleet.Shard{Index: i, Count: n}
			p, err := fleet.Run(context.Background(), fleet.PlanOfSpecs(specs...), fleet.Options{Shard: sh, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			q, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), fleet.Options{Shard: sh, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			pj, _ := p.JSON()
			qj, _ := q.JSON()
			if string(pj) != string(qj) {
				t.Fatalf("shard %s from specs differs from configurations:\n%s\n---\n%s", sh, pj, qj)
			}
			var sessions int64
			for k, c := range cfgs {
				if sh.Holds(k) {
					sessions += int64(c.Sessions)
				}
			}
			if got := fleet.PlanOfSpecs(specs...).Sessions(sh); got != sessions {
				t.Fatalf("Plan.Sessions(%s) = %d, want %d", sh, got, sessions)
			}
			back, err := fleet.ReadPartial(pj)
			if err != nil {
				t.Fatal(err)
			}
			parts = append(parts, back)
		}
		merged, err := fleet.MergePartials(parts, nil)
		if err != nil {
			t.Fatal(err)
		}
		mj, _ := merged.JSON()
		wj, _ := whole.JSON()
		if string(mj) != string(wj) {
			t.Fatalf("%d shards merged differ from the sweep:\n%s\n---\n%s", n, mj, wj)
		}
	})
}
