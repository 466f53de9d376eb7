package fleet

import (
	"bytes"
	"context"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"math"
	"regexp"
	"strings"
	"testing"
)

// twoSeedSweep is the default fleet of 20 sessions over seeds 1 and 2.
func twoSeedSweep() []fleetspec.Config {
	var cfgs []fleetspec.Config
	for seed := int64(1); seed <= 2; seed++ {
		c := fleetspec.Default(20)
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	return cfgs
}

// mergeErr merges parts named names and returns the error's text.
func mergeErr(t *testing.T, parts []*Partial, names []string) string {
	t.Helper()
	res, err := MergePartials(parts, names)
	if err == nil {
		j, _ := res.JSON()
		t.Fatalf("merged without an error:\n%s", j)
	}
	return err.Error()
}

// TestMergePartialsOverflow: counters whose sum overflows int64 are an
// error naming the file and the counter, not a wrapped negative count
// (issue 19 §3).
func TestMergePartialsOverflow(t *testing.T) {
	parts := runShards(t, twoSeedSweep(), 2)
	for _, p := range parts {
		p.Result.Groups[0].Profiles[0].Calls = math.MaxInt64
	}
	got := mergeErr(t, parts, []string{"a.json", "b.json"})
	if !strings.Contains(got, `b.json: fleet "default", profile "omp-2026-02", "omp-2026-02": calls adds up to more than 9223372036854775807`) {
		t.Fatalf("error %q", got)
	}
}

// TestMergePartialsSeedsExactlyTheSplits: a partial whose seeds are outside
// the sweep, another shard's, or repeated is an error naming that file,
// whichever order the files come in (issue 19 §3).
func TestMergePartialsSeedsExactlyTheSplits(t *testing.T) {
	for _, c := range []struct {
		name  string
		n     int // the split
		bad   int // the shard tampered with
		seeds []int64
		want  string
	}{
		{"outside the sweep", 2, 1, []int64{7}, "b.json: fleets[0].seeds: [7] are not the seeds shard 1/2 holds of fleet 0 ([2])"},
		{"another shard's", 2, 1, []int64{1}, "b.json: fleets[0].seeds: [1] are not the seeds shard 1/2 holds of fleet 0 ([2])"},
		{"a whole sweep's seeds changed", 1, 0, []int64{2, 7}, "a.json: fleets[0].seeds: [2 7] are not the seeds shard 0/1 holds of fleet 0 ([1 2])"},
		{"repeated", 1, 0, []int64{1, 1}, "a.json: fleets[0].seeds: [1 1] are not the seeds shard 0/1 holds of fleet 0 ([1 2])"},
	} {
		parts := runShards(t, twoSeedSweep(), c.n)
		names := []string{"a.json", "b.json"}[:c.n]
		parts[c.bad].Result.Groups[0].Seeds = c.seeds
		if got := mergeErr(t, parts, names); !strings.Contains(got, c.want) {
			t.Errorf("%s: error %q, want %q", c.name, got, c.want)
		}
		// The other order names the same file.
		if c.n == 2 {
			if got := mergeErr(t, []*Partial{parts[1], parts[0]}, []string{"b.json", "a.json"}); !strings.Contains(got, c.want) {
				t.Errorf("%s, reversed: error %q, want %q", c.name, got, c.want)
			}
		}
	}
	// Through the JSON: a tampered seed is found after ReadPartial too.
	parts := runShards(t, twoSeedSweep(), 2)
	data, _ := parts[1].JSON()
	data = bytes.Replace(data, []byte("\"seeds\": [\n        2\n      ]"), []byte("\"seeds\": [\n        7\n      ]"), 1)
	back, err := ReadPartial(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := mergeErr(t, []*Partial{parts[0], back}, []string{"a.json", "b.json"}); !strings.Contains(got, "b.json: fleets[0].seeds: [7]") {
		t.Fatalf("error %q", got)
	}
}

// TestMergePartialsNamesTheChangedFile: a changed fleet name is blamed on
// the file that has it, whether the body alone or the header too was
// changed, and whichever comes first (issue 19 §3: it blamed the other).
func TestMergePartialsNamesTheChangedFile(t *testing.T) {
	cfgs := shardSweep()
	// The body only: the file disagrees with its own header.
	parts := runShards(t, cfgs, 3)
	data, _ := parts[0].JSON()
	_, err := ReadPartial(bytes.Replace(data, []byte(`"fleet": "a",
      "profile"`), []byte(`"fleet": "evil",
      "profile"`), 1))
	if err == nil || !strings.Contains(err.Error(), `fleets[0].fleet: "evil" differs from the sweep's fleet 0 in shard.sweepFleets (fleet "a")`) {
		t.Fatalf("body changed: %v", err)
	}
	// The header and the body: the two others agree with each other.
	parts = runShards(t, cfgs, 3)
	data, _ = parts[0].JSON()
	changed, err := ReadPartial(bytes.ReplaceAll(data, []byte(`"fleet": "a"`), []byte(`"fleet": "evil"`)))
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]int{{0, 1, 2}, {1, 0, 2}, {2, 1, 0}} {
		all := []*Partial{changed, parts[1], parts[2]}
		names := []string{"s0.json", "s1.json", "s2.json"}
		var ps []*Partial
		var ns []string
		for _, i := range order {
			ps, ns = append(ps, all[i]), append(ns, names[i])
		}
		got := mergeErr(t, ps, ns)
		if !strings.HasPrefix(got, "s0.json: the sweep's fleets or plan (shard.sweepFleets, shard.plan) differ from s") {
			t.Errorf("order %v: error %q, want s0.json named", order, got)
		}
	}
}

// TestPartialErrorsQuoteAtMost64Bytes: a huge value in a partial (a group
// name, a profile, an unknown key, the sweep's identity, an outage) is
// quoted by its first 64 bytes only (issue 19 §3: a 10 MB name gave a
// 10.5 MB line).
func TestPartialErrorsQuoteAtMost64Bytes(t *testing.T) {
	parts := runShards(t, twoSeedSweep(), 2)
	good, _ := parts[1].JSON()
	// 64 KiB: a thousand times maxQuoted, so an error quoting any of these
	// whole would be far over the 400 bytes allowed below.
	huge := strings.Repeat("x", 64<<10)
	for _, c := range []struct{ name, old, new string }{
		{"group name", `"fleet": "default",
      "profile"`, `"fleet": "` + huge + `",
      "profile"`},
		{"unknown key", `"runs": 2`, `"runs": 2, "` + huge + `": 1`},
		{"sweep", `"sweep": "sha256:`, `"sweep": "` + huge},
		{"outage", `"outages": []`, `"outages": ["` + huge + `"]`},
		{"header name", `"sweepFleets": [
      {
        "fleet": "default"`, `"sweepFleets": [
      {
        "fleet": "` + huge + `"`},
	} {
		if !bytes.Contains(good, []byte(c.old)) {
			t.Fatalf("%s: no %q in\n%s", c.name, c.old, good)
		}
		_, err := ReadPartial(bytes.Replace(good, []byte(c.old), []byte(c.new), 1))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if len(err.Error()) > 400 || !strings.Contains(err.Error(), strings.Repeat("x", 64)+`"…(`) {
			t.Errorf("%s: a %d-byte error: %.300s", c.name, len(err.Error()), err.Error())
		}
	}
	// A consistent huge name in one file: the merge error quotes none of it.
	data := bytes.ReplaceAll(good, []byte(`"fleet": "default"`), []byte(`"fleet": "`+huge+`"`))
	changed, err := ReadPartial(data)
	if err != nil {
		t.Fatalf("%.300s", err)
	}
	if got := mergeErr(t, []*Partial{parts[0], changed}, []string{"a.json", "b.json"}); len(got) > 400 {
		t.Errorf("a %d-byte merge error: %.300s", len(got), got)
	}
}

// TestReadPartialPlanErrors: the header's plan is checked: stretches that
// do not follow each other, seeds out of range, a plan that does not cover
// the sweep, a group named twice, a negative capacity.
func TestReadPartialPlanErrors(t *testing.T) {
	p, err := Run(context.Background(), PlanOf(shardSweep()...), Options{Shard: Shard{Index: 0, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := p.JSON()
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
		{"gap", edit(`"run": 2,`, `"run": 3,`), "shard.plan[1].run: 3, not 2 (the stretches follow each other from run 0)"},
		{"seed 0", edit(`"seedFrom": 1,`, `"seedFrom": 0,`), "shard.plan[0]: seeds 0 to 2 (allowed: from 1"},
		{"past the sweep", edit(`"seedTo": 2
      }
    ]`, `"seedTo": 9000000000000000000
      }
    ]`), "shard.plan[2]: seeds 1 to 9000000000000000000 run past the sweep's 6 runs"},
		{"short", edit(`"runs": 6,`, `"runs": 7,`), "shard.plan: covers 6 runs, not the sweep's 7"},
		{"fleet out of range", edit(`"fleet": 2,`, `"fleet": 5,`), "shard.plan[2].fleet: 5 is out of range (allowed: 0 to 2"},
		{"negative capacity", regexp.MustCompile(`"capacityPer100ms": [0-9.]+`).ReplaceAll(good, []byte(`"capacityPer100ms": -1`)), "fleets[0].capacityPer100ms: -1 is negative"},
	} {
		_, err := ReadPartial(c.data)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
