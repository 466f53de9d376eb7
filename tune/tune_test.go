package tune

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
)

// smallFleet is a fleet that runs in milliseconds and whose settings
// matter: a 529 outage over a capacity-bound provider.
func smallFleet() fleetspec.Config {
	c := fleetspec.Default(60)
	c.Rate = 20
	c.Prompts = 2
	c.PromptErrors = fleetspec.PromptErrors{}
	c.Capacity = fleetspec.Capacity{RPS: 15, Burst: 15}
	c.Outages = []fleetspec.Outage{{Start: time.Second, Duration: 6 * time.Second, Kind: fleetspec.Kind529}}
	return c
}

func tuneOf(t *testing.T, cfg fleetspec.Config, opt Options) *Report {
	t.Helper()
	tu, err := New(cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFrontBruteForce: on a small space with every candidate confirmed,
// the reported front is exactly the brute-force one: every point of the
// space run over every seed by the test itself (fleet.Run), its
// objectives computed by the test from the fleet's counts, its worst case
// over the seeds, and a point kept when no other point's worst case
// dominates it, checked pair by pair. No dominated point reported, none
// missing, and every worst case the same.
func TestFrontBruteForce(t *testing.T) {
	cfg := smallFleet()
	retries, bases, jitters, hints := []int{1, 3, 6}, []int{200, 1000}, []string{"none", "full"}, []string{"ignore", "floor"}
	axes := []Axis{{"maxRetries", []string{"1", "3", "6"}}, {"baseDelayMs", []string{"200", "1000"}},
		{"jitter", []string{"none", "full"}}, {"hint", []string{"ignore", "floor"}}}
	objectives := []string{"fail", "p95", "calls"}
	r := tuneOf(t, cfg, Options{Axes: axes, Objectives: objectives, Seeds: 2, Keep: 1, NoRefine: true, Profiles: []string{}})

	type point struct {
		set   policy.Settings
		worst []float64
	}
	var space []point
	for _, n := range retries {
		for _, b := range bases {
			for _, j := range jitters {
				for _, h := range hints {
					s := policy.Settings{Enabled: true, MaxRetries: n, BaseDelay: time.Duration(b) * time.Millisecond,
						Jitter: policy.Jitter{Mode: j}, RetryAfter: policy.RetryAfter{Use: h}}
					p := point{set: s, worst: []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}}
					for seed := int64(1); seed <= 2; seed++ {
						c := cfg
						c.Seed, c.Settings = seed, &s
						part, err := fleet.Run(context.Background(), fleet.PlanOf(c), fleet.Options{})
						if err != nil {
							t.Fatal(err)
						}
						st := &part.Result.Groups[0].Profiles[0]
						v := []float64{float64(st.Prompts-st.Succeeded) / float64(st.Prompts), st.TimeToSuccess.Quantile(0.95),
							float64(st.WireCalls) / float64(st.Prompts)}
						if st.Succeeded == 0 {
							v[1] = math.Inf(1)
						}
						for i := range v {
							p.worst[i] = math.Max(p.worst[i], v[i])
						}
					}
					space = append(space, p)
				}
			}
		}
	}
	key := func(s policy.Settings) string { b, _ := json.Marshal(s); return string(b) }
	want := map[string]bool{}
	for _, p := range space {
		dominated := false
		for _, q := range space {
			le, lt := true, false
			for i := range p.worst {
				le = le && q.worst[i] <= p.worst[i]
				lt = lt || q.worst[i] < p.worst[i]
			}
			dominated = dominated || (le && lt)
		}
		if !dominated {
			want[key(p.set)] = true
		}
	}
	if len(r.Candidates) != len(space) {
		t.Fatalf("%d candidates reported, the space has %d", len(r.Candidates), len(space))
	}
	got := map[string]bool{}
	for _, c := range r.Candidates {
		for _, p := range space {
			if key(p.set) == key(c.Settings) && !slices.Equal([]float64(c.Worst), p.worst) {
				t.Errorf("candidate %v: worst %v, the brute force's %v", c.Values, c.Worst, p.worst)
			}
		}
		if c.Front {
			got[key(c.Settings)] = true
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("front:\n got %v\nwant %v", got, want)
	}
	if len(want) < 2 || len(want) == len(space) {
		t.Errorf("the brute-force front has %d of %d points: the space does not test the front", len(want), len(space))
	}
	if len(r.Front) != len(want) {
		t.Errorf("Front lists %d IDs, want %d", len(r.Front), len(want))
	}
}

// exampleFleets are the fleets of fleets/, scaled to a tenth (sessions,
// rate and capacity, as a short run scales them) to keep the tests fast.
func exampleFleets(t *testing.T) []fleetspec.Config {
	paths, _ := filepath.Glob("../fleets/*.yaml")
	if len(paths) == 0 {
		t.Fatal("no fleets in ../fleets")
	}
	var out []fleetspec.Config
	for _, p := range paths {
		spec, err := fleetspec.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		c := scaled(spec.Config, 0.1)
		c.Profiles = spec.Mixes[0]
		c.Seed = spec.SeedFrom
		out = append(out, c)
	}
	return out
}

// TestExampleFleetsPlaceProfiles: on each example fleet, a small tune
// places every named profile (each ran, its worst case against the
// front) and either a front point no profile dominates or a profile on
// the front.
func TestExampleFleetsPlaceProfiles(t *testing.T) {
	for _, cfg := range exampleFleets(t) {
		t.Run(cfg.Name, func(t *testing.T) {
			axes := []Axis{{"maxRetries", []string{"3", "10"}}, {"baseDelayMs", []string{"500", "2000"}}, {"hint", []string{"ignore", "floor"}},
				{"maxWaitMs", []string{"0", "300000"}}}
			r := tuneOf(t, cfg, Options{Axes: axes, Seeds: 2})
			if len(r.Profiles) != len(policy.Profiles()) {
				t.Fatalf("%d profiles placed, want %d", len(r.Profiles), len(policy.Profiles()))
			}
			free, onFront := 0, 0
			for _, p := range r.Profiles {
				if p.Error != "" || len(p.Worst) != len(r.Objectives) {
					t.Errorf("profile %s not placed: %q", p.Profile, p.Error)
				}
				if p.OnFront {
					onFront++
					if len(p.DominatedBy) > 0 {
						t.Errorf("profile %s on the front yet dominated by %v", p.Profile, p.DominatedBy)
					}
				} else if len(p.DominatedBy) == 0 {
					t.Errorf("profile %s off the front, dominated by no front point", p.Profile)
				}
			}
			for _, id := range r.Front {
				if len(r.Candidates[id-1].DominatedBy) == 0 {
					free++
				}
			}
			if free == 0 && onFront == 0 {
				t.Errorf("every front point is dominated by a profile and no profile is on the front")
			}
			t.Logf("%s: %d candidates, front %d (%d no profile dominates), %d profiles on the front, chosen #%d",
				cfg.Name, len(r.Candidates), len(r.Front), free, onFront, r.Chosen)
		})
	}
}

// TestDeterministic: the same tune gives the same bytes on one worker
// and on four, and the progress ends at Sessions exactly.
func TestDeterministic(t *testing.T) {
	var outs [][]byte
	for _, w := range []int{1, 4} {
		var prog atomic.Int64
		tu, err := New(smallFleet(), Options{Workers: w, Progress: &prog, Profiles: []string{"omp-2026-06", "pi"}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := tu.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if prog.Load() != tu.Sessions() {
			t.Errorf("progress %d, Sessions %d", prog.Load(), tu.Sessions())
		}
		b, _ := r.JSON()
		outs = append(outs, b)
		if r.Counts.Refined == 0 || r.Counts.Confirmed >= len(r.Candidates) {
			t.Errorf("counts %+v: the default tune refines and prunes", r.Counts)
		}
		if want := int(math.Ceil(DefaultKeep * float64(r.Counts.ShortRuns))); r.Counts.Confirmed != want {
			t.Errorf("%d confirmed of %d short runs, want %d", r.Counts.Confirmed, r.Counts.ShortRuns, want)
		}
		for _, c := range r.Candidates {
			if c.Pruned != (c.Seeds == nil) || (c.Front && c.Pruned) {
				t.Errorf("candidate %d: pruned %v with %d seeds' values, front %v", c.ID, c.Pruned, len(c.Seeds), c.Front)
			}
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("the report differs with the number of workers")
	}
}

// TestShardsMerge: with every candidate confirmed, the shards of a split,
// merged in any order, give the whole tune's report (but its identity,
// which names the split); the report's JSON reads back to the same
// bytes; a shard missing, twice or of another tune is an error.
func TestShardsMerge(t *testing.T) {
	opt := Options{Axes: []Axis{{"maxRetries", []string{"1", "4"}}, {"jitter", []string{"none", "full", "down:0.5"}}},
		Seeds: 2, Keep: 1, NoRefine: true, Profiles: []string{"omp-2026-02", "omp-2026-06", "codex"}}
	whole := tuneOf(t, smallFleet(), opt)
	var parts []*Report
	for i := range 3 {
		o := opt
		o.Shard = fleet.Shard{Index: 2 - i, Count: 3}
		part := tuneOf(t, smallFleet(), o)
		b, _ := part.JSON()
		back, err := ReadReport(b)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, back)
	}
	merged, err := Merge(parts, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	merged.Tune = whole.Tune
	wb, _ := whole.JSON()
	mb, _ := merged.JSON()
	if !bytes.Equal(wb, mb) {
		t.Errorf("merged shards:\n%s\nwhole:\n%s", mb, wb)
	}
	back, err := ReadReport(wb)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Merge([]*Report{back}, []string{"whole"})
	if ab, _ := again.JSON(); !bytes.Equal(ab, wb) {
		t.Error("a report read back and merged alone is not the same bytes")
	}
	for _, c := range []struct {
		parts []*Report
		want  string
	}{
		{parts[:2], "shard 0/3 missing"},
		{[]*Report{parts[0], parts[0], parts[1]}, "given twice"},
		{[]*Report{parts[0], parts[1], whole}, "another tune"},
	} {
		if _, err := Merge(c.parts, []string{"a", "b", "c"}); err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// TestParseAxesAndObjectives: the flags' syntax and their errors.
func TestParseAxesAndObjectives(t *testing.T) {
	axes, err := ParseAxes("jitter=none,down:0.25; maxRetries")
	if err != nil {
		t.Fatal(err)
	}
	want := []Axis{{"maxRetries", []string{"2", "5", "10"}}, {"jitter", []string{"none", "down:0.25"}}}
	if !reflect.DeepEqual(axes, want) {
		t.Errorf("axes %v, want %v", axes, want)
	}
	for spec, msg := range map[string]string{
		"maxRetry=3":                `unknown axis "maxRetry"`,
		"maxRetries=3;maxRetries=4": "given twice",
		"jitter=sideways":           `"sideways" (allowed: MODE`,
		"baseDelayMs=-5":            "allowed: an integer number of milliseconds",
		"maxRetries=1,1":            `value "1" given twice`,
		"":                          "no axes",
	} {
		if _, err := ParseAxes(spec); err == nil || !bytes.Contains([]byte(err.Error()), []byte(msg)) {
			t.Errorf("%q: error %v, want %q", spec, err, msg)
		}
	}
	objs, err := ParseObjectives("calls,fail")
	if err != nil || !slices.Equal(objs, []string{"fail", "calls"}) {
		t.Errorf("objectives %v, %v", objs, err)
	}
	if _, err := ParseObjectives("fail,p90"); err == nil {
		t.Error("p90 accepted")
	}
	if _, err := New(smallFleet(), Options{Axes: []Axis{{"baseDelayMs", []string{"5000"}}, {"maxBackoffMs", []string{"1000"}}}}); err == nil {
		t.Error("a design of invalid combinations only accepted")
	}
}

// TestChoose: the chosen point has the front's least first objective and,
// among those, the least sum of the others scaled over them.
func TestChoose(t *testing.T) {
	r := &Report{Objectives: []string{"fail", "p95", "calls"}, Candidates: []Candidate{
		{Worst: Vec{0, 100, 10}}, {Worst: Vec{0, 90, 12}}, {Worst: Vec{0, 200, 8}}, {Worst: Vec{0.1, 1, 1}}}, Front: []int{1, 2, 3, 4}}
	// among the first three: 0.09+0.5, 0+1, 1+0
	if got := r.choose(); got != 1 {
		t.Errorf("chosen %d, want 1", got)
	}
	r.Candidates[0].Worst[1] = 150 // 0.55+0.5, 0+1, 1+0: the second and third tie
	if got := r.choose(); got != 2 {
		t.Errorf("chosen %d, want 2 (the first of equal sums)", got)
	}
	r.Candidates[2].Worst[1] = 95 // 1+0.5, 0+1, 0.08+0
	if got := r.choose(); got != 3 {
		t.Errorf("chosen %d, want 3", got)
	}
}

// TestRefineMidpoints: the refinement's points lie between a front
// point's value and its neighbours: the integer mean of retries, the
// geometric mean of delays, none next to a 0 that means none.
func TestRefineMidpoints(t *testing.T) {
	for _, c := range []struct {
		axis, v string
		values  []string
		want    []string
	}{
		{"maxRetries", "5", []string{"2", "5", "10"}, []string{"3", "7"}},
		{"maxRetries", "2", []string{"2", "3"}, nil}, // no integer between
		{"baseDelayMs", "2000", []string{"500", "2000", "5000"}, []string{"1000", "3162"}},
		{"maxBackoffMs", "30000", []string{"0", "30000", "120000"}, []string{"60000"}},
		{"maxWaitMs", "0", []string{"0", "300000"}, nil},
	} {
		d := axisByName(c.axis)
		var got []string
		for _, nb := range neighbours(c.values, c.v, d.less) {
			if m, ok := d.mid(c.v, nb); ok {
				got = append(got, m)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s %s among %v: midpoints %v, want %v", c.axis, c.v, c.values, got, c.want)
		}
	}
}

// TestReadReportErrors: a report that is not one, or whose parts do not
// fit together, is an error naming the field; no cut of a report panics.
func TestReadReportErrors(t *testing.T) {
	r := tuneOf(t, smallFleet(), Options{Axes: []Axis{{"maxRetries", []string{"1", "4"}}}, Seeds: 2, Profiles: []string{"pi"}})
	good, _ := r.JSON()
	if _, err := ReadReport(good); err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	cand := func(m map[string]any) map[string]any { return m["candidates"].([]any)[0].(map[string]any) }
	for _, c := range []struct {
		data []byte
		want string
	}{
		{[]byte("sessions: 3\n"), "not a tune report"},
		{edit(func(m map[string]any) { m["extra"] = 1 }), `unknown field "extra"`},
		{edit(func(m map[string]any) { m["format"] = 9 }), "format: 9 (allowed: 1"},
		{edit(func(m map[string]any) { m["shard"] = "3/2" }), "shard:"},
		{edit(func(m map[string]any) { m["seeds"] = []any{} }), "seeds: 0 seeds"},
		{edit(func(m map[string]any) { m["objectives"] = []any{"fail", "speed"} }), `unknown objective "speed"`},
		{edit(func(m map[string]any) { m["axes"] = []any{map[string]any{"name": "maxRetries", "values": []any{"x"}}} }), "axes: axis maxRetries"},
		{edit(func(m map[string]any) { cand(m)["values"] = []any{} }), "candidates[0].values: 0 values"},
		{edit(func(m map[string]any) { cand(m)["short"] = []any{0.1} }), "candidates[0].short: 1 values"},
		{edit(func(m map[string]any) { cand(m)["pruned"] = false; cand(m)["seeds"] = []any{} }), "candidates[0].seeds: 0 seeds' values"},
		{edit(func(m map[string]any) { cand(m)["settings"] = map[string]any{"maxRetries": -1} }), "candidates[0].settings"},
		{edit(func(m map[string]any) { m["profiles"].([]any)[0].(map[string]any)["profile"] = "nope" }), `profiles[0].profile: unknown profile "nope"`},
	} {
		if _, err := ReadReport(c.data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	for n := 0; n < len(good); n += 97 {
		if r, err := ReadReport(good[:n]); err == nil {
			Merge([]*Report{r}, []string{"cut"})
		}
	}
}
