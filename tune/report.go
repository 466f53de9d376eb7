package tune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/policy"
)

// Format is the version of the report's JSON.
const Format = 1

// MaxReportSize bounds a report file ReadReport reads (a report holds a
// few vectors per candidate: well under this for MaxCandidates).
const MaxReportSize = 64 << 20

// Vec is a vector of objective values, in the report's objectives'
// order; JSON writes +Inf (no prompt succeeded: no time to success) as
// null.
type Vec []float64

// MarshalJSON writes the values, +Inf as null.
func (v Vec) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		if math.IsInf(x, 1) {
			b.WriteString("null")
			continue
		}
		d, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		b.Write(d)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// UnmarshalJSON reads the values, null as +Inf.
func (v *Vec) UnmarshalJSON(b []byte) error {
	var raw []*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*v = nil
		return nil
	}
	out := make(Vec, len(raw))
	for i, x := range raw {
		out[i] = math.Inf(1)
		if x != nil {
			out[i] = *x
		}
	}
	*v = out
	return nil
}

// Candidate is one point of the search: its axes' values, its settings,
// its short run's objectives and, when confirmed, every seed's.
type Candidate struct {
	// ID numbers the candidates of a report from 1, in its order:
	// confirmed by worst-case objectives, then pruned by short-run ones.
	ID int `json:"id"`
	// Values are its axes' values, in the report's axes' order.
	Values []string `json:"values"`
	// Settings are the retry settings it runs.
	Settings policy.Settings `json:"settings"`
	// Refined: added by the refinement around the short runs' front.
	Refined bool `json:"refined"`
	// Pruned: not confirmed (its short run's vector was not in the kept
	// Pareto layers); Seeds, Worst and Best are empty.
	Pruned bool `json:"pruned"`
	// Short are the objectives of its short run.
	Short Vec `json:"short"`
	// Seeds are the objectives of each seed's full run.
	Seeds []Vec `json:"seeds"`
	// Worst and Best are, per objective, the largest and smallest over
	// the seeds: the spread; a candidate is ranked by Worst.
	Worst Vec `json:"worst"`
	Best  Vec `json:"best"`
	// Front: on the robust Pareto front (SPEC.md §15.11).
	Front bool `json:"front"`
	// DominatedBy are the profiles whose worst case dominates its own
	// (front points only).
	DominatedBy []string `json:"dominatedBy"`

	pol *policy.Policy // Settings compiled when the tune made it or read it (run); nil for one built in Go
}

// Placement is a named profile against the front.
type Placement struct {
	Profile string `json:"profile"`
	// Seeds, Worst and Best as a candidate's.
	Seeds []Vec `json:"seeds"`
	Worst Vec   `json:"worst"`
	Best  Vec   `json:"best"`
	// OnFront: no confirmed candidate dominates it.
	OnFront bool `json:"onFront"`
	// DominatedBy are the IDs of the front's candidates that dominate it.
	DominatedBy []int `json:"dominatedBy"`
	// Error says why the profile could not run this fleet ("": it ran).
	Error string `json:"error,omitempty"`
}

// Counts are what a tune ran.
type Counts struct {
	// Design is the number of distinct valid points of the design (every
	// shard's), Invalid the combinations left out (a cap below the base
	// delay); Coarse the design's points this report ran, Refined the
	// refinement's, Confirmed those run in full over every seed.
	Design    int `json:"design"`
	Invalid   int `json:"invalid"`
	Coarse    int `json:"coarse"`
	Refined   int `json:"refined"`
	Confirmed int `json:"confirmed"`
	// ShortRuns and LongRuns are the fleet runs made.
	ShortRuns int `json:"shortRuns"`
	LongRuns  int `json:"longRuns"`
}

// Report is a tune's result, or one shard's (a partial result: Merge
// puts the shards of one tune together). Its JSON is what retrysim tune
// --json prints.
type Report struct {
	Format int         `json:"format"`
	Tune   string      `json:"tune"` // the tune's identity: its shards share it
	Fleet  string      `json:"fleet"`
	Shard  fleet.Shard `json:"-"`
	// ShardText is Shard as I/N, for the JSON.
	ShardText  string      `json:"shard"`
	Axes       []Axis      `json:"axes"`
	Objectives []string    `json:"objectives"`
	Seeds      []int64     `json:"seeds"`
	Scale      float64     `json:"scale"`
	Keep       float64     `json:"keep"`
	Counts     Counts      `json:"counts"`
	Candidates []Candidate `json:"candidates"`
	Profiles   []Placement `json:"profiles"`
	// Front are the IDs of the front's candidates; Chosen the one a
	// settings file gets (0: none).
	Front  []int `json:"front"`
	Chosen int   `json:"chosen"`
}

// MarshalJSON is the report's JSON.
func (a Axis) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Name   string   `json:"name"`
		Values []string `json:"values"`
	}{a.Name, a.Values})
}

// UnmarshalJSON reads an axis.
func (a *Axis) UnmarshalJSON(b []byte) error {
	var x struct {
		Name   string   `json:"name"`
		Values []string `json:"values"`
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&x); err != nil {
		return err
	}
	a.Name, a.Values = x.Name, x.Values
	return nil
}

// JSON is the report as retrysim tune --json prints it (indented, a final
// newline).
func (r *Report) JSON() ([]byte, error) {
	r.ShardText = r.Shard.String()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// key orders candidates of equal vectors.
func (c *Candidate) key() string { return strings.Join(c.Values, "|") }

// finish derives what a report's runs say: each confirmed candidate's
// worst and best, the order and IDs, the front, the placements and the
// chosen point.
func (r *Report) finish() {
	for i := range r.Candidates {
		c := &r.Candidates[i]
		c.Worst, c.Best, c.Front, c.DominatedBy = nil, nil, false, nil
		if !c.Pruned {
			c.Worst, c.Best = worstVec(c.Seeds), bestVec(c.Seeds)
		}
	}
	slices.SortStableFunc(r.Candidates, func(a, b Candidate) int {
		if a.Pruned != b.Pruned {
			if a.Pruned {
				return 1
			}
			return -1
		}
		va, vb := a.Worst, b.Worst
		if a.Pruned {
			va, vb = a.Short, b.Short
		}
		if c := slices.Compare(va, vb); c != 0 {
			return c
		}
		return strings.Compare(a.key(), b.key())
	})
	var confirmed [][]float64
	for i := range r.Candidates {
		r.Candidates[i].ID = i + 1
		if !r.Candidates[i].Pruned {
			confirmed = append(confirmed, r.Candidates[i].Worst)
		}
	}
	r.Front = nil
	for _, i := range Front(confirmed) { // the confirmed come first, so i is their index
		r.Candidates[i].Front = true
		r.Front = append(r.Front, r.Candidates[i].ID)
	}
	order := map[string]int{}
	for i, p := range policy.Profiles() {
		order[p.Name] = i
	}
	slices.SortStableFunc(r.Profiles, func(a, b Placement) int { return order[a.Profile] - order[b.Profile] })
	for k := range r.Profiles {
		p := &r.Profiles[k]
		p.Worst, p.Best, p.OnFront, p.DominatedBy = nil, nil, false, nil
		if p.Error != "" {
			continue
		}
		p.Worst, p.Best = worstVec(p.Seeds), bestVec(p.Seeds)
		p.OnFront = !dominatedIn(p.Worst, confirmed)
		for _, id := range r.Front {
			c := &r.Candidates[id-1]
			if Dominates(c.Worst, p.Worst) {
				p.DominatedBy = append(p.DominatedBy, id)
			}
			if Dominates(p.Worst, c.Worst) {
				c.DominatedBy = append(c.DominatedBy, p.Profile)
			}
		}
	}
	r.Chosen = r.choose()
}

func worstVec(seeds []Vec) Vec { return worst(vecs(seeds)) }
func bestVec(seeds []Vec) Vec  { return best(vecs(seeds)) }

func vecs(seeds []Vec) [][]float64 {
	out := make([][]float64, len(seeds))
	for i, s := range seeds {
		out[i] = s
	}
	return out
}

// choose is the front's point of the least worst-case first objective
// (the share of prompts that fail, by default: a prompt lost is the cost
// that matters first) and, among those, of the least sum of the other
// worst-case objectives, each scaled to [0,1] over them (0 the best value
// among them, 1 the worst; an objective alike in all counts 0, a time
// with no success 1); the first such point in the report's order; 0 for
// an empty front.
func (r *Report) choose() int {
	if len(r.Front) == 0 {
		return 0
	}
	least := math.Inf(1)
	for _, id := range r.Front {
		least = min(least, r.Candidates[id-1].Worst[0])
	}
	vs := make([][]float64, len(r.Candidates))
	var in []int
	for _, id := range r.Front {
		if w := r.Candidates[id-1].Worst; w[0] == least {
			vs[id-1] = w[1:]
			in = append(in, id-1)
		}
	}
	sums := scaledSums(vs, in)
	bestID, bestSum := 0, math.Inf(1)
	for _, i := range in {
		if sums[i] < bestSum {
			bestID, bestSum = i+1, sums[i]
		}
	}
	return bestID
}

// scaledSums is, for each vector vs[i] of in, the sum of its values each
// scaled to [0,1] over in (0 the least value among them, 1 the largest;
// a value alike in all counts 0, +Inf 1), by index.
func scaledSums(vs [][]float64, in []int) map[int]float64 {
	sums := map[int]float64{}
	if len(in) == 0 {
		return sums
	}
	for _, i := range in {
		sums[i] = 0
	}
	for o := range vs[in[0]] {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, i := range in {
			if v := vs[i][o]; !math.IsInf(v, 1) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
		for _, i := range in {
			switch v := vs[i][o]; {
			case math.IsInf(v, 1):
				sums[i]++
			case hi > lo:
				sums[i] += (v - lo) / (hi - lo)
			}
		}
	}
	return sums
}

// Alike groups the front's points of the same worst and best vectors
// (settings that behave the same on this fleet, e.g. a hint mode where
// the provider gives no hints): each group's IDs in the front's order,
// the groups in the order of their first point.
func (r *Report) Alike() [][]int {
	var out [][]int
	for _, id := range r.Front {
		c := &r.Candidates[id-1]
		if n := len(out); n > 0 {
			last := &r.Candidates[out[n-1][0]-1]
			if slices.Equal(last.Worst, c.Worst) && slices.Equal(last.Best, c.Best) {
				out[n-1] = append(out[n-1], id)
				continue
			}
		}
		out = append(out, []int{id})
	}
	return out
}

// ChosenSettings are the chosen point's settings (false: none).
func (r *Report) ChosenSettings() (policy.Settings, bool) {
	if r.Chosen < 1 || r.Chosen > len(r.Candidates) {
		return policy.Settings{}, false
	}
	return r.Candidates[r.Chosen-1].Settings, true
}

// ReportError is an invalid report file: what is wrong, at which field.
type ReportError struct{ Field, Msg string }

// Error gives "field: what is wrong".
func (e *ReportError) Error() string { return e.Field + ": " + e.Msg }

// ReadReport reads a report's JSON (retrysim tune --json, a shard's or a
// whole tune's): every field known, the vectors as long as the
// objectives, the values as the axes; the derived fields are computed
// again (Merge).
func ReadReport(data []byte) (*Report, error) {
	if len(data) > MaxReportSize {
		return nil, &ReportError{"", fmt.Sprintf("too large (at most %d bytes)", MaxReportSize)}
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	r := &Report{}
	if err := d.Decode(r); err != nil {
		return nil, &ReportError{"", "not a tune report: " + err.Error()}
	}
	if r.Format != Format {
		return nil, &ReportError{"format", fmt.Sprintf("%d (allowed: %d; written by another version of retrysim tune)", r.Format, Format)}
	}
	sh, err := fleet.ParseShard(r.ShardText)
	if err != nil {
		return nil, &ReportError{"shard", err.Error()}
	}
	r.Shard = sh
	if err := checkAxes(r.Axes); err != nil {
		return nil, &ReportError{"axes", err.Error()}
	}
	if err := checkObjectives(r.Objectives); err != nil {
		return nil, &ReportError{"objectives", err.Error()}
	}
	if len(r.Seeds) < 1 || len(r.Seeds) > MaxSeeds {
		return nil, &ReportError{"seeds", fmt.Sprintf("%d seeds (allowed: 1 to %d)", len(r.Seeds), MaxSeeds)}
	}
	n := len(r.Objectives)
	vec := func(field string, v Vec, need bool) error {
		if (v != nil || need) && len(v) != n {
			return &ReportError{field, fmt.Sprintf("%d values (allowed: one per objective, %d)", len(v), n)}
		}
		return nil
	}
	seeds := func(field string, ss []Vec) error {
		if len(ss) != len(r.Seeds) {
			return &ReportError{field, fmt.Sprintf("%d seeds' values (allowed: one per seed, %d)", len(ss), len(r.Seeds))}
		}
		for i, s := range ss {
			if err := vec(fmt.Sprintf("%s[%d]", field, i), s, true); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range r.Candidates {
		c := &r.Candidates[i]
		at := fmt.Sprintf("candidates[%d]", i)
		if len(c.Values) != len(r.Axes) {
			return nil, &ReportError{at + ".values", fmt.Sprintf("%d values (allowed: one per axis, %d)", len(c.Values), len(r.Axes))}
		}
		pol, err := policy.Compile(c.Settings) // its one check: a run of it takes pol
		if err != nil {
			return nil, &ReportError{at + ".settings", err.Error()}
		}
		c.pol = pol
		if err := vec(at+".short", c.Short, true); err != nil {
			return nil, err
		}
		if !c.Pruned {
			if err := seeds(at+".seeds", c.Seeds); err != nil {
				return nil, err
			}
		}
	}
	for i := range r.Profiles {
		p := &r.Profiles[i]
		at := fmt.Sprintf("profiles[%d]", i)
		if _, err := policy.ProfileByName(p.Profile); err != nil {
			return nil, &ReportError{at + ".profile", err.Error()}
		}
		if p.Error == "" {
			if err := seeds(at+".seeds", p.Seeds); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// Merge puts the shard reports of one tune together (in any order; names
// name them in errors): the same tune, every shard of one split once. The
// merged report is the shard 0/1's: its candidates and profiles are every
// shard's, its front and placements computed over all of them.
func Merge(parts []*Report, names []string) (*Report, error) {
	if len(parts) == 0 {
		return nil, errors.New("no reports to merge")
	}
	first := parts[0]
	count := first.Shard.Count
	seen := make([]string, count)
	for i, p := range parts {
		switch {
		case p.Tune != first.Tune:
			return nil, fmt.Errorf("%s: a shard of another tune (%s, not %s's %s)", names[i], p.Tune, names[0], first.Tune)
		case p.Shard.Count != count:
			return nil, fmt.Errorf("%s: shard %s of a split into %d (%s's is into %d)", names[i], p.Shard, p.Shard.Count, names[0], count)
		case seen[p.Shard.Index] != "":
			return nil, fmt.Errorf("%s: shard %s given twice (%s has it too)", names[i], p.Shard, seen[p.Shard.Index])
		}
		seen[p.Shard.Index] = names[i]
	}
	for i, s := range seen {
		if s == "" {
			return nil, fmt.Errorf("shard %d/%d missing", i, count)
		}
	}
	out := *first
	out.Shard = fleet.Shard{Index: 0, Count: 1}
	out.Candidates, out.Profiles, out.Counts = nil, nil, Counts{Design: first.Counts.Design, Invalid: first.Counts.Invalid}
	for _, p := range parts {
		out.Candidates = append(out.Candidates, p.Candidates...)
		out.Profiles = append(out.Profiles, p.Profiles...)
		out.Counts.Coarse += p.Counts.Coarse
		out.Counts.Refined += p.Counts.Refined
		out.Counts.Confirmed += p.Counts.Confirmed
		out.Counts.ShortRuns += p.Counts.ShortRuns
		out.Counts.LongRuns += p.Counts.LongRuns
	}
	out.finish()
	return &out, nil
}

// ReadReportFile reads a report file (strictfile's bounded read).
func ReadReportFile(path string) (*Report, error) {
	data, tooLarge, err := strictfile.ReadFile(path, MaxReportSize)
	if err != nil {
		return nil, err
	}
	if tooLarge {
		return nil, &ReportError{"", fmt.Sprintf("too large (at most %d bytes)", MaxReportSize)}
	}
	return ReadReport(data)
}
