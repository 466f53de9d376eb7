package fleetplot

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
)

// Rate is one line of a calls panel: a profile's wire calls per bin of
// its series and per second.
type Rate struct {
	Label string
	// Group is the index of its group in the result.
	Group int
	// Style is the line's color and dash pattern (Palette, Dashes): the
	// same for the same profile (and mix, SDK) in every panel; -1 for the
	// sum of a group's profiles ("all"), drawn thin and grey.
	Style int
	// Width is the bins' width; bin i is [i×Width, (i+1)×Width).
	Width time.Duration
	// Runs is the number of runs (seeds) merged into the group.
	Runs int
	// Counts are the wire calls per bin, over every run, up to the last
	// bin of any line of the panel with a call; PerSecond is the mean per
	// run: the counts over the width in seconds and over Runs.
	Counts    []int64
	PerSecond []float64
}

// CDF is one line of a time-to-success panel: for each non-empty
// histogram bucket, its upper bound in seconds (the maximum for the last)
// and the fraction of every prompt of the profile that succeeded at or
// below it. The line ends at Succeeded/Prompts: the gap below 1 is the
// failed and still-waiting prompts.
type CDF struct {
	Label string
	// Line is the index of the profile's Rate in the panel (drawn in the
	// same style).
	Line              int
	Seconds, Fraction []float64
	// The profile's prompts and how they ended.
	Prompts, Succeeded, Failed, Waiting int64
	// Spread is the profile's figures' lowest and highest over its seeds:
	// the failed share's is drawn as a whisker on the line's plateau.
	Spread fleet.Spread
}

// Capacity is the provider's capacity of a panel's fleet, drawn as a line.
type Capacity struct {
	PerSecond float64
	Label     string
}

// Peak is the table's peak of a fleet (PEAK_DURING/AFTER, PEAK/CAPACITY):
// the most wire calls one run sent in one 100 ms bin during an outage or in
// the recovery window after one, of the fleet's busiest row (a profile, or
// the sum of a mix's), over every seed. The calls panel marks it at its
// true height, not at its bin's mean over the seeds.
type Peak struct {
	// Label is the row's: the profile's line label, or the mix's sum's.
	Label string
	// Line is the index of the row's Rate in the panel.
	Line int
	// Calls are the calls in the 100 ms bin; PerSecond ten times that.
	Calls     int64
	PerSecond float64
	// Ratio is Calls over the provider's capacity per 100 ms, the table's
	// PEAK/CAPACITY (0: unlimited).
	Ratio float64
	// After says the peak is in a recovery window, not during an outage.
	After bool
	// At is where it is marked: the middle of the row's busiest bin in the
	// windows it is of (the result keeps no time of the peak itself).
	At time.Duration
}

// Cost is what a row of the fleet cost the provider: the table's
// WIRE/PROMPT, 429_OVER_CAP and IN_RETRY_AFTER.
type Cost struct {
	Label string
	// Line is the index of the row's Rate in the panel (its style).
	Line int
	// WirePerPrompt is the requests sent per prompt (the SDK layer's
	// retries included).
	WirePerPrompt float64
	// OverCapacity are the requests answered 429 for being over capacity;
	// InRetryAfter the retries sent inside a retry-after window.
	OverCapacity, InRetryAfter int64
	// Spread is the row's figures' lowest and highest over its seeds: the
	// requests per prompt's is drawn as a whisker on the bar.
	Spread fleet.Spread
}

// Panel is one fleet's row of the image: its calls, its CDF and its cost.
type Panel struct {
	Fleet string
	// Heading names the fleet, its seeds and profile mixes (and SDK).
	Heading string
	Rates   []Rate
	CDFs    []CDF // one per profile, every profile (a flat line at 0 when none succeeded)
	// Outages are the fleet's windows shaded, [start, end), without
	// repeats.
	Outages [][2]time.Duration
	// Capacities are the provider's capacities of the fleet's groups,
	// without repeats; none when unlimited.
	Capacities []Capacity
	// Runs is the largest number of runs (seeds) of the fleet's groups.
	Runs int
	// Peak is the table's peak; nil when the fleet has no outage (the
	// table measures none).
	Peak *Peak
	// Costs are a row per Rate, in their order.
	Costs []Cost
	// End is where the time axis ends: where the activity ends (99.9 % of
	// the calls sent, and every outage over), plus a margin; LastCall is
	// the end of the last bin with a call, at or after End.
	End, LastCall time.Duration
}

// offScaleFactor: a peak more than this many times the top of the lines
// and the capacity is marked at the top of the axis, off the scale.
const offScaleFactor = 1.5

// activityShare is the share of a panel's calls sent before its time axis
// ends: a long tail of a few late calls does not stretch the axis.
const activityShare = 0.999

// Data is what the image shows: a panel per fleet, in the result's order.
type Data struct {
	Panels []Panel
}

// DataOf is the data drawn for res: a panel per fleet; in it a line per
// profile of each group, labelled by the profile and, when the fleet has
// several groups, by the mix or SDK that tells them apart; and, for a group
// of several profiles, the line of their sum ("all").
func DataOf(res *fleet.Result) Data {
	var d Data
	for gi := range res.Groups {
		if f := res.Groups[gi].Fleet; !slices.ContainsFunc(d.Panels, func(p Panel) bool { return p.Fleet == f }) {
			d.Panels = append(d.Panels, Panel{Fleet: f})
		}
	}
	styles := map[string]int{}
	for pi := range d.Panels {
		p := &d.Panels[pi]
		var index []int
		for gi := range res.Groups {
			if res.Groups[gi].Fleet == p.Fleet {
				index = append(index, gi)
			}
		}
		p.addGroups(res, index, styles)
		p.trimRates()
		if p.Peak != nil {
			p.Peak.At = busiestIn(&p.Rates[p.Peak.Line], p.Outages, p.Peak.After)
		}
		p.End, p.LastCall = activityEnd(p)
	}
	return d
}

// addGroups adds to p the lines, outages, capacities and heading of the
// groups of res at index (its fleet's); styles gives each line label its
// style, the same in every panel.
func (p *Panel) addGroups(res *fleet.Result, index []int, styles map[string]int) {
	varies := func(f func(g *fleet.Group) string) bool {
		for _, gi := range index {
			if f(&res.Groups[gi]) != f(&res.Groups[index[0]]) {
				return true
			}
		}
		return false
	}
	mixes := varies(func(g *fleet.Group) string { return g.Mix })
	sdks := varies(func(g *fleet.Group) string { return g.SDK })
	var seeds, mixList, sdkList []string
	for _, gi := range index {
		g := &res.Groups[gi]
		p.Runs = max(p.Runs, len(g.Seeds))
		if s := fleet.SeedsText(g.Seeds); !slices.Contains(seeds, s) {
			seeds = append(seeds, s)
		}
		if !slices.Contains(mixList, g.Mix) {
			mixList = append(mixList, g.Mix)
		}
		if g.SDK != "" && !slices.Contains(sdkList, g.SDK) {
			sdkList = append(sdkList, g.SDK)
		}
		p.addWindows(g)
		// What tells a fleet's groups apart.
		var parts []string
		if mixes && strings.Contains(g.Mix, ",") {
			parts = append(parts, g.Mix)
		}
		if sdks {
			sdk := "no sdk"
			if g.SDK != "" {
				sdk = "sdk " + g.SDK
			}
			parts = append(parts, sdk)
		}
		p.addLines(g, gi, parts, styles)
	}
	heading := []string{"fleet " + p.Fleet, "seeds " + strings.Join(seeds, " | "), "profiles " + strings.Join(mixList, " | ")}
	if len(sdkList) > 0 {
		heading = append(heading, "sdk "+strings.Join(sdkList, " | "))
	}
	p.Heading = strings.Join(heading, "  ·  ")
}

// addWindows adds g's outage windows and capacity to p's, without
// repeats.
func (p *Panel) addWindows(g *fleet.Group) {
	for _, o := range g.Outages {
		w := [2]time.Duration{o.Start, o.End()}
		if !slices.Contains(p.Outages, w) {
			p.Outages = append(p.Outages, w)
		}
	}
	if g.CapacityPer100ms > 0 {
		c := Capacity{PerSecond: g.CapacityPer100ms * 10}
		c.Label = "capacity " + number(c.PerSecond) + "/s"
		if !slices.ContainsFunc(p.Capacities, func(o Capacity) bool { return o.PerSecond == c.PerSecond }) {
			p.Capacities = append(p.Capacities, c)
		}
	}
}

// addLines adds a line per profile of g (group gi of the result), labelled
// by parts and the profile, with its cost and CDF, and the line of their
// sum when g has several; and keeps p's peak the highest of them.
func (p *Panel) addLines(g *fleet.Group, gi int, parts []string, styles map[string]int) {
	runs := max(1, len(g.Seeds))
	lines := 0
	for si := range g.Profiles {
		if g.Profiles[si].Profile != fleet.AllProfiles {
			lines++
		}
	}
	for si := range g.Profiles {
		s := &g.Profiles[si]
		label := strings.Join(append(slices.Clone(parts), s.Profile), " ")
		style := -1
		if s.Profile == fleet.AllProfiles {
			if lines < 2 {
				continue
			}
			label = strings.Join(append(slices.Clone(parts), "all profiles"), " ")
		} else {
			if _, ok := styles[label]; !ok {
				styles[label] = len(styles)
			}
			style = styles[label]
		}
		ser := &s.WireSeries
		p.Rates = append(p.Rates, Rate{Label: label, Group: gi, Style: style, Runs: runs, Width: ser.BinWidth(), Counts: ser.Counts[:]})
		line := len(p.Rates) - 1
		sum := s.Summarize(g.CapacityPer100ms)
		p.Costs = append(p.Costs, Cost{Label: label, Line: line, WirePerPrompt: sum.WireCallsPerPrompt,
			OverCapacity: s.Rejected, InRetryAfter: s.InRetryAfter, Spread: s.Spread})
		if calls := max(s.PeakDuring, s.PeakAfter); len(g.Outages) > 0 && calls > 0 && (p.Peak == nil || calls > p.Peak.Calls) {
			ratio := sum.PeakDuringRatio
			if s.PeakAfter > s.PeakDuring {
				ratio = sum.PeakAfterRatio
			}
			p.Peak = &Peak{Label: label, Line: line, Calls: calls, PerSecond: float64(calls) * 10,
				Ratio: ratio, After: s.PeakAfter > s.PeakDuring}
		}
		if s.Profile == fleet.AllProfiles {
			continue
		}
		c := cdfOf(s)
		c.Label, c.Line = label, line
		p.CDFs = append(p.CDFs, c)
	}
}

// trimRates cuts p's lines after the last non-empty bin of any of them
// (keeping one empty bin) and sets their means per second.
func (p *Panel) trimRates() {
	last := 0
	for _, r := range p.Rates {
		n := len(r.Counts)
		for n > 0 && r.Counts[n-1] == 0 {
			n--
		}
		last = max(last, n)
	}
	for i := range p.Rates {
		r := &p.Rates[i]
		r.Counts = slices.Clone(r.Counts[:min(last+1, len(r.Counts))])
		r.PerSecond = make([]float64, len(r.Counts))
		for j, c := range r.Counts {
			r.PerSecond[j] = float64(c) / r.Width.Seconds() / float64(r.Runs)
		}
	}
}

// busiestIn is the middle of r's busiest bin overlapping the outage
// windows (after: the time between an outage's end and the next one's
// start, or the end of the series), the first one of equals.
func busiestIn(r *Rate, outages [][2]time.Duration, after bool) time.Duration {
	var windows [][2]time.Duration
	for i, o := range outages {
		if !after {
			windows = append(windows, o)
			continue
		}
		end := time.Duration(math.MaxInt64)
		for j, next := range outages {
			if j != i && next[0] >= o[1] && next[0] < end {
				end = next[0]
			}
		}
		windows = append(windows, [2]time.Duration{o[1], end})
	}
	best, at := int64(-1), time.Duration(0)
	for j, c := range r.Counts {
		a, b := time.Duration(j)*r.Width, time.Duration(j+1)*r.Width
		if c > best && slices.ContainsFunc(windows, func(w [2]time.Duration) bool { return a < w[1] && b > w[0] }) {
			best, at = c, a+r.Width/2
		}
	}
	return at
}

// activityEnd is where p's time axis ends: the end of the first bin by
// which activityShare of the calls of its busiest line were sent, or the
// last outage's end or the peak, whichever is later, plus 5 %; and the end
// of its last bin with a call. The axis never runs past that last bin.
func activityEnd(p *Panel) (end, lastCall time.Duration) {
	var busiest *Rate
	var most int64
	for i := range p.Rates {
		r := &p.Rates[i]
		var n int64
		for _, c := range r.Counts {
			n += c
		}
		if busiest == nil || n > most {
			busiest, most = r, n
		}
		k := len(r.Counts)
		for k > 0 && r.Counts[k-1] == 0 {
			k--
		}
		lastCall = max(lastCall, time.Duration(k)*r.Width)
	}
	if busiest == nil || most == 0 {
		return time.Second, time.Second
	}
	var seen int64
	for j, c := range busiest.Counts {
		seen += c
		if float64(seen) >= activityShare*float64(most) {
			end = time.Duration(j+1) * busiest.Width
			break
		}
	}
	for _, o := range p.Outages {
		end = max(end, min(o[1], lastCall))
	}
	if p.Peak != nil {
		end = max(end, p.Peak.At)
	}
	end = min(end+end/20, lastCall)
	return max(end, time.Second), max(lastCall, time.Second)
}

// cdfOf is s's CDF over every prompt.
func cdfOf(s *fleet.Stats) CDF {
	c := CDF{Prompts: s.Prompts, Succeeded: s.Succeeded, Failed: s.Failed, Waiting: s.Waiting, Spread: s.Spread}
	h := &s.TimeToSuccess
	if h.N == 0 || s.Prompts == 0 {
		return c
	}
	var seen uint64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		seen += n
		upper := min(time.Duration(fleet.BucketUpperMs(i))*time.Millisecond, h.Max)
		c.Seconds = append(c.Seconds, upper.Seconds())
		c.Fraction = append(c.Fraction, float64(seen)/float64(s.Prompts))
	}
	return c
}

// Gap is the line's label of the prompts below 1: "92.8% failed", "3.1%
// failed, 0.4% waiting", or "all succeeded".
func (c *CDF) Gap() string {
	var parts []string
	if c.Failed > 0 {
		parts = append(parts, share(c.Failed, c.Prompts)+" failed")
	}
	if c.Waiting > 0 {
		parts = append(parts, share(c.Waiting, c.Prompts)+" still waiting")
	}
	if len(parts) == 0 {
		return "all succeeded"
	}
	return strings.Join(parts, ", ")
}

// SeedsText is the line's label of its failed share's spread over its
// seeds, "; 5 seeds 7.9% to 8.4%", or "" for one seed (or none) or when
// no seed's prompt failed.
func (c *CDF) SeedsText() string {
	sp := &c.Spread
	if sp.Runs < 2 || sp.FailedShareMax == 0 {
		return ""
	}
	return "; " + strconv.FormatInt(sp.Runs, 10) + " seeds " + percent(sp.FailedShareMin) + " to " + percent(sp.FailedShareMax)
}

// percent writes the share v (0 to 1) as a percentage with one decimal.
func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }

// PlateauSpread is the lowest and highest of the line's end over its
// seeds: its end moved by each seed's failed share's difference from the
// seeds' together (exact when no prompt is still waiting).
func (c *CDF) PlateauSpread() (lo, hi float64) {
	end := 0.0
	if n := len(c.Fraction); n > 0 {
		end = c.Fraction[n-1]
	}
	if c.Prompts == 0 || c.Spread.Runs == 0 {
		return end, end
	}
	failed := float64(c.Failed) / float64(c.Prompts)
	return max(0, end+failed-c.Spread.FailedShareMax), min(1, end+failed-c.Spread.FailedShareMin)
}

// share writes n/of as a percentage, never 0 % or 100 % unless exact.
func share(n, of int64) string {
	if of == 0 {
		return "-"
	}
	p := 100 * float64(n) / float64(of)
	switch {
	case p < 0.1 && n > 0:
		return "<0.1%"
	case p > 99.9 && n < of:
		return ">99.9%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}

// number writes v with at most 3 significant digits after the point and no
// trailing zeros: 500, 0.25, 1234.5.
func number(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
