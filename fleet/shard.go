package fleet

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PartialFormat is the version of the partial result's JSON form; a
// partial of another version is refused by ReadPartial. Version 2 added
// the sweep's groups and plan (shard.sweepFleets, shard.plan), which
// merging checks every shard's seeds against.
const PartialFormat = 2

// MaxShards is the largest number of shards a sweep is split into.
const MaxShards = 1_000_000

// Shard is one part of a sweep split Count ways: the runs whose index k in
// the sweep (its fixed order: files, then profile mixes, then seeds) has
// k mod Count == Index. Shards are numbered from 0.
type Shard struct {
	Index int // 0 to Count-1
	Count int // 1 to MaxShards
}

// String writes the shard as ParseShard reads it: "I/N".
func (s Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// Holds reports whether the sweep's run k belongs to the shard.
func (s Shard) Holds(k int) bool { return s.Count > 0 && k%s.Count == s.Index }

// held is the number of runs the shard holds of a sweep of runs runs.
func (s Shard) held(runs int) int { return (runs - s.Index + s.Count - 1) / s.Count }

// validate checks the shard's numbers.
func (s Shard) validate() error {
	if s.Count < 1 || s.Count > MaxShards {
		return fmt.Errorf("%d shards is out of range (allowed: 1 to %d)", s.Count, MaxShards)
	}
	if s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard index %d is out of range (allowed: 0 to %d; shards are numbered from 0)", s.Index, s.Count-1)
	}
	return nil
}

// ParseShard reads "I/N": shard I of N, I from 0 to N-1.
func ParseShard(s string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("%q: expected I/N, shard I of N numbered from 0 (e.g. 0/4 to 3/4)", s)
	}
	sh := Shard{Index: idx, Count: cnt}
	if err := sh.validate(); err != nil {
		return Shard{}, fmt.Errorf("%q: %v", s, err)
	}
	return sh, nil
}

// Partial is the result of one shard of a sweep: its runs merged, and what
// MergePartials needs to put shards back together.
type Partial struct {
	// Sweep is the sweep's identity (Plan.ID).
	Sweep string
	// Runs is the number of runs in the whole sweep, Groups the number of
	// groups in its result.
	Runs, Groups int
	// Shard says which of the sweep's runs the partial holds.
	Shard Shard
	// Result is the shard's runs merged in the sweep's order.
	Result Result
	// GroupIndex gives, for each group of Result, its index among the
	// whole sweep's groups (the order of the sweep's result).
	GroupIndex []int
	// SweepGroups are the whole sweep's groups, in the order of its result.
	SweepGroups []SweepGroup
	// Plan is the whole sweep's runs in order, as stretches of one group
	// over consecutive seeds: what MergePartials checks each shard's seeds
	// against.
	Plan []SeedRange
}

// groupKey is the key of the group cfg's run falls in.
func groupKey(c *fleetspec.Config) string {
	c2 := c.Normalized()
	return c2.Name + "\x00" + c2.Profiles.String() + "\x00" + c2.SDK
}

// The partial result's JSON form: the --json form's groups and figures,
// each group with its index in the sweep, each profile with the exact
// durations (ns) the milliseconds of the --json form round.

type partialJSON struct {
	Shard  shardJSON          `json:"shard"`
	Groups []partialGroupJSON `json:"fleets"`
}

type shardJSON struct {
	Format      int              `json:"format"`
	Index       int              `json:"index"`
	Count       int              `json:"count"`
	Sweep       string           `json:"sweep"`
	Runs        int              `json:"runs"`
	Groups      int              `json:"groups"`
	SweepFleets []sweepGroupJSON `json:"sweepFleets"`
	Plan        []seedRangeJSON  `json:"plan"`
}

type sweepGroupJSON struct {
	Fleet   string `json:"fleet"`
	Profile string `json:"profile"`
	SDK     string `json:"sdk"`
}

type seedRangeJSON struct {
	Fleet    int   `json:"fleet"`
	Run      int   `json:"run"`
	SeedFrom int64 `json:"seedFrom"`
	SeedTo   int64 `json:"seedTo"`
}

type partialGroupJSON struct {
	Fleet            string             `json:"fleet"`
	Profile          string             `json:"profile"`
	SDK              string             `json:"sdk"`
	Seeds            []int64            `json:"seeds"`
	CapacityPer100ms float64            `json:"capacityPer100ms"`
	Profiles         []partialStatsJSON `json:"profiles"`
	Index            int                `json:"index"`
	Outages          []string           `json:"outages"`
}

type partialStatsJSON struct {
	statsJSON
	LongestWaitNs      int64      `json:"longestWaitNs"`
	TimeToSuccessMaxNs int64      `json:"timeToSuccessMaxNs"`
	WireCallsPerBin    seriesJSON `json:"wireCallsPerBin"`
	// The spread after the partial's own fields (shadowing statsJSON's):
	// fields are only added at the end.
	spreadJSON
}

// seriesJSON is a Series: its width and its counts up to the last
// non-empty bin.
type seriesJSON struct {
	BinMs  int64   `json:"binMs"`
	Counts []int64 `json:"counts"`
}

func (s *Series) toJSON() seriesJSON {
	n := len(s.Counts)
	for n > 0 && s.Counts[n-1] == 0 {
		n--
	}
	return seriesJSON{BinMs: int64(s.BinWidth() / time.Millisecond), Counts: slices.Clone(s.Counts[:n])}
}

// series reads a seriesJSON: the width SeriesBase × 2^k, at most
// SeriesBins counts, none negative.
func (sj *seriesJSON) series(at string) (Series, error) {
	var s Series
	w := SeriesBase
	for w < fleetspec.MaxDuration && int64(w/time.Millisecond) < sj.BinMs {
		w *= 2
	}
	if int64(w/time.Millisecond) != sj.BinMs {
		return Series{}, partialErr(at+".binMs", "%d is not a bin width (allowed: %d ms times a power of 2)", sj.BinMs, SeriesBase.Milliseconds())
	}
	if len(sj.Counts) > SeriesBins {
		return Series{}, partialErr(at+".counts", "%d bins (allowed: at most %d)", len(sj.Counts), SeriesBins)
	}
	s.Width = w
	var total int64
	for i, c := range sj.Counts {
		if c < 0 {
			return Series{}, partialErr(at+".counts["+strconv.Itoa(i)+"]", "%d is negative (allowed: from 0)", c)
		}
		if c > math.MaxInt64-total {
			return Series{}, partialErr(at+".counts", "add up to more than %d", int64(math.MaxInt64))
		}
		total += c
		s.Counts[i] = c
	}
	return s, nil
}

// JSON writes p as retrysim fleet --shard I/N --json prints it (indented,
// a final newline): {"shard": {format, index, count, sweep, runs, groups},
// "fleets": [...]}, each fleet as in Result.JSON with its "index" in the
// sweep's result, each profile with "longestWaitNs" and
// "timeToSuccessMaxNs" after the --json form's fields.
func (p *Partial) JSON() ([]byte, error) {
	if p.Shard.Count == 0 {
		return nil, errors.New("partial result: not a shard's (run with Options.Shard, 0/1 for the whole sweep)")
	}
	if len(p.GroupIndex) != len(p.Result.Groups) {
		return nil, fmt.Errorf("partial result: %d group indexes for %d groups", len(p.GroupIndex), len(p.Result.Groups))
	}
	out := partialJSON{Shard: shardJSON{Format: PartialFormat, Index: p.Shard.Index, Count: p.Shard.Count, Sweep: p.Sweep,
		Runs: p.Runs, Groups: p.Groups, SweepFleets: []sweepGroupJSON{}, Plan: []seedRangeJSON{}}, Groups: []partialGroupJSON{}}
	for _, g := range p.SweepGroups {
		out.Shard.SweepFleets = append(out.Shard.SweepFleets, sweepGroupJSON{Fleet: g.Fleet, Profile: g.Mix, SDK: g.SDK})
	}
	for _, r := range p.Plan {
		out.Shard.Plan = append(out.Shard.Plan, seedRangeJSON{Fleet: r.Group, Run: r.Run, SeedFrom: r.From, SeedTo: r.To})
	}
	for i := range p.Result.Groups {
		g := &p.Result.Groups[i]
		gj := partialGroupJSON{Fleet: g.Fleet, Profile: g.Mix, SDK: g.SDK, Seeds: g.Seeds, CapacityPer100ms: g.CapacityPer100ms,
			Index: p.GroupIndex[i], Outages: []string{}}
		for j := range g.Profiles {
			s := &g.Profiles[j]
			gj.Profiles = append(gj.Profiles, partialStatsJSON{statsJSON: s.toJSON(g.CapacityPer100ms),
				LongestWaitNs: int64(s.LongestWait), TimeToSuccessMaxNs: int64(s.TimeToSuccess.Max),
				WireCallsPerBin: s.WireSeries.toJSON(), spreadJSON: s.Spread.toJSON()})
		}
		for _, o := range g.Outages {
			gj.Outages = append(gj.Outages, o.String())
		}
		out.Groups = append(out.Groups, gj)
	}
	return encodeIndented(out)
}

// PartialError is an invalid partial result: where in it, and what is
// wrong and allowed.
type PartialError struct {
	Field string // the JSON path, e.g. "fleets[0].profiles[1].calls"; "" for the whole
	Msg   string
}

// Error gives "FIELD: MSG".
func (e *PartialError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func partialErr(field, format string, a ...any) error {
	return &PartialError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// ReadPartial reads a partial result as Partial.JSON writes it. Unknown
// fields, another format version, negative counts, buckets that are not
// the histogram's and inconsistent numbers are errors naming the field.
func ReadPartial(data []byte) (*Partial, error) {
	var pj partialJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&pj); err != nil {
		msg := err.Error()
		// The decoder quotes an unknown key whole: quote at most maxQuoted bytes of it.
		if name, ok := strings.CutPrefix(msg, `json: unknown field "`); ok {
			if name, ok = strings.CutSuffix(name, `"`); ok {
				msg = "json: unknown field " + quoteShort(name)
			}
		}
		return nil, partialErr("", "not a partial result of retrysim fleet --shard I/N --json: %s", msg)
	}
	if dec.More() {
		return nil, partialErr("", "not a partial result: more than one JSON value")
	}
	sj := pj.Shard
	if sj.Format != PartialFormat {
		if sj.Format == 0 && sj.Sweep == "" {
			return nil, partialErr("shard", "missing: not a partial result (retrysim fleet --shard I/N --json writes one)")
		}
		return nil, partialErr("shard.format", "%d is not supported (allowed: %d)", sj.Format, PartialFormat)
	}
	p := &Partial{Sweep: sj.Sweep, Runs: sj.Runs, Groups: sj.Groups, Shard: Shard{Index: sj.Index, Count: sj.Count}}
	if err := p.Shard.validate(); err != nil {
		return nil, partialErr("shard", "%v", err)
	}
	if !strings.HasPrefix(p.Sweep, "sha256:") {
		return nil, partialErr("shard.sweep", "%s is not a sweep's identity (allowed: sha256:HEX)", quoteShort(p.Sweep))
	}
	if p.Runs < 0 || p.Groups < 0 || p.Groups > p.Runs {
		return nil, partialErr("shard", "runs %d, groups %d (allowed: 0 <= groups <= runs)", p.Runs, p.Groups)
	}
	if err := p.readPlan(&sj); err != nil {
		return nil, err
	}
	for i, gj := range pj.Groups {
		at := "fleets[" + strconv.Itoa(i) + "]"
		if gj.Index < 0 || gj.Index >= p.Groups {
			return nil, partialErr(at+".index", "%d is out of range (allowed: 0 to %d)", gj.Index, p.Groups-1)
		}
		if slices.Contains(p.GroupIndex, gj.Index) {
			return nil, partialErr(at+".index", "%d listed twice", gj.Index)
		}
		want := p.SweepGroups[gj.Index]
		for _, f := range []struct{ name, got, want string }{{"fleet", gj.Fleet, want.Fleet}, {"profile", gj.Profile, want.Mix}, {"sdk", gj.SDK, want.SDK}} {
			if f.got != f.want {
				return nil, partialErr(at+"."+f.name, "%s differs from the sweep's fleet %d in shard.sweepFleets (%s %s)", quoteShort(f.got), gj.Index, f.name, quoteShort(f.want))
			}
		}
		if !(gj.CapacityPer100ms >= 0) {
			return nil, partialErr(at+".capacityPer100ms", "%v is negative (allowed: from 0)", gj.CapacityPer100ms)
		}
		if len(gj.Seeds) == 0 || len(gj.Profiles) == 0 {
			return nil, partialErr(at, "no seeds or no profiles (a group holds at least one run)")
		}
		g := Group{Fleet: gj.Fleet, Mix: gj.Profile, SDK: gj.SDK, Seeds: gj.Seeds, CapacityPer100ms: gj.CapacityPer100ms}
		for k, text := range gj.Outages {
			o, err := fleetspec.ParseOutage(text)
			if err != nil {
				if len(text) > maxQuoted { // the parser's error quotes it whole
					return nil, partialErr(at+".outages["+strconv.Itoa(k)+"]", "%s is not an outage window (allowed: START,DURATION,KIND)", quoteShort(text))
				}
				return nil, partialErr(at+".outages["+strconv.Itoa(k)+"]", "%v", err)
			}
			g.Outages = append(g.Outages, o)
		}
		for j := range gj.Profiles {
			s, err := gj.Profiles[j].stats(at+".profiles["+strconv.Itoa(j)+"]", len(gj.Seeds))
			if err != nil {
				return nil, err
			}
			g.Profiles = append(g.Profiles, s)
		}
		p.Result.Groups = append(p.Result.Groups, g)
		p.GroupIndex = append(p.GroupIndex, gj.Index)
	}
	return p, nil
}

// readPlan reads the sweep's groups and plan of a partial's header: every
// group named once, stretches that follow each other from run 0 to the
// sweep's last, each group with runs.
func (p *Partial) readPlan(sj *shardJSON) error {
	if len(sj.SweepFleets) != p.Groups {
		return partialErr("shard.sweepFleets", "%d fleets for groups %d (allowed: one per group)", len(sj.SweepFleets), p.Groups)
	}
	seen := make(map[string]bool, p.Groups)
	for i, g := range sj.SweepFleets {
		sg := SweepGroup{Fleet: g.Fleet, Mix: g.Profile, SDK: g.SDK}
		if seen[sg.key()] {
			return partialErr("shard.sweepFleets["+strconv.Itoa(i)+"]", "fleet %s, profile %s, sdk %s listed twice", quoteShort(g.Fleet), quoteShort(g.Profile), quoteShort(g.SDK))
		}
		seen[sg.key()] = true
		p.SweepGroups = append(p.SweepGroups, sg)
	}
	run := 0
	has := make([]bool, p.Groups)
	for i, r := range sj.Plan {
		at := "shard.plan[" + strconv.Itoa(i) + "]"
		switch {
		case r.Fleet < 0 || r.Fleet >= p.Groups:
			return partialErr(at+".fleet", "%d is out of range (allowed: 0 to %d, an index in shard.sweepFleets)", r.Fleet, p.Groups-1)
		case r.Run != run:
			return partialErr(at+".run", "%d, not %d (the stretches follow each other from run 0)", r.Run, run)
		case r.SeedFrom < 1 || r.SeedTo < r.SeedFrom || r.SeedTo > fleetspec.MaxSeed:
			return partialErr(at, "seeds %d to %d (allowed: from 1 to %d, seedFrom <= seedTo)", r.SeedFrom, r.SeedTo, int64(fleetspec.MaxSeed))
		case r.SeedTo-r.SeedFrom >= int64(p.Runs-run):
			return partialErr(at, "seeds %d to %d run past the sweep's %d runs", r.SeedFrom, r.SeedTo, p.Runs)
		}
		run += int(r.SeedTo - r.SeedFrom + 1)
		has[r.Fleet] = true
		p.Plan = append(p.Plan, SeedRange{Group: r.Fleet, Run: r.Run, From: r.SeedFrom, To: r.SeedTo})
	}
	if run != p.Runs {
		return partialErr("shard.plan", "covers %d runs, not the sweep's %d", run, p.Runs)
	}
	if i := slices.Index(has, false); i >= 0 {
		return partialErr("shard.plan", "fleet %d has no runs (every group has at least one)", i)
	}
	return nil
}

// checkSeeds checks that each group of p holds exactly the seeds of the
// runs of its shard in the sweep's plan: none outside the sweep, none of
// another shard, none twice, none missing. The partial holds as many runs
// as its shard does (checked first), which bounds the work.
func (p *Partial) checkSeeds() error {
	want := make([][]int64, p.Groups)
	for _, r := range p.Plan {
		if r.Group < 0 || r.Group >= p.Groups {
			return partialErr("shard.plan", "fleet %d is out of range", r.Group)
		}
		n := int(r.To - r.From + 1)
		for k := p.Shard.firstHeld(r.Run); k < r.Run+n; k += p.Shard.Count {
			want[r.Group] = append(want[r.Group], r.From+int64(k-r.Run))
		}
	}
	for j := range p.Result.Groups {
		gi := p.GroupIndex[j]
		if gi < 0 || gi >= p.Groups {
			return partialErr("fleets["+strconv.Itoa(j)+"].index", "%d is out of range", gi)
		}
		w := want[gi]
		slices.Sort(w)
		if got := p.Result.Groups[j].Seeds; !slices.Equal(got, w) {
			return partialErr("fleets["+strconv.Itoa(j)+"].seeds", "%s are not the seeds shard %s holds of fleet %d (%s)", seedsShort(got), p.Shard, gi, seedsShort(w))
		}
		want[gi] = nil
	}
	for gi, w := range want {
		if len(w) > 0 {
			return partialErr("fleets", "fleet %d missing: shard %s holds its seeds %s", gi, p.Shard, seedsShort(w))
		}
	}
	return nil
}

// seedsShort writes seeds as "[1 2 3]", at most 8 of them then "… (N seeds)".
func seedsShort(seeds []int64) string {
	if len(seeds) <= 8 {
		return fmt.Sprint(seeds)
	}
	return strings.TrimSuffix(fmt.Sprint(seeds[:8]), "]") + " … (" + strconv.Itoa(len(seeds)) + " seeds)]"
}

// stats is the Stats of a partial's profile entry, of a group of runs
// runs.
func (sj *partialStatsJSON) stats(at string, runs int) (Stats, error) {
	s := Stats{Profile: sj.Profile, Sessions: sj.Sessions, Prompts: sj.Prompts, Succeeded: sj.Succeeded, Failed: sj.Failed,
		Waiting: sj.Waiting, Calls: sj.Calls, WireCalls: sj.WireCalls, Rejected: sj.Rejected, InRetryAfter: sj.InRetryAfter,
		ChainsSucceeded: sj.ChainsSucceeded, ChainsExhausted: sj.ChainsExhausted, ChainsFailFast: sj.ChainsFailFast,
		ChainsOther: sj.ChainsOther, LongestWait: time.Duration(sj.LongestWaitNs), PeakDuring: sj.PeakDuring, PeakAfter: sj.PeakAfter}
	for _, f := range []struct {
		name string
		v    int64
	}{{"sessions", s.Sessions}, {"prompts", s.Prompts}, {"succeeded", s.Succeeded}, {"failed", s.Failed}, {"waiting", s.Waiting},
		{"calls", s.Calls}, {"wireCalls", s.WireCalls}, {"rejected", s.Rejected}, {"inRetryAfter", s.InRetryAfter},
		{"chainsSucceeded", s.ChainsSucceeded}, {"chainsExhausted", s.ChainsExhausted}, {"chainsFailFast", s.ChainsFailFast},
		{"chainsOther", s.ChainsOther}, {"peakDuring", s.PeakDuring}, {"peakAfter", s.PeakAfter},
		{"longestWaitNs", sj.LongestWaitNs}, {"timeToSuccessMaxNs", sj.TimeToSuccessMaxNs}} {
		if f.v < 0 {
			return Stats{}, partialErr(at+"."+f.name, "%d is negative (allowed: from 0)", f.v)
		}
	}
	if s.Profile == "" {
		return Stats{}, partialErr(at+".profile", "empty (allowed: a profile's name or %q)", AllProfiles)
	}
	h := &s.TimeToSuccess
	h.Max = time.Duration(sj.TimeToSuccessMaxNs)
	last := -1
	for k, b := range sj.TimeToSuccessHist {
		i := -1
		if b[0] >= 0 && b[0] <= int64(math.MaxInt64/time.Millisecond) {
			i = bucketOf(time.Duration(b[0]) * time.Millisecond)
		}
		if i < 0 || bucketUpper(i) != b[0] || i <= last || b[1] <= 0 {
			return Stats{}, partialErr(at+".timeToSuccessBuckets["+strconv.Itoa(k)+"]", "%v is not a bucket (allowed: [upperMs, count] of the histogram's buckets, in increasing order, counts above 0)", b)
		}
		last = i
		if uint64(b[1]) > math.MaxInt64-h.N {
			return Stats{}, partialErr(at+".timeToSuccessBuckets", "the counts add up to more than %d", int64(math.MaxInt64))
		}
		h.Counts[i] = uint64(b[1])
		h.N += uint64(b[1])
	}
	if h.N != uint64(s.Succeeded) {
		return Stats{}, partialErr(at+".timeToSuccessBuckets", "count %d differs from succeeded %d", h.N, s.Succeeded)
	}
	var err error
	if s.WireSeries, err = sj.WireCallsPerBin.series(at + ".wireCallsPerBin"); err != nil {
		return Stats{}, err
	}
	if n := s.WireSeries.Total(); n != s.WireCalls {
		return Stats{}, partialErr(at+".wireCallsPerBin.counts", "add up to %d, not wireCalls %d", n, s.WireCalls)
	}
	if s.Spread, err = sj.spread(at, runs, &s); err != nil {
		return Stats{}, err
	}
	return s, nil
}

// spread is the Spread of a partial's profile entry s over runs runs:
// each lowest at most its highest, a share from 0 to 1, calls per prompt
// from 0, and the runs' figures together (s's) between them (a mean of
// the runs' own); an entry without a spread (of an older build) has 0 to 0
// there, and is refused.
func (sj *partialStatsJSON) spread(at string, runs int, s *Stats) (Spread, error) {
	var failed float64
	if s.Prompts > 0 {
		failed = float64(s.Failed) / float64(s.Prompts)
	}
	for _, f := range []struct {
		name          string
		lo, hi, whole float64
		most          float64
		allowed       string
	}{{"failedShare", sj.FailedShareMin, sj.FailedShareMax, failed, 1, "from 0 to 1"},
		{"wireCallsPerPrompt", sj.WirePerPromptMin, sj.WirePerPromptMax, s.Summarize(0).WireCallsPerPrompt, math.MaxFloat64, "from 0"}} {
		if !(f.lo >= 0 && f.lo <= f.hi && f.hi <= f.most) {
			return Spread{}, partialErr(at+"."+f.name+"Min", "%v to %s %v is not a spread (allowed: %s, the lowest at most the highest)", f.lo, f.name+"Max", f.hi, f.allowed)
		}
		if slack := 1e-9 * max(1, f.whole); f.whole < f.lo-slack || f.whole > f.hi+slack {
			return Spread{}, partialErr(at+"."+f.name+"Min", "%v to %s %v does not hold the runs' %v together (a partial of another build? run its shard again)", f.lo, f.name+"Max", f.hi, f.whole)
		}
	}
	return Spread{Runs: int64(runs), FailedShareMin: sj.FailedShareMin, FailedShareMax: sj.FailedShareMax,
		WirePerPromptMin: sj.WirePerPromptMin, WirePerPromptMax: sj.WirePerPromptMax}, nil
}

// MergePartials merges the partial results of every shard of one sweep
// into the sweep's result, exactly as Run of the whole plan returns it (groups
// in the sweep's order). names label the partials in errors (file names;
// "#i" when missing). Partials of different sweeps or splits, a shard
// given twice or a shard missing are errors naming them.
func MergePartials(parts []*Partial, names []string) (*Result, error) {
	name := func(i int) string {
		if i < len(names) {
			return names[i]
		}
		return "#" + strconv.Itoa(i)
	}
	if len(parts) == 0 {
		return nil, errors.New("no partial results to merge")
	}
	// The reference is the header most partials agree on (the first of
	// them on a tie): a partial that differs is the one named.
	headers := make([]string, len(parts))
	votes := map[string]int{}
	for i, p := range parts {
		h, err := json.Marshal(struct {
			Sweep        string
			Runs, Groups int
			Count        int
			SweepGroups  []SweepGroup
			Plan         []SeedRange
		}{p.Sweep, p.Runs, p.Groups, p.Shard.Count, p.SweepGroups, p.Plan})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name(i), err)
		}
		sum := sha256.Sum256(h)
		headers[i] = string(sum[:])
		votes[headers[i]]++
	}
	ref := 0
	for i := range parts {
		if votes[headers[i]] > votes[headers[ref]] {
			ref = i
		}
	}
	first := parts[ref]
	owner := map[int]int{} // shard index -> part
	for i, p := range parts {
		switch {
		case p.Shard.Count == 0:
			return nil, fmt.Errorf("%s: not a shard's partial result (run with Options.Shard, 0/1 for the whole sweep)", name(i))
		case p.Sweep != first.Sweep || p.Runs != first.Runs || p.Groups != first.Groups:
			return nil, fmt.Errorf("%s: a shard of another sweep than %s (sweep %s of %d runs, not %s of %d runs)",
				name(i), name(ref), quoteShort(p.Sweep), p.Runs, quoteShort(first.Sweep), first.Runs)
		case p.Shard.Count != first.Shard.Count:
			return nil, fmt.Errorf("%s: shard %s of a split into %d, %s is of a split into %d (merge the shards of one split)",
				name(i), p.Shard, p.Shard.Count, name(ref), first.Shard.Count)
		case headers[i] != headers[ref]:
			return nil, fmt.Errorf("%s: the sweep's fleets or plan (shard.sweepFleets, shard.plan) differ from %s's, of the same sweep: a changed file",
				name(i), name(ref))
		case len(p.SweepGroups) != p.Groups:
			return nil, fmt.Errorf("%s: %d sweep groups for groups %d", name(i), len(p.SweepGroups), p.Groups)
		case len(p.GroupIndex) != len(p.Result.Groups):
			return nil, fmt.Errorf("%s: %d group indexes for %d groups", name(i), len(p.GroupIndex), len(p.Result.Groups))
		}
		var runs int
		for _, g := range p.Result.Groups {
			runs += len(g.Seeds)
		}
		if held := p.Shard.held(p.Runs); runs != held {
			return nil, fmt.Errorf("%s: holds %d runs; shard %s of a sweep of %d runs holds %d", name(i), runs, p.Shard, p.Runs, held)
		}
		if err := p.checkSeeds(); err != nil {
			return nil, fmt.Errorf("%s: %w", name(i), err)
		}
		if j, dup := owner[p.Shard.Index]; dup {
			return nil, fmt.Errorf("shard %s given twice: %s and %s", p.Shard, name(j), name(i))
		}
		owner[p.Shard.Index] = i
	}
	var missing []string
	for k := range first.Shard.Count {
		if _, ok := owner[k]; !ok {
			missing = append(missing, Shard{Index: k, Count: first.Shard.Count}.String())
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("shard %s missing (a split into %d needs every shard from 0/%d to %d/%d)",
			strings.Join(missing, ", "), first.Shard.Count, first.Shard.Count, first.Shard.Count-1, first.Shard.Count)
	}
	return mergeGroups(parts, first, name)
}

// mergeGroups merges the groups of parts, checked shards of the sweep
// first's, in the order of their index in the sweep (a group's shards in
// shard order).
func mergeGroups(parts []*Partial, first *Partial, name func(int) string) (*Result, error) {
	type part struct {
		index, shard int
		g            *Group
		name         string
	}
	var all []part
	for i, p := range parts {
		for j := range p.Result.Groups {
			all = append(all, part{index: p.GroupIndex[j], shard: p.Shard.Index, g: &p.Result.Groups[j], name: name(i)})
		}
	}
	slices.SortFunc(all, func(a, b part) int {
		if a.index != b.index {
			return a.index - b.index
		}
		return a.shard - b.shard
	})
	out := &Result{}
	for _, x := range all {
		if want := first.SweepGroups[x.index]; x.g.key() != want.key() {
			return nil, fmt.Errorf("%s: group %d is fleet %s, profile %s; the sweep's is fleet %s, profile %s",
				x.name, x.index, quoteShort(x.g.Fleet), quoteShort(x.g.Mix), quoteShort(want.Fleet), quoteShort(want.Mix))
		}
		if err := out.Merge(&Result{Groups: []Group{*x.g}}); err != nil {
			return nil, fmt.Errorf("%s: %w", x.name, err)
		}
	}
	if len(out.Groups) != first.Groups {
		return nil, fmt.Errorf("the shards hold %d of the sweep's %d groups", len(out.Groups), first.Groups)
	}
	return out, nil
}
