package fleet

import (
	"bytes"
	"context"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// shardSweep is a sweep of three groups (two fleets, one of them with two
// mixes) of two seeds each: the runs of a group are not next to each other
// in every split, and the groups' order is not the shards'.
func shardSweep() []fleetspec.Config {
	var cfgs []fleetspec.Config
	for _, name := range []string{"a", "b"} {
		for _, mix := range []fleetspec.Mix{{{Profile: "omp-2026-02", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}, {{Profile: "pi", Percent: 100}}} {
			if name == "b" && len(mix) == 1 {
				continue
			}
			for _, c := range seedSweep(1, 2) {
				c.Name, c.Profiles, c.Sessions = name, mix, 60
				cfgs = append(cfgs, c)
			}
		}
	}
	return cfgs
}

// runShards runs every shard of a split into n and reads each back from its
// JSON.
func runShards(t *testing.T, cfgs []fleetspec.Config, n int) []*Partial {
	t.Helper()
	var parts []*Partial
	for i := range n {
		p, err := Run(context.Background(), PlanOf(cfgs...), Options{Shard: Shard{Index: i, Count: n}})
		if err != nil {
			t.Fatal(err)
		}
		data, err := p.JSON()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadPartial(data)
		if err != nil {
			t.Fatalf("shard %d/%d: %v\n%s", i, n, err, data)
		}
		parts = append(parts, back)
	}
	return parts
}

// TestShardsMergeToSweep: for every split, the shards' partial results,
// through their JSON and merged in any order, give byte for byte the
// whole sweep's --json.
func TestShardsMergeToSweep(t *testing.T) {
	cfgs := shardSweep()
	whole, err := sweepConfigs(cfgs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := whole.JSON()
	if len(whole.Groups) != 3 {
		t.Fatalf("%d groups", len(whole.Groups))
	}
	for _, n := range []int{1, 2, 4, 5, 9} { // 9: more shards than runs, some empty
		parts := runShards(t, cfgs, n)
		slices.Reverse(parts)
		got, err := MergePartials(parts, nil)
		if err != nil {
			t.Fatalf("%d shards: %v", n, err)
		}
		gj, _ := got.JSON()
		if !bytes.Equal(gj, want) {
			t.Fatalf("%d shards merged differ from the sweep:\n%s\n---\n%s", n, gj, want)
		}
	}
	// A shard holds every n-th run.
	p, err := Run(context.Background(), PlanOf(cfgs...), Options{Shard: Shard{Index: 1, Count: 4}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	var runs int
	for _, g := range p.Result.Groups {
		runs += len(g.Seeds)
	}
	if runs != 2 || p.Runs != 6 || p.Groups != 3 || !slices.Equal(p.GroupIndex, []int{0, 2}) {
		t.Fatalf("shard 1/4: %d runs, sweep of %d runs and %d groups, group indexes %v", runs, p.Runs, p.Groups, p.GroupIndex)
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/4", Shard{0, 4}, ""},
		{"3/4", Shard{3, 4}, ""},
		{"0/1", Shard{0, 1}, ""},
		{"4/4", Shard{}, `"4/4": shard index 4 is out of range (allowed: 0 to 3; shards are numbered from 0)`},
		{"-1/4", Shard{}, "shard index -1 is out of range"},
		{"1/0", Shard{}, `"1/0": 0 shards is out of range (allowed: 1 to 1000000)`},
		{"1", Shard{}, `"1": expected I/N, shard I of N numbered from 0 (e.g. 0/4 to 3/4)`},
		{"a/b", Shard{}, "expected I/N"},
	} {
		got, err := ParseShard(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
			}
			if got.String() != c.in {
				t.Errorf("%q: String %q", c.in, got.String())
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		}
	}
}

// TestSweepID: the identity (Plan.ID) follows every run and its place.
func TestSweepID(t *testing.T) {
	cfgs := shardSweep()
	id, err := PlanOf(cfgs...).ID()
	if err != nil || !strings.HasPrefix(id, "sha256:") || len(id) != len("sha256:")+64 {
		t.Fatalf("%q %v", id, err)
	}
	same, _ := PlanOf(shardSweep()...).ID()
	other := shardSweep()
	other[3].Seed = 9
	seed, _ := PlanOf(other...).ID()
	swapped := shardSweep()
	swapped[0], swapped[1] = swapped[1], swapped[0]
	order, _ := PlanOf(swapped...).ID()
	if same != id || seed == id || order == id || seed == order {
		t.Fatalf("ids: %s (same %s), another seed %s, another order %s", id, same, seed, order)
	}
}

// TestMergePartialsErrors: a missing shard, a shard twice, shards of
// another sweep or split are errors naming them.
func TestMergePartialsErrors(t *testing.T) {
	cfgs := shardSweep()
	four := runShards(t, cfgs, 4)
	names := []string{"s0.json", "s1.json", "s2.json", "s3.json", "x.json"}
	other := slices.Clone(cfgs)
	other[0].Seed = 7
	foreign, err := Run(context.Background(), PlanOf(other...), Options{Shard: Shard{Index: 2, Count: 4}})
	if err != nil {
		t.Fatal(err)
	}
	three := runShards(t, cfgs, 3)
	for _, c := range []struct {
		name  string
		parts []*Partial
		want  string
	}{
		{"none", nil, "no partial results to merge"},
		{"missing", []*Partial{four[0], four[1], four[3]}, "shard 2/4 missing (a split into 4 needs every shard from 0/4 to 3/4)"},
		{"two missing", []*Partial{four[1], four[3]}, "shard 0/4, 2/4 missing"},
		{"twice", []*Partial{four[0], four[1], four[2], four[3], four[1]}, "shard 1/4 given twice: s1.json and x.json"},
		{"another sweep", []*Partial{four[0], four[1], foreign, four[3]}, "s2.json: a shard of another sweep than s0.json"},
		{"another split", []*Partial{four[0], four[1], four[2], four[3], three[1]}, "x.json: shard 1/3 of a split into 3, s0.json is of a split into 4"},
	} {
		_, err := MergePartials(c.parts, names)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReadPartialErrors: what is not a partial result is refused, saying
// where.
func TestReadPartialErrors(t *testing.T) {
	cfgs := shardSweep()
	p, err := Run(context.Background(), PlanOf(cfgs...), Options{Shard: Shard{Index: 0, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := p.JSON()
	whole, _ := sweepConfigs(cfgs, Options{})
	plain, _ := whole.JSON()
	edit := func(old, new string) []byte {
		if !bytes.Contains(good, []byte(old)) {
			t.Fatalf("the partial has no %q", old)
		}
		return bytes.Replace(good, []byte(old), []byte(new), 1)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"not JSON", []byte("fleet a"), "not a partial result of retrysim fleet --shard I/N --json"},
		{"a whole result", plain, "shard: missing: not a partial result (retrysim fleet --shard I/N --json writes one)"},
		{"another format", edit(`"format": 2`, `"format": 1`), "shard.format: 1 is not supported (allowed: 2)"},
		{"unknown field", edit(`"runs": 6`, `"runs": 6, "extra": 1`), `unknown field "extra"`},
		{"bad shard", edit(`"index": 0,`, `"index": 5,`), "shard: shard index 5 is out of range (allowed: 0 to 1"},
		{"negative", edit(`"calls": `, `"calls": -`), "fleets[0].profiles[0].calls: "},
		{"group index", edit(`"index": 0,
      "outages"`, `"index": 3,
      "outages"`), "fleets[0].index: 3 is out of range (allowed: 0 to 2)"},
		{"outage", edit(`"2s,20s,529"`, `"2s,20s,418"`), `fleets[0].outages[0]: "2s,20s,418": unknown kind "418"`},
		{"bin width", edit(`"binMs": `, `"binMs": 3`), "fleets[0].profiles[0].wireCallsPerBin.binMs: "},
		{"series total", edit(`"counts": [
            `, `"counts": [
            1000000,
            `), "fleets[0].profiles[0].wireCallsPerBin.counts: add up to "},
		{"two values", append(slices.Clone(good), good...), "more than one JSON value"},
		{"spread above 1", edit(`"failedShareMax": `, `"failedShareMax": 2`), "fleets[0].profiles[0].failedShareMin: "},
		{"no spread (an older build)", regexp.MustCompile(`("wireCallsPerPromptM..": )[0-9.]+`).ReplaceAll(good, []byte("${1}0")), "fleets[0].profiles[0].wireCallsPerPromptMin: 0 to wireCallsPerPromptMax 0 does not hold the runs' "},
		{"spread upside down", edit(`"wireCallsPerPromptMin": `, `"wireCallsPerPromptMin": 1000`), "fleets[0].profiles[0].wireCallsPerPromptMin: 1000"},
	} {
		_, err := ReadPartial(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	// A bucket that is not one of the histogram's.
	// (1000000 ms is even: every bucket's upper bound above 63 ms is odd.)
	first := regexp.MustCompile(`("timeToSuccessBuckets": \[\s*\[\s*)\d+`)
	bad := first.ReplaceAll(good, []byte("${1}1000000"))
	if _, err := ReadPartial(bad); err == nil || !strings.Contains(err.Error(), "is not a bucket") {
		t.Errorf("bad bucket: %v\n%s", err, bad[:min(len(bad), 2000)])
	}
	if _, err := ReadPartial(good); err != nil {
		t.Fatal(err)
	}
}

// TestSpreadIsPerSeed: a group's spread is the lowest and highest of the
// failure share and wire calls per prompt of its seeds run one by one, and
// every seed differs (so a merge that summed or kept one seed would show).
func TestSpreadIsPerSeed(t *testing.T) {
	cfgs := shardSweep()
	whole, err := sweepConfigs(cfgs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for gi := range whole.Groups {
		g := &whole.Groups[gi]
		for pi := range g.Profiles {
			want := Spread{FailedShareMin: 2, WirePerPromptMin: 1e9}
			var values []float64
			for _, c := range cfgs {
				one, err := sweepConfigs([]fleetspec.Config{c}, Options{})
				if err != nil {
					t.Fatal(err)
				}
				og := &one.Groups[0]
				if og.key() != g.key() {
					continue
				}
				s := &og.Profiles[pi]
				failed := float64(s.Failed) / float64(s.Prompts)
				wire := float64(s.WireCalls) / float64(s.Prompts)
				values = append(values, wire)
				want.Runs++
				want.FailedShareMin, want.FailedShareMax = min(want.FailedShareMin, failed), max(want.FailedShareMax, failed)
				want.WirePerPromptMin, want.WirePerPromptMax = min(want.WirePerPromptMin, wire), max(want.WirePerPromptMax, wire)
			}
			if got := g.Profiles[pi].Spread; got != want {
				t.Errorf("%s %s %s: spread %+v, want %+v", g.Fleet, g.Mix, g.Profiles[pi].Profile, got, want)
			}
			if want.Runs != 2 || values[0] == values[1] {
				t.Errorf("%s %s: %d seeds, calls per prompt %v: not a test of the spread", g.Fleet, g.Mix, want.Runs, values)
			}
		}
	}
}

// TestMergePartialsRunCount: a partial whose groups hold another number of
// runs than its shard does is refused.
func TestMergePartialsRunCount(t *testing.T) {
	parts := runShards(t, shardSweep(), 2)
	g := &parts[1].Result.Groups[0]
	g.Seeds = g.Seeds[1:]
	_, err := MergePartials(parts, []string{"a.json", "b.json"})
	if err == nil || !strings.Contains(err.Error(), "b.json: holds 2 runs; shard 1/2 of a sweep of 6 runs holds 3") {
		t.Fatalf("error %v", err)
	}
}
