package tune

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
)

// Options adjust a tune; the zero value is the default tune (SPEC.md
// §15.11): every axis at its default values, the default objectives, from the
// default settings, over 3 seeds, short runs at a quarter of the fleet,
// a third of the candidates confirmed, every named profile placed, on
// every processor.
type Options struct {
	// Axes are the axes searched and their values (nil: DefaultAxes);
	// the others keep Base's values.
	Axes []Axis
	// Objectives are the objectives minimized, names of ObjectiveNames
	// (nil: DefaultObjectives).
	Objectives []string
	// Base are the settings a candidate starts from (nil: the default
	// settings): its classification and every setting no axis varies.
	Base *policy.Settings
	// Seeds is the number of seeds every confirmed candidate and profile
	// runs over, from the fleet's seed on (0: 3).
	Seeds int
	// Scale is the size of a short run: the fleet's sessions, arrival
	// rate and capacity times Scale (0: 1/4; 1: short runs are full).
	Scale float64
	// Keep is the share of the short-run candidates a tune confirms with
	// full runs over every seed (0: 1/3; 1: every candidate).
	Keep float64
	// NoRefine leaves out the refinement around the short runs' front.
	NoRefine bool
	// Profiles are the named profiles placed against the front (nil:
	// every profile of policy.Profiles; empty non-nil: none).
	Profiles []string
	// Shard, when set, runs only shard Shard.Index of Shard.Count: the
	// design's candidates k, and the profiles k, with k mod Count = Index
	// (the zero Shard: all, the shard 0/1). Merge puts shards together.
	Shard fleet.Shard
	// Workers is the number of fleet runs at once (0: GOMAXPROCS).
	Workers int
	// Progress, when set, counts sessions done, up to Tuner.Sessions at
	// the end.
	Progress *atomic.Int64
}

// Defaults of Options.
const (
	DefaultSeeds = 3
	DefaultScale = 0.25
	DefaultKeep  = 1.0 / 3
)

// A Tuner is one tune, checked and designed: New builds it, Sessions
// says what it may cost, Run runs it.
type Tuner struct {
	cfg      fleetspec.Config
	opt      Options
	seeds    []int64
	base     policy.Settings
	grid     []*Candidate // the design (this shard's)
	gridN    int          // the whole design's size
	invalid  int
	profiles []string // this shard's
	id       string
	seen     map[string]bool
}

// New checks the fleet cfg and the options and lays out the design: the
// product of the axes' values, less the invalid combinations (a cap below
// the base delay) and the duplicates (a hint bound with hints ignored).
func New(cfg fleetspec.Config, opt Options) (*Tuner, error) {
	if opt.Axes == nil {
		opt.Axes = DefaultAxes()
	}
	if opt.Objectives == nil {
		opt.Objectives = DefaultObjectives()
	}
	if opt.Seeds == 0 {
		opt.Seeds = DefaultSeeds
	}
	if opt.Scale == 0 {
		opt.Scale = DefaultScale
	}
	if opt.Keep == 0 {
		opt.Keep = DefaultKeep
	}
	if opt.Profiles == nil {
		for _, p := range policy.Profiles() {
			opt.Profiles = append(opt.Profiles, p.Name)
		}
	}
	opt.Shard = wholeShard(opt.Shard)
	switch {
	case opt.Seeds < 1 || opt.Seeds > MaxSeeds:
		return nil, fmt.Errorf("seeds: %d (allowed: 1 to %d)", opt.Seeds, MaxSeeds)
	case !(opt.Scale > 0 && opt.Scale <= 1):
		return nil, fmt.Errorf("scale: %v (allowed: above 0, at most 1)", opt.Scale)
	case !(opt.Keep > 0 && opt.Keep <= 1):
		return nil, fmt.Errorf("keep: %v (allowed: above 0, at most 1)", opt.Keep)
	case opt.Shard.Count < 1 || opt.Shard.Count > fleet.MaxShards || opt.Shard.Index < 0 || opt.Shard.Index >= opt.Shard.Count:
		return nil, fmt.Errorf("shard %s (allowed: I/N, N from 1 to %d, I from 0 to N-1)", opt.Shard, fleet.MaxShards)
	}
	if err := checkAxes(opt.Axes); err != nil {
		return nil, err
	}
	if err := checkObjectives(opt.Objectives); err != nil {
		return nil, err
	}
	for _, name := range opt.Profiles {
		if _, err := policy.ProfileByName(name); err != nil || name == "" {
			return nil, fmt.Errorf("profiles: %v", err)
		}
	}
	t := &Tuner{cfg: cfg, opt: opt, base: policy.DefaultSettings(), seen: map[string]bool{}}
	if opt.Base != nil {
		t.base = opt.Base.Clone()
	}
	if err := t.base.Validate(); err != nil {
		return nil, fmt.Errorf("base settings: %w", err)
	}
	first := max(cfg.Seed, 1)
	if first > fleetspec.MaxSeed-int64(opt.Seeds) {
		return nil, fmt.Errorf("seed %d: too large for %d seeds", first, opt.Seeds)
	}
	for i := range opt.Seeds {
		t.seeds = append(t.seeds, first+int64(i))
	}
	c := cfg
	c.Seed = first
	c.Settings = nil
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := t.design(); err != nil {
		return nil, err
	}
	for j, name := range opt.Profiles {
		if opt.Shard.Holds(j) {
			t.profiles = append(t.profiles, name)
		}
	}
	return t, t.identify()
}

// MaxSeeds bounds the seeds of a tune.
const MaxSeeds = 1000

func wholeShard(s fleet.Shard) fleet.Shard {
	if s == (fleet.Shard{}) {
		return fleet.Shard{Index: 0, Count: 1}
	}
	return s
}

// design lays out the grid and keeps this shard's candidates.
func (t *Tuner) design() error {
	n := 1
	for _, a := range t.opt.Axes {
		n *= len(a.Values)
		if n > MaxCandidates {
			return fmt.Errorf("axes: more than %d combinations (allowed: at most %d; give fewer values)", MaxCandidates, MaxCandidates)
		}
	}
	idx := make([]int, len(t.opt.Axes))
	for range n {
		vals := make([]string, len(idx))
		for i, a := range t.opt.Axes {
			vals[i] = a.Values[idx[i]]
		}
		if c := t.candidate(vals); c != nil {
			if t.opt.Shard.Holds(t.gridN) {
				t.grid = append(t.grid, c)
			}
			t.gridN++
		}
		for i := len(idx) - 1; i >= 0; i-- { // the last axis fastest
			if idx[i]++; idx[i] < len(t.opt.Axes[i].Values) {
				break
			}
			idx[i] = 0
		}
	}
	if t.gridN == 0 {
		return fmt.Errorf("axes: no valid combination (%d invalid: a backoff cap below the base delay?)", t.invalid)
	}
	return nil
}

// candidate is the candidate of the axes' values vals, nil when they are
// invalid together or the same settings as a candidate's before.
func (t *Tuner) candidate(vals []string) *Candidate {
	s := t.base.Clone()
	for i, a := range t.opt.Axes {
		if axisByName(a.Name).set(&s, vals[i]) != nil {
			return nil
		}
	}
	if s.Validate() != nil {
		t.invalid++
		return nil
	}
	key := s
	if key.RetryAfter.Use == "" || key.RetryAfter.Use == policy.HintIgnore {
		key.RetryAfter.MaxHint = 0 // unused with hints ignored: the same settings
	}
	data, _ := json.Marshal(key)
	if t.seen[string(data)] {
		return nil
	}
	t.seen[string(data)] = true
	return &Candidate{Values: vals, Settings: s}
}

// identify sets the tune's identity: the fleet's (its plan's, which holds
// its profiles' settings), the axes, objectives, base, seeds, scale, keep,
// refinement, profiles and shard count, as JSON, hashed.
func (t *Tuner) identify() error {
	c := t.cfg
	c.Seed = t.seeds[0]
	fid, err := fleet.PlanOf(c).ID()
	if err != nil {
		return err
	}
	data, err := json.Marshal(struct {
		Format     int
		Fleet      string
		Axes       []Axis
		Objectives []string
		Base       policy.Settings
		Seeds      []int64
		Scale      float64
		Keep       float64
		NoRefine   bool
		Profiles   []string
		Shards     int
	}{Format, fid, t.opt.Axes, t.opt.Objectives, t.base, t.seeds, t.opt.Scale, t.opt.Keep, t.opt.NoRefine, t.opt.Profiles, t.opt.Shard.Count})
	if err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	t.id = "sha256:" + hex.EncodeToString(sum[:])
	return nil
}

// Candidates is the number of candidates of this shard's design.
func (t *Tuner) Candidates() int { return len(t.grid) }

// refineCap is the most candidates the refinement adds: as many as the
// design has.
func (t *Tuner) refineCap() int {
	if t.opt.NoRefine {
		return 0
	}
	return len(t.grid)
}

// Sessions is the most sessions the tune runs (this shard's): the short
// runs of the design and of the refinement, the full runs of the
// candidates kept and of the profiles over every seed. A progress bar's
// total: Run adds what it did not run at the end.
func (t *Tuner) Sessions() int64 {
	short := int64(t.short(t.cfg).Sessions)
	full := int64(t.cfg.Sessions)
	n := len(t.grid) + t.refineCap()
	kept := int(math.Ceil(t.opt.Keep * float64(n)))
	return int64(n)*short + int64(kept+len(t.profiles))*int64(len(t.seeds))*full
}

// short is cfg as a short run: its sessions, arrival rate and capacity
// times the scale, so that the load against the capacity is the same.
func (t *Tuner) short(c fleetspec.Config) fleetspec.Config { return scaled(c, t.opt.Scale) }

// scaled is c with its sessions, arrival rate and capacity times f.
func scaled(c fleetspec.Config, f float64) fleetspec.Config {
	if f >= 1 {
		return c
	}
	scale := func(n int) int { return max(1, int(math.Round(float64(n)*f))) }
	c.Sessions = scale(c.Sessions)
	c.Rate *= f
	if c.Capacity.RPS > 0 {
		c.Capacity.RPS *= f
		c.Capacity.Burst = scale(c.Capacity.Burst)
	}
	if c.Capacity.MaxInFlight > 0 {
		c.Capacity.MaxInFlight = scale(c.Capacity.MaxInFlight)
	}
	return c
}

// Run runs the tune: the design's short runs (the first seed), the
// refinement's, the pruning to the Keep share (whole Pareto layers of the
// short runs' vectors, the first ones), the kept candidates' full runs
// over every seed, and the profiles'; the report's front and placements
// are those of this shard alone (Merge puts shards together). Run is
// deterministic: the same fleet, options and shard give the same report,
// whatever the workers. When ctx is done, Run returns its error.
func (t *Tuner) Run(ctx context.Context) (*Report, error) {
	if p := t.opt.Progress; p != nil {
		start := p.Load()
		defer func() { p.Add(t.Sessions() - (p.Load() - start)) }()
	}
	all := slices.Clone(t.grid)
	if err := t.runShort(ctx, all); err != nil {
		return nil, err
	}
	refined := 0
	if !t.opt.NoRefine {
		more := t.refine(all)
		if err := t.runShort(ctx, more); err != nil {
			return nil, err
		}
		refined = len(more)
		all = append(all, more...)
	}
	kept := t.keep(all)
	var jobs []job
	for _, c := range kept {
		c.Seeds = make([]Vec, len(t.seeds))
		for i, seed := range t.seeds {
			cfg := t.cfg
			cfg.Seed, cfg.Settings = seed, &c.Settings
			jobs = append(jobs, job{cfg: cfg, dst: &c.Seeds[i]})
		}
	}
	places := make([]Placement, len(t.profiles))
	errs := make([]string, len(t.profiles)*len(t.seeds))
	for k, name := range t.profiles {
		places[k] = Placement{Profile: name, Seeds: make([]Vec, len(t.seeds))}
		for i, seed := range t.seeds {
			cfg := t.cfg
			cfg.Seed, cfg.Settings, cfg.Profiles = seed, nil, fleetspec.Mix{{Profile: name, Percent: 100}}
			jobs = append(jobs, job{cfg: cfg, dst: &places[k].Seeds[i], errDst: &errs[k*len(t.seeds)+i]})
		}
	}
	if err := t.runJobs(ctx, jobs); err != nil {
		return nil, err
	}
	for k := range places {
		for _, e := range errs[k*len(t.seeds) : (k+1)*len(t.seeds)] {
			if e != "" {
				places[k].Error, places[k].Seeds = e, nil
				break
			}
		}
	}
	r := &Report{Format: Format, Tune: t.id, Fleet: t.cfg.Name, Shard: t.opt.Shard, Axes: t.opt.Axes, Objectives: t.opt.Objectives,
		Seeds: t.seeds, Scale: t.opt.Scale, Keep: t.opt.Keep, Profiles: places,
		Counts: Counts{Design: t.gridN, Invalid: t.invalid, Coarse: len(t.grid), Refined: refined, Confirmed: len(kept),
			ShortRuns: len(all), LongRuns: len(jobs)}}
	for _, c := range all {
		r.Candidates = append(r.Candidates, *c)
	}
	r.finish()
	return r, nil
}

// runShort runs each candidate's short run (the first seed).
func (t *Tuner) runShort(ctx context.Context, cs []*Candidate) error {
	jobs := make([]job, len(cs))
	for i, c := range cs {
		cfg := t.short(t.cfg)
		cfg.Seed, cfg.Settings = t.seeds[0], &c.Settings
		jobs[i] = job{cfg: cfg, dst: &c.Short}
	}
	return t.runJobs(ctx, jobs)
}

// refine is the candidates between each point of the short runs' front
// and its neighbours on each numeric axis (the midpoints, geometric for
// delays), new ones only, at most refineCap, in a fixed order.
func (t *Tuner) refine(cs []*Candidate) []*Candidate {
	vecs := make([][]float64, len(cs))
	for i, c := range cs {
		vecs[i] = c.Short
	}
	var out []*Candidate
	for _, fi := range Front(vecs) {
		f := cs[fi]
		for ai, a := range t.opt.Axes {
			d := axisByName(a.Name)
			if d.mid == nil || len(a.Values) < 2 {
				continue
			}
			sorted := slices.Clone(a.Values)
			slices.SortStableFunc(sorted, func(x, y string) int {
				switch {
				case d.less(x, y):
					return -1
				case d.less(y, x):
					return 1
				}
				return 0
			})
			// the neighbours of f's value among the axis's values
			for _, nb := range neighbours(sorted, f.Values[ai], d.less) {
				m, ok := d.mid(f.Values[ai], nb)
				if !ok || len(out) >= t.refineCap() {
					continue
				}
				vals := slices.Clone(f.Values)
				vals[ai] = m
				if c := t.candidate(vals); c != nil {
					c.Refined = true
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// neighbours are the values of sorted just below and just above v.
func neighbours(sorted []string, v string, less func(a, b string) bool) []string {
	var out []string
	var below, above string
	hasBelow, hasAbove := false, false
	for _, x := range sorted {
		if less(x, v) {
			below, hasBelow = x, true
		} else if less(v, x) && !hasAbove {
			above, hasAbove = x, true
		}
	}
	if hasBelow {
		out = append(out, below)
	}
	if hasAbove {
		out = append(out, above)
	}
	return out
}

// keep is the candidates confirmed, ceil(Keep × n) of them: the short
// runs' Pareto layers in order, whole while they fit, and of the layer
// that does not, its points of the least scaled sum (as the chosen point
// is picked, over that layer), in the design's order among equals; the
// others are marked pruned.
func (t *Tuner) keep(cs []*Candidate) []*Candidate {
	vecs := make([][]float64, len(cs))
	for i, c := range cs {
		vecs[i] = c.Short
	}
	layer := layers(vecs)
	want := int(math.Ceil(t.opt.Keep * float64(len(cs))))
	var out []*Candidate
	for k := 0; len(out) < want; k++ {
		var in []int
		for i := range cs {
			if layer[i] == k {
				in = append(in, i)
			}
		}
		if len(out)+len(in) > want {
			sums := scaledSums(vecs, in)
			order := slices.Clone(in)
			slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(sums[a], sums[b]) })
			in = order[:want-len(out)]
			slices.Sort(in)
		}
		for _, i := range in {
			out = append(out, cs[i])
		}
	}
	for _, c := range cs {
		c.Pruned = !slices.Contains(out, c)
	}
	return out
}

// job is one fleet run whose objectives go to dst (an error, with
// errDst, to errDst instead of failing the tune: a profile that cannot
// run this fleet).
type job struct {
	cfg    fleetspec.Config
	dst    *Vec
	errDst *string
}

// runJobs runs the jobs on up to Workers goroutines; the first failed
// job's error (in order) is returned, after every goroutine has ended.
func (t *Tuner) runJobs(ctx context.Context, jobs []job) error {
	workers := t.opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	errs := make([]error, len(jobs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) || ctx.Err() != nil {
					return
				}
				errs[i] = t.runJob(ctx, &jobs[i])
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *Tuner) runJob(ctx context.Context, j *job) error {
	p, err := fleet.Run(ctx, fleet.PlanOf(j.cfg), fleet.Options{Workers: 1, Progress: t.opt.Progress})
	if err != nil {
		if j.errDst != nil && ctx.Err() == nil {
			*j.errDst = err.Error()
			return nil
		}
		return err
	}
	g := &p.Result.Groups[0]
	*j.dst = measure(t.opt.Objectives, &g.Profiles[len(g.Profiles)-1], &j.cfg)
	return nil
}
