package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// Histogram buckets: values in whole milliseconds; 0 to 63 ms have a bucket
// each, and every power of two above is cut into histSub equal buckets, so
// a bucket is at most 1/32 (about 3 %) of its values wide. The buckets are
// fixed, so histograms of different runs add up exactly.
const (
	histExact   = 64
	histSub     = 32
	histBuckets = histExact + 57*histSub
)

// Histogram is a fixed-bucket histogram of durations (SPEC.md §15.4).
type Histogram struct {
	Counts [histBuckets]uint64
	N      uint64
	Max    time.Duration
}

func bucketOf(d time.Duration) int {
	ms := int64(d / time.Millisecond)
	if ms < histExact {
		return int(max(ms, 0))
	}
	e := bits.Len64(uint64(ms)) - 6 // ms>>e is in [32, 64)
	return histExact + (e-1)*histSub + int(ms>>e) - histSub
}

// bucketUpper is the largest whole millisecond in bucket i.
func bucketUpper(i int) int64 {
	if i < histExact {
		return int64(i)
	}
	e := (i-histExact)/histSub + 1
	m := int64((i-histExact)%histSub + histSub)
	return (m+1)<<e - 1
}

// BucketUpperMs is the largest whole millisecond in histogram bucket i
// (SPEC.md §15.4).
func BucketUpperMs(i int) int64 { return bucketUpper(i) }

// Add counts d.
func (h *Histogram) Add(d time.Duration) {
	h.Counts[bucketOf(d)]++
	h.N++
	h.Max = max(h.Max, d)
}

// Merge adds o's counts to h's.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.N += o.N
	h.Max = max(h.Max, o.Max)
}

// Quantile is the p-quantile (0 < p <= 1) in milliseconds: the upper bound
// of the bucket that holds the ceil(p*N)-th smallest value, or the maximum
// when that is smaller; 0 when the histogram is empty.
func (h *Histogram) Quantile(p float64) float64 {
	if h.N == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p * float64(h.N)))
	rank = min(max(rank, 1), h.N)
	maxMs := float64(h.Max) / float64(time.Millisecond)
	var seen uint64
	for i, c := range h.Counts {
		if seen += c; seen >= rank {
			return min(float64(bucketUpper(i)), maxMs)
		}
	}
	return maxMs
}

// Series bins: SeriesBins bins of equal width from t=0, the width
// SeriesBase × 2^k for the smallest k that holds every call counted.
const (
	SeriesBins = 1024
	SeriesBase = 100 * time.Millisecond
)

// Series counts events (wire calls) over time in SeriesBins bins of equal
// width from t=0 (SPEC.md §15.7): when an event falls past the last bin,
// the width doubles and each pair of adjacent bins is added into one. Its
// memory is fixed, and series of different runs merge exactly: the one
// with the narrower bins is coarsened to the wider width, then bins add.
type Series struct {
	// Width is the bins' width; 0 stands for SeriesBase.
	Width time.Duration
	// Counts are the events per bin: bin i is [i×Width, (i+1)×Width).
	Counts [SeriesBins]int64
}

// BinWidth is the bins' width.
func (s *Series) BinWidth() time.Duration {
	if s.Width == 0 {
		return SeriesBase
	}
	return s.Width
}

// Add counts one event at t (t >= 0).
func (s *Series) Add(t time.Duration) {
	w := s.BinWidth()
	i := t / w
	for i >= SeriesBins {
		s.coarsen()
		w = s.Width
		i = t / w
	}
	s.Counts[i]++
}

// coarsen doubles the width, adding each pair of bins.
func (s *Series) coarsen() {
	for i := range SeriesBins / 2 {
		s.Counts[i] = s.Counts[2*i] + s.Counts[2*i+1]
	}
	clear(s.Counts[SeriesBins/2:])
	s.Width = 2 * s.BinWidth()
}

// Merge adds o's counts to s's, at the wider of their widths.
func (s *Series) Merge(o *Series) {
	for s.BinWidth() < o.BinWidth() {
		s.coarsen()
	}
	c := *o
	for c.BinWidth() < s.BinWidth() {
		c.coarsen()
	}
	for i, n := range c.Counts {
		s.Counts[i] += n
	}
}

// Total is the number of events counted.
func (s *Series) Total() int64 {
	var n int64
	for _, c := range s.Counts {
		n += c
	}
	return n
}

// Stats are one profile's metrics in a fleet (SPEC.md §15.4 defines each).
// Every field is a counter, a maximum or a histogram, so Stats of runs
// merge exactly.
type Stats struct {
	Profile string
	// Sessions that arrived before the horizon.
	Sessions int64
	// Prompts issued; of them, Succeeded and Failed are done, Waiting were
	// not done at the horizon.
	Prompts, Succeeded, Failed, Waiting int64
	// Calls are the agent's model calls (provider calls), WireCalls the
	// requests sent to the provider (the SDK layer's retries included).
	Calls, WireCalls int64
	// Rejected are the wire calls answered 429 for being over capacity.
	Rejected int64
	// InRetryAfter are the retries (wire calls sent after an error answer
	// of the same prompt) sent inside a retry-after window the provider
	// gave the session.
	InRetryAfter int64
	// Chains of the agent's retry machine that ended, by how.
	ChainsSucceeded, ChainsExhausted, ChainsFailFast, ChainsOther int64
	// LongestWait is the longest retry wait armed (agent or SDK layer).
	LongestWait time.Duration
	// PeakDuring and PeakAfter are the most wire calls sent in one 100 ms
	// bin during an outage window and in the recovery window after one.
	PeakDuring, PeakAfter int64
	// TimeToSuccess holds the succeeded prompts' times from issue to done.
	TimeToSuccess Histogram
	// WireSeries counts the wire calls by when they were sent: the calls
	// per second over time.
	WireSeries Series
	// Spread is the lowest and highest of its per-run figures over the
	// group's runs (seeds).
	Spread Spread
}

// Spread is the lowest and highest, over the runs (seeds) merged into a
// Stats, of each run's own figures (SPEC.md §15.4): the share of its
// prompts that failed and its wire calls per prompt (0 for a run without
// prompts, as Summarize gives them). Lowest and highest merge exactly in
// any order, so the spread of a sweep is the one of its runs however they
// are split into shards.
type Spread struct {
	// Runs is the number of runs; 0 for none (a Stats not of a run).
	Runs                               int64
	FailedShareMin, FailedShareMax     float64
	WirePerPromptMin, WirePerPromptMax float64
}

// spreadOf is the spread of one run's s: its own figures, lowest and
// highest alike.
func spreadOf(s *Stats) Spread {
	var failed float64
	if s.Prompts > 0 {
		failed = float64(s.Failed) / float64(s.Prompts)
	}
	wire := s.Summarize(0).WireCallsPerPrompt
	return Spread{Runs: 1, FailedShareMin: failed, FailedShareMax: failed, WirePerPromptMin: wire, WirePerPromptMax: wire}
}

// Merge adds o's runs to sp's.
func (sp *Spread) Merge(o *Spread) {
	switch {
	case o.Runs == 0:
	case sp.Runs == 0:
		*sp = *o
	default:
		sp.Runs += o.Runs
		sp.FailedShareMin, sp.FailedShareMax = min(sp.FailedShareMin, o.FailedShareMin), max(sp.FailedShareMax, o.FailedShareMax)
		sp.WirePerPromptMin, sp.WirePerPromptMax = min(sp.WirePerPromptMin, o.WirePerPromptMin), max(sp.WirePerPromptMax, o.WirePerPromptMax)
	}
}

// Merge adds o's metrics to s's.
func (s *Stats) Merge(o *Stats) {
	s.addCounts(o)
	s.PeakDuring = max(s.PeakDuring, o.PeakDuring)
	s.PeakAfter = max(s.PeakAfter, o.PeakAfter)
	s.TimeToSuccess.Merge(&o.TimeToSuccess)
	s.WireSeries.Merge(&o.WireSeries)
	s.Spread.Merge(&o.Spread)
}

// addCounts adds o's counters and longest wait to s's (Merge's part that
// a replayed session adds, runner.replay).
func (s *Stats) addCounts(o *Stats) {
	s.Sessions += o.Sessions
	s.Prompts += o.Prompts
	s.Succeeded += o.Succeeded
	s.Failed += o.Failed
	s.Waiting += o.Waiting
	s.Calls += o.Calls
	s.WireCalls += o.WireCalls
	s.Rejected += o.Rejected
	s.InRetryAfter += o.InRetryAfter
	s.ChainsSucceeded += o.ChainsSucceeded
	s.ChainsExhausted += o.ChainsExhausted
	s.ChainsFailFast += o.ChainsFailFast
	s.ChainsOther += o.ChainsOther
	s.LongestWait = max(s.LongestWait, o.LongestWait)
}

// overflows reports the first counter (by its JSON name) whose sum with
// o's would overflow int64. The histogram's and series' counts add up to
// succeeded and wireCalls, so these bound them.
func (s *Stats) overflows(o *Stats) (string, bool) {
	for _, f := range []struct {
		name string
		a, b int64
	}{{"sessions", s.Sessions, o.Sessions}, {"prompts", s.Prompts, o.Prompts}, {"succeeded", s.Succeeded, o.Succeeded},
		{"failed", s.Failed, o.Failed}, {"waiting", s.Waiting, o.Waiting}, {"calls", s.Calls, o.Calls},
		{"wireCalls", s.WireCalls, o.WireCalls}, {"rejected", s.Rejected, o.Rejected}, {"inRetryAfter", s.InRetryAfter, o.InRetryAfter},
		{"chainsSucceeded", s.ChainsSucceeded, o.ChainsSucceeded}, {"chainsExhausted", s.ChainsExhausted, o.ChainsExhausted},
		{"chainsFailFast", s.ChainsFailFast, o.ChainsFailFast}, {"chainsOther", s.ChainsOther, o.ChainsOther}} {
		if (f.b > 0 && f.a > math.MaxInt64-f.b) || (f.b < 0 && f.a < math.MinInt64-f.b) {
			return f.name, true
		}
	}
	return "", false
}

// AllProfiles is the name of the row that sums every profile of a mix.
const AllProfiles = "all"

// Group is one fleet configuration's result, merged over the seeds it ran
// with.
type Group struct {
	Fleet string // the fleet's name
	Mix   string // its profile mix, as --profile writes it
	SDK   string // its SDK layer's profile ("": none)
	Seeds []int64
	// CapacityPer100ms is the provider's capacity per 100 ms (0: no limit):
	// rps/10, else maxInFlight over the mean call latency.
	CapacityPer100ms float64
	// Outages are the fleet's outage windows (for plots).
	Outages []fleetspec.Outage
	// Profiles are the mix's profiles in order, then, for a mix of more
	// than one, AllProfiles.
	Profiles []Stats
}

func (g *Group) key() string { return g.Fleet + "\x00" + g.Mix + "\x00" + g.SDK }

// Result is the result of one run or of a sweep: its groups in the order
// they were first run.
type Result struct {
	Groups []Group
}

// Merge merges o into r: a group of the same fleet, mix and SDK adds up
// (seeds, counters, histograms; maxima), any other is appended. Merging the
// results of a sweep's runs in any grouping gives the sweep's result.
func (r *Result) Merge(o *Result) error {
	for _, og := range o.Groups {
		i := slices.IndexFunc(r.Groups, func(g Group) bool { return g.key() == og.key() })
		if i < 0 {
			g := og
			g.Seeds = slices.Clone(og.Seeds)
			g.Outages = slices.Clone(og.Outages)
			g.Profiles = slices.Clone(og.Profiles)
			r.Groups = append(r.Groups, g)
			continue
		}
		g := &r.Groups[i]
		if g.CapacityPer100ms != og.CapacityPer100ms || len(g.Profiles) != len(og.Profiles) || !slices.Equal(g.Outages, og.Outages) {
			return fmt.Errorf("fleet %s, profile %s: the results to merge differ in capacity, outages or profiles", quoteShort(og.Fleet), quoteShort(og.Mix))
		}
		for j := range og.Profiles {
			if g.Profiles[j].Profile != og.Profiles[j].Profile {
				return fmt.Errorf("fleet %s, profile %s: the results to merge list profiles in another order", quoteShort(og.Fleet), quoteShort(og.Mix))
			}
			if name, ok := g.Profiles[j].overflows(&og.Profiles[j]); ok {
				return fmt.Errorf("fleet %s, profile %s, %s: %s adds up to more than %d (a count cannot be that large: a changed result)",
					quoteShort(og.Fleet), quoteShort(og.Mix), quoteShort(og.Profiles[j].Profile), name, int64(math.MaxInt64))
			}
		}
		for j := range og.Profiles {
			g.Profiles[j].Merge(&og.Profiles[j])
		}
		g.Seeds = append(g.Seeds, og.Seeds...)
		slices.Sort(g.Seeds)
	}
	return nil
}

// The JSON form (retrysim fleet --json): derived figures first-class,
// durations in milliseconds.

type resultJSON struct {
	Groups []groupJSON `json:"fleets"`
}

type groupJSON struct {
	Fleet            string      `json:"fleet"`
	Profile          string      `json:"profile"`
	SDK              string      `json:"sdk"`
	Seeds            []int64     `json:"seeds"`
	CapacityPer100ms float64     `json:"capacityPer100ms"`
	Profiles         []statsJSON `json:"profiles"`
}

type statsJSON struct {
	Profile            string     `json:"profile"`
	Sessions           int64      `json:"sessions"`
	Prompts            int64      `json:"prompts"`
	Succeeded          int64      `json:"succeeded"`
	Failed             int64      `json:"failed"`
	Waiting            int64      `json:"waiting"`
	Calls              int64      `json:"calls"`
	WireCalls          int64      `json:"wireCalls"`
	CallsPerPrompt     float64    `json:"callsPerPrompt"`
	WireCallsPerPrompt float64    `json:"wireCallsPerPrompt"`
	Rejected           int64      `json:"rejected"`
	InRetryAfter       int64      `json:"inRetryAfter"`
	ChainsSucceeded    int64      `json:"chainsSucceeded"`
	ChainsExhausted    int64      `json:"chainsExhausted"`
	ChainsFailFast     int64      `json:"chainsFailFast"`
	ChainsOther        int64      `json:"chainsOther"`
	TimeToSuccessP50Ms float64    `json:"timeToSuccessP50Ms"`
	TimeToSuccessP90Ms float64    `json:"timeToSuccessP90Ms"`
	TimeToSuccessP99Ms float64    `json:"timeToSuccessP99Ms"`
	TimeToSuccessMaxMs float64    `json:"timeToSuccessMaxMs"`
	LongestWaitMs      float64    `json:"longestWaitMs"`
	PeakDuring         int64      `json:"peakDuring"`
	PeakAfter          int64      `json:"peakAfter"`
	PeakDuringRatio    float64    `json:"peakDuringRatio"`
	PeakAfterRatio     float64    `json:"peakAfterRatio"`
	TimeToSuccessHist  [][2]int64 `json:"timeToSuccessBuckets"`
	spreadJSON
}

// spreadJSON is a Spread in JSON (its runs are the group's seeds).
type spreadJSON struct {
	FailedShareMin   float64 `json:"failedShareMin"`
	FailedShareMax   float64 `json:"failedShareMax"`
	WirePerPromptMin float64 `json:"wireCallsPerPromptMin"`
	WirePerPromptMax float64 `json:"wireCallsPerPromptMax"`
}

func (sp *Spread) toJSON() spreadJSON {
	return spreadJSON{FailedShareMin: sp.FailedShareMin, FailedShareMax: sp.FailedShareMax,
		WirePerPromptMin: sp.WirePerPromptMin, WirePerPromptMax: sp.WirePerPromptMax}
}

// Summary are a Stats' derived figures, as the JSON and the table give
// them.
type Summary struct {
	CallsPerPrompt, WireCallsPerPrompt float64
	// Time to success quantiles and maximum, ms.
	P50, P90, P99, Max float64
	LongestWaitMs      float64
	// PeakDuringRatio and PeakAfterRatio are the peaks over the capacity
	// per 100 ms (0 without a capacity).
	PeakDuringRatio, PeakAfterRatio float64
}

// Summarize derives s's figures, with capacity the provider's per 100 ms.
func (s *Stats) Summarize(capacity float64) Summary {
	per := func(n int64) float64 {
		if s.Prompts == 0 {
			return 0
		}
		return float64(n) / float64(s.Prompts)
	}
	ratio := func(n int64) float64 {
		if capacity == 0 {
			return 0
		}
		return float64(n) / capacity
	}
	h := &s.TimeToSuccess
	return Summary{CallsPerPrompt: per(s.Calls), WireCallsPerPrompt: per(s.WireCalls),
		P50: h.Quantile(0.5), P90: h.Quantile(0.9), P99: h.Quantile(0.99), Max: float64(h.Max) / float64(time.Millisecond),
		LongestWaitMs: float64(s.LongestWait) / float64(time.Millisecond), PeakDuringRatio: ratio(s.PeakDuring), PeakAfterRatio: ratio(s.PeakAfter)}
}

// JSON writes r as retrysim fleet --json prints it (indented, a final
// newline): {"fleets": [{fleet, profile, sdk, seeds, capacityPer100ms,
// profiles: [...]}]}; each profile's time-to-success buckets are
// [upperMs, count] pairs of its non-empty buckets.
func (r *Result) JSON() ([]byte, error) {
	out := resultJSON{Groups: make([]groupJSON, 0, len(r.Groups))}
	for _, g := range r.Groups {
		gj := groupJSON{Fleet: g.Fleet, Profile: g.Mix, SDK: g.SDK, Seeds: g.Seeds, CapacityPer100ms: g.CapacityPer100ms}
		for i := range g.Profiles {
			gj.Profiles = append(gj.Profiles, g.Profiles[i].toJSON(g.CapacityPer100ms))
		}
		out.Groups = append(out.Groups, gj)
	}
	return encodeIndented(out)
}

// toJSON is s's JSON form, with capacity the provider's per 100 ms.
func (s *Stats) toJSON(capacity float64) statsJSON {
	sum := s.Summarize(capacity)
	hist := [][2]int64{}
	for b, c := range s.TimeToSuccess.Counts {
		if c != 0 {
			hist = append(hist, [2]int64{bucketUpper(b), int64(c)})
		}
	}
	return statsJSON{Profile: s.Profile, Sessions: s.Sessions, Prompts: s.Prompts,
		Succeeded: s.Succeeded, Failed: s.Failed, Waiting: s.Waiting, Calls: s.Calls, WireCalls: s.WireCalls,
		CallsPerPrompt: sum.CallsPerPrompt, WireCallsPerPrompt: sum.WireCallsPerPrompt, Rejected: s.Rejected,
		InRetryAfter: s.InRetryAfter, ChainsSucceeded: s.ChainsSucceeded, ChainsExhausted: s.ChainsExhausted,
		ChainsFailFast: s.ChainsFailFast, ChainsOther: s.ChainsOther, TimeToSuccessP50Ms: sum.P50,
		TimeToSuccessP90Ms: sum.P90, TimeToSuccessP99Ms: sum.P99, TimeToSuccessMaxMs: sum.Max,
		LongestWaitMs: sum.LongestWaitMs, PeakDuring: s.PeakDuring, PeakAfter: s.PeakAfter,
		PeakDuringRatio: sum.PeakDuringRatio, PeakAfterRatio: sum.PeakAfterRatio, TimeToSuccessHist: hist, spreadJSON: s.Spread.toJSON()}
}

// encodeIndented writes v as JSON indented by two spaces, HTML characters
// unescaped, with a final newline.
func encodeIndented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
