package fleetplot

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

var update = flag.Bool("update", false, "rewrite testdata/fleets.golden and docs/fleet.md's chart, docs/fleet-chart.png")

// outageSweep is a small fleet of two profiles through a 529 outage, over
// two seeds merged.
func outageSweep(t *testing.T) *fleet.Result {
	t.Helper()
	var cfgs []fleetspec.Config
	for seed := int64(1); seed <= 2; seed++ {
		c := fleetspec.Default(300)
		c.Rate = 30
		c.PromptErrors = fleetspec.PromptErrors{}
		c.Capacity = fleetspec.Capacity{RPS: 40, Burst: 40}
		c.Outages = []fleetspec.Outage{{Start: 3 * time.Second, Duration: 20 * time.Second, Kind: fleetspec.Kind529}}
		c.Profiles = fleetspec.Mix{{Profile: "omp-2026-02", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}
		c.Calls = fleetspec.Dist{Kind: fleetspec.DistUniform, A: 1, B: 4}
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	res, err := sweepConfigs(cfgs, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readyFleets is the sweep of the three fleets in fleets/, seed 1, run
// once for the package's tests (which only read it).
func readyFleets(t *testing.T) *fleet.Result {
	t.Helper()
	readyOnce.Do(func() { ready = sweepReadyFleets(t) })
	if ready == nil {
		t.Fatal("the ready fleets' sweep failed (see the first test that ran it)")
	}
	return ready
}

var (
	readyOnce sync.Once
	ready     *fleet.Result
)

func sweepReadyFleets(t *testing.T) *fleet.Result {
	t.Helper()
	paths, err := filepath.Glob("../../../fleets/*.yaml")
	if err != nil || len(paths) != 3 {
		t.Fatalf("fleets/: %v %v", paths, err)
	}
	var cfgs []fleetspec.Config
	for _, p := range paths {
		spec, err := fleetspec.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, spec.Configs()[0])
	}
	res, err := sweepConfigs(cfgs, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDataMatchesMetrics: the lines plotted are the metrics: each
// profile's calls per bin add up to its wire calls, the rates are the
// counts over the width and the two seeds, the CDF counts every prompt (it
// ends at the share that succeeded, and crosses half of the successes at
// the p50), and the outage and capacity are the fleet's.
func TestDataMatchesMetrics(t *testing.T) {
	res := outageSweep(t)
	d := DataOf(res)
	if len(d.Panels) != 1 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	p := d.Panels[0]
	g := res.Groups[0]
	if len(p.Rates) != 3 || len(p.CDFs) != 2 || len(p.Outages) != 1 || p.Outages[0] != [2]time.Duration{3 * time.Second, 23 * time.Second} ||
		len(p.Capacities) != 1 || p.Capacities[0].PerSecond != 40 || p.Capacities[0].Label != "capacity 40/s" || p.Runs != 2 {
		t.Fatalf("%d rates, %d CDFs, outages %v, capacities %v, runs %d", len(p.Rates), len(p.CDFs), p.Outages, p.Capacities, p.Runs)
	}
	if want := "fleet default  ·  seeds 1-2  ·  profiles omp-2026-02=50%,omp-2026-06=50%"; p.Heading != want {
		t.Errorf("heading %q, want %q", p.Heading, want)
	}
	gaps := 0
	for i, r := range p.Rates {
		s := &g.Profiles[i]
		var sum int64
		for j, c := range r.Counts {
			sum += c
			if math.Abs(r.PerSecond[j]*r.Width.Seconds()*2-float64(c)) > 1e-9 {
				t.Fatalf("%s bin %d: %v per second over %v, count %d", r.Label, j, r.PerSecond[j], r.Width, c)
			}
		}
		label := s.Profile
		if s.Profile == fleet.AllProfiles {
			label = "all profiles"
		}
		if r.Label != label || r.Runs != 2 || sum != s.WireCalls || sum == 0 || r.Width != s.WireSeries.BinWidth() || (r.Style < 0) != (s.Profile == fleet.AllProfiles) {
			t.Errorf("%s: the bins add up to %d, wire calls %d (%s), style %d", r.Label, sum, s.WireCalls, s.Profile, r.Style)
		}
		if s.Profile == fleet.AllProfiles {
			continue
		}
		c := p.CDFs[i]
		last := c.Fraction[len(c.Fraction)-1]
		if s.Failed > 0 {
			gaps++
		}
		if c.Label != s.Profile || c.Line != i || c.Prompts != s.Prompts || c.Succeeded != s.Succeeded ||
			math.Abs(last-float64(s.Succeeded)/float64(s.Prompts)) > 1e-12 || (last < 1) != (s.Failed+s.Waiting > 0) {
			t.Fatalf("CDF %s line %d ends at %v; %d of %d prompts succeeded", c.Label, c.Line, last, s.Succeeded, s.Prompts)
		}
		k := 0
		for c.Fraction[k]*float64(c.Prompts) < 0.5*float64(c.Succeeded) {
			k++
		}
		if p50 := s.Summarize(g.CapacityPer100ms).P50 / 1000; c.Seconds[k] != p50 {
			t.Errorf("%s: the CDF crosses half the successes at %v s, p50 %v s", c.Label, c.Seconds[k], p50)
		}
		want := share(s.Failed, s.Prompts) + " failed"
		if s.Failed == 0 {
			want = "all succeeded"
		}
		if c.Gap() != want {
			t.Errorf("%s: gap %q, want %q", c.Label, c.Gap(), want)
		}
	}
	if gaps == 0 {
		t.Error("no profile failed a prompt: the gap below 1 is not tested")
	}
}

// TestPanelPerFleet: a sweep over the three ready fleets draws a panel
// each, with its own outages, capacity, time span and heading; a fleet
// without outages says nothing of them.
func TestPanelPerFleet(t *testing.T) {
	res := readyFleets(t)
	d := DataOf(res)
	var names []string
	for _, p := range d.Panels {
		names = append(names, p.Fleet)
	}
	if !slices.Equal(names, []string{"outage-529", "quota-window", "rate-limited"}) {
		t.Fatalf("panels %v", names)
	}
	for i, p := range d.Panels {
		g := &res.Groups[i]
		if len(p.Outages) != len(g.Outages) || (g.CapacityPer100ms > 0) != (len(p.Capacities) == 1) ||
			!strings.HasPrefix(p.Heading, "fleet "+g.Fleet+"  ·  seeds 1  ·  profiles "+g.Mix) {
			t.Errorf("%s: outages %v (group %v), capacities %v (group %v), heading %q", p.Fleet, p.Outages, g.Outages, p.Capacities, g.CapacityPer100ms, p.Heading)
		}
		for _, r := range p.Rates {
			if r.Group != i {
				t.Errorf("%s: line %s of group %d", p.Fleet, r.Label, r.Group)
			}
		}
		if p.Fleet == "rate-limited" && len(p.Outages) != 0 {
			t.Errorf("rate-limited has outages %v", p.Outages)
		}
	}
	// The same profile has the same style in every panel.
	if a, b := d.Panels[0].Rates[0], d.Panels[2].Rates[0]; a.Label != b.Label || a.Style != b.Style {
		t.Errorf("%s style %d, %s style %d", a.Label, a.Style, b.Label, b.Style)
	}
}

// svgStructure is what an SVG image shows, one item a line: every text in
// document order, then each line style (stroke, width, dashes) with the
// number of paths drawn in it.
func svgStructure(svg string) string {
	var b strings.Builder
	for _, m := range regexp.MustCompile(`>([^<>]*)</text>`).FindAllStringSubmatch(svg, -1) {
		b.WriteString("text " + html.UnescapeString(m[1]) + "\n")
	}
	styles := map[string]int{}
	for _, m := range regexp.MustCompile(`<path\s[^>]*style="([^"]*stroke:[^"]*)"`).FindAllStringSubmatch(svg, -1) {
		styles[m[1]]++
	}
	keys := make([]string, 0, len(styles))
	for k := range styles {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "path %s x%d\n", k, styles[k])
	}
	return b.String()
}

// TestGoldenSVG: the chart of the three ready fleets, by its structure
// (panels' titles and axes, tick labels in units, legend entries with the
// failed shares, the peak's mark, line styles) against
// testdata/fleets.golden; -update rewrites it and docs/fleet.md's chart.
func TestGoldenSVG(t *testing.T) {
	res := readyFleets(t)
	var b bytes.Buffer
	if err := Write(&b, res, "svg"); err != nil {
		t.Fatal(err)
	}
	got := svgStructure(b.String())
	golden := filepath.Join("testdata", "fleets.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		writeReadmeChart(t)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestGoldenSVG -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the chart's structure differs from %s (go test -run TestGoldenSVG -update rewrites it):\n%s", golden, lineDiff(string(want), got))
	}
	// What the issue asks of the chart, read from the structure.
	for _, s := range []string{
		"text fleet outage-529  ·  seeds 1  ·  profiles omp-2026-02=50%,omp-2026-06=50%\n",
		"text fleet quota-window  ·  seeds 1  ·  profiles omp-2026-02=50%,omp-2026-06=50%\n",
		"text fleet rate-limited  ·  seeds 1  ·  profiles omp-2026-02=50%,omp-2026-06=50%\n",
		"text wire calls per second in 400 ms bins (outages shaded)\n", "text wire calls per second in 200 ms bins\n",
		"text time since the start (min); 99.9% of the calls sent by its end, the last by 6.2 min\n", "text time since the start (h)\n",
		"text ▲ off the scale: peak 2590/s = 5.18× capacity during an outage\n", "text busiest 200 ms: 150/s at 46 s\n",
		"text 4.02 per prompt\n", "text 1.19 per prompt\n", "text sent in retry-after: 8,347\n",
		"text capacity 500/s\n", "text capacity 50/s\n", "text outage\n",
		"text omp-2026-02: 92.7% failed\n", "text omp-2026-06: all succeeded\n", "text 100%\n",
		"path fill:none;stroke:#0072B2;stroke-width:1.4 x", "path fill:none;stroke:#D55E00;stroke-width:1.4;stroke-dasharray:6,3 x",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("the chart lacks %q", s)
		}
	}
	if n := strings.Count(got, "text outage\n"); n != 2 {
		t.Errorf("%d panels say outage, want 2 (rate-limited has none)", n)
	}
	if n := strings.Count(got, "text time from a prompt to its success, over all "); n != 3 {
		t.Errorf("%d CDF panels, want 3", n)
	}
	if n := strings.Count(got, "peak "); n != 2 {
		t.Errorf("%d peaks marked, want 2 (rate-limited has no outage: its busiest bin is marked)", n)
	}
	if n := strings.Count(got, "text requests per prompt (WIRE/PROMPT)\n"); n != 3 {
		t.Errorf("%d cost panels, want 3", n)
	}
	if strings.Contains(got, ".00\n") {
		t.Errorf("a tick labelled with needless decimals:\n%s", got)
	}
}

// readmeChart is the chart docs/fleet.md shows: fleets/outage-529.yaml over
// seeds 1-2, as a PNG.
func readmeChart(t *testing.T) []byte {
	t.Helper()
	spec, err := fleetspec.Load("../../../fleets/outage-529.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfgs []fleetspec.Config
	for seed := int64(1); seed <= 2; seed++ {
		c := spec.Configs()[0]
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	res, err := sweepConfigs(cfgs, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, res, "png"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// writeReadmeChart writes docs/fleet-chart.png, the chart docs/fleet.md shows.
func writeReadmeChart(t *testing.T) {
	if err := os.WriteFile("../../../docs/fleet-chart.png", readmeChart(t), 0o644); err != nil {
		t.Fatal(err)
	}
}

// lineDiff lists the lines of want missing from got (-) and those of got
// not in want (+).
func lineDiff(want, got string) string {
	var b strings.Builder
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(the same lines in another order)"
	}
	return b.String()
}

// TestTimeTicks: the time axes' units fit the span, and ticks are round
// numbers of that unit.
func TestTimeTicks(t *testing.T) {
	for _, c := range []struct {
		hi     float64
		unit   string
		labels []string
	}{
		{25000, "h", []string{"0", "1", "2", "3", "4", "5", "6"}},
		{600, "min", []string{"0", "2", "4", "6", "8", "10"}},
		{90, "s", []string{"0", "20", "40", "60", "80"}},
		{2.5, "s", []string{"0", "0.5", "1", "1.5", "2", "2.5"}},
	} {
		if u := unitFor(c.hi); u.name != c.unit {
			t.Errorf("%v s: unit %s, want %s", c.hi, u.name, c.unit)
		}
		var labels []string
		for _, tk := range (timeTicks{}).Ticks(0, c.hi) {
			if tk.Value < 0 || tk.Value > c.hi+1e-9 {
				t.Errorf("%v s: tick at %v", c.hi, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.labels) {
			t.Errorf("%v s: ticks %q, want %q", c.hi, labels, c.labels)
		}
	}
	for _, c := range []struct {
		t    float64
		want string
	}{{31, "31 s"}, {190, "3.2 min"}, {3 * 3600, "180 min"}, {5 * 3600, "5 h"}} {
		if got := unitFor(c.t).format(c.t); got != c.want {
			t.Errorf("%v s: %q, want %q", c.t, got, c.want)
		}
	}
}

// TestWrite: a PNG that decodes, an SVG document; a fleet where nothing
// succeeds draws its CDF flat at 0, labelled 100% failed.
func TestWrite(t *testing.T) {
	res := outageSweep(t)
	var b bytes.Buffer
	if err := Write(&b, res, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() < 500 || r.Dy() < 300 {
		t.Fatalf("image of %v", r)
	}
	b.Reset()
	if err := Write(&b, res, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "<svg") || !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") ||
		!strings.Contains(svg, "omp-2026-06") {
		t.Fatalf("not an SVG document of the fleet:\n%.300s", svg)
	}
	if err := Write(&b, res, "gif"); err == nil || !strings.Contains(err.Error(), `unknown image format "gif" (allowed: png, svg)`) {
		t.Fatalf("gif: %v", err)
	}
	c := fleetspec.Default(5)
	c.PromptErrors = fleetspec.PromptErrors{}
	c.Outages = []fleetspec.Outage{{Start: 0, Duration: fleetspec.MaxDuration, Kind: fleetspec.Kind529}}
	none, err := runConfig(c, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := Write(&b, none, "svg"); err != nil {
		t.Fatal(err)
	}
	if got := svgStructure(b.String()); !strings.Contains(got, "text omp-2026-02: 100.0% failed\n") && !strings.Contains(got, ": 100.0% failed\n") {
		t.Fatalf("no success: %s", got)
	}
	b.Reset()
	if err := Write(&b, &fleet.Result{}, "svg"); err != nil || !strings.Contains(b.String(), "no fleet in the result") {
		t.Fatalf("empty result: %v", err)
	}
}

func TestFormatOf(t *testing.T) {
	for _, c := range []struct{ path, want, err string }{
		{"out.png", "png", ""},
		{"dir/OUT.SVG", "svg", ""},
		{"out.jpg", "", `"out.jpg": unknown image format ".jpg" (allowed: a file ending in .png or .svg)`},
		{"out", "", `unknown image format ""`},
	} {
		got, err := FormatOf(c.path)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %q, %v; want %q, %q", c.path, got, err, c.want, c.err)
		}
	}
}

// TestPanelGroups: a fleet run with two profile mixes and an SDK layer
// shares one panel, its lines labelled by what tells the groups apart and
// its heading listing the mixes; another fleet has its own panel, and the
// same line keeps its style there.
func TestPanelGroups(t *testing.T) {
	var cfgs []fleetspec.Config
	for _, name := range []string{"a", "b"} {
		for _, mix := range []fleetspec.Mix{{{Profile: "omp-2026-02", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}, {{Profile: "omp-2026-06", Percent: 100}}} {
			c := fleetspec.Default(20)
			c.Name, c.Profiles = name, mix
			cfgs = append(cfgs, c)
		}
	}
	c := fleetspec.Default(20)
	c.Name, c.SDK = "b", "omp-2026-02"
	cfgs = append(cfgs, c)
	res, err := sweepConfigs(cfgs, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := DataOf(res)
	if len(d.Panels) != 2 {
		t.Fatalf("%d panels", len(d.Panels))
	}
	var labels []string
	for _, r := range d.Panels[0].Rates {
		labels = append(labels, r.Label)
	}
	want := []string{"omp-2026-02=50%,omp-2026-06=50% omp-2026-02", "omp-2026-02=50%,omp-2026-06=50% omp-2026-06",
		"omp-2026-02=50%,omp-2026-06=50% all profiles", "omp-2026-06"}
	if !slices.Equal(labels, want) || len(d.Panels[0].CDFs) != 3 {
		t.Errorf("fleet a: lines %q (want %q), %d CDFs", labels, want, len(d.Panels[0].CDFs))
	}
	if h := d.Panels[0].Heading; h != "fleet a  ·  seeds 1  ·  profiles omp-2026-02=50%,omp-2026-06=50% | omp-2026-06" {
		t.Errorf("heading %q", h)
	}
	b := d.Panels[1]
	if !strings.HasSuffix(b.Heading, "  ·  sdk omp-2026-02") || b.Rates[len(b.Rates)-1].Label != "sdk omp-2026-02 omp-2026-02" ||
		b.Rates[0].Label != "omp-2026-02=50%,omp-2026-06=50% no sdk omp-2026-02" {
		t.Errorf("fleet b: heading %q, first line %q, last %q", b.Heading, b.Rates[0].Label, b.Rates[len(b.Rates)-1].Label)
	}
	if d.Panels[0].Rates[3].Style == d.Panels[0].Rates[0].Style || d.Panels[0].Rates[2].Style != -1 {
		t.Errorf("styles %d %d %d", d.Panels[0].Rates[0].Style, d.Panels[0].Rates[2].Style, d.Panels[0].Rates[3].Style)
	}
}

// TestGap: the label of the prompts below 1.
func TestGap(t *testing.T) {
	for _, c := range []struct {
		c    CDF
		want string
	}{
		{CDF{Prompts: 10, Succeeded: 10}, "all succeeded"},
		{CDF{Prompts: 3000, Succeeded: 218, Failed: 2782}, "92.7% failed"},
		{CDF{Prompts: 1000, Succeeded: 965, Failed: 31, Waiting: 4}, "3.1% failed, 0.4% still waiting"},
		{CDF{Prompts: 100000, Succeeded: 99999, Waiting: 1}, "<0.1% still waiting"},
		{CDF{Prompts: 100000, Succeeded: 1, Failed: 99999}, ">99.9% failed"},
		{CDF{Prompts: 5, Failed: 5}, "100.0% failed"},
	} {
		if got := c.c.Gap(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.c, got, c.want)
		}
	}
}

// tableRow is a row of the fleet's table as --json gives it (the table's
// PEAK_DURING/AFTER, PEAK/CAPACITY, WIRE/PROMPT, 429_OVER_CAP,
// IN_RETRY_AFTER).
type tableRow struct {
	Profile                         string
	PeakDuring, PeakAfter           int64
	PeakDuringRatio, PeakAfterRatio float64
	WireCallsPerPrompt              float64
	Rejected, InRetryAfter          int64
}

// tableOf is res's table by fleet, read from its --json.
func tableOf(t *testing.T, res *fleet.Result) map[string][]tableRow {
	t.Helper()
	data, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Fleets []struct {
			Fleet    string
			Profiles []tableRow
		}
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	rows := map[string][]tableRow{}
	for _, f := range out.Fleets {
		rows[f.Fleet] = append(rows[f.Fleet], f.Profiles...)
	}
	return rows
}

// TestPeakAgreesWithTable: the peak each chart marks is the table's: the
// most calls in 100 ms of the fleet's busiest row (its ten times per
// second) and that row's PEAK/CAPACITY as the table writes it, for the
// ready fleets and a two-seed sweep; a fleet without outage (the table
// measures no peak there) marks its busiest bin, not a peak.
func TestPeakAgreesWithTable(t *testing.T) {
	for _, res := range []*fleet.Result{readyFleets(t), outageSweep(t)} {
		table := tableOf(t, res)
		var svg bytes.Buffer
		if err := Write(&svg, res, "svg"); err != nil {
			t.Fatal(err)
		}
		drawn := svgStructure(svg.String())
		for _, p := range DataOf(res).Panels {
			var best tableRow
			for _, row := range table[p.Fleet] {
				if max(row.PeakDuring, row.PeakAfter) > max(best.PeakDuring, best.PeakAfter) {
					best = row
				}
			}
			calls := max(best.PeakDuring, best.PeakAfter)
			if len(p.Outages) == 0 {
				if p.Peak != nil || calls != 0 {
					t.Errorf("%s: no outage, table peak %d, chart peak %+v", p.Fleet, calls, p.Peak)
				}
				continue
			}
			ratio := best.PeakDuringRatio
			if best.PeakAfter > best.PeakDuring {
				ratio = best.PeakAfterRatio
			}
			if p.Peak == nil || p.Peak.Calls != calls || p.Peak.PerSecond != float64(calls)*10 || p.Peak.Ratio != ratio {
				t.Fatalf("%s: chart peak %+v, table %d calls in 100 ms, PEAK/CAPACITY %.2f", p.Fleet, p.Peak, calls, ratio)
			}
			want := "peak " + strconv.FormatInt(calls*10, 10) + "/s"
			if ratio > 0 {
				want += " = " + strconv.FormatFloat(ratio, 'f', 2, 64) + "× capacity"
			}
			if !strings.Contains(drawn, want) || !strings.Contains(drawn, "("+strconv.FormatInt(calls, 10)+" calls in 100 ms") {
				t.Errorf("%s: the chart does not mark %q (%d calls in 100 ms):\n%s", p.Fleet, want, calls, drawn)
			}
		}
	}
}

// TestTimeAxisEndsWithActivity: a fleet's time axis ends where its
// activity does (99.9% of the busiest line's calls sent, every outage
// over), plus at most 5%, never past its last call; when calls run on past
// it, the axis label says until when. outage-529's last calls come long
// after its wave: its axis ends before them.
func TestTimeAxisEndsWithActivity(t *testing.T) {
	for _, p := range DataOf(readyFleets(t)).Panels {
		pl, err := callsPanel(&p)
		if err != nil {
			t.Fatal(err)
		}
		if pl.X.Max != p.End.Seconds() || p.End > p.LastCall {
			t.Errorf("%s: the axis ends at %v s, End %v, last call %v", p.Fleet, pl.X.Max, p.End, p.LastCall)
		}
		var busiest *Rate
		var total int64
		for i := range p.Rates {
			var n int64
			for _, c := range p.Rates[i].Counts {
				n += c
			}
			if n > total {
				busiest, total = &p.Rates[i], n
			}
		}
		var before int64
		for j, c := range busiest.Counts {
			if time.Duration(j+1)*busiest.Width <= p.End {
				before += c
			}
		}
		if float64(before) < activityShare*float64(total) {
			t.Errorf("%s: %d of %d calls before the axis' end %v", p.Fleet, before, total, p.End)
		}
		for _, o := range p.Outages {
			if o[1] <= p.LastCall && o[1] > p.End {
				t.Errorf("%s: the outage ending at %v is cut by the axis at %v", p.Fleet, o[1], p.End)
			}
		}
		if cut := p.End < p.LastCall; cut != strings.Contains(pl.X.Label.Text, "the last by") {
			t.Errorf("%s: axis to %v, last call %v, label %q", p.Fleet, p.End, p.LastCall, pl.X.Label.Text)
		}
		if p.Fleet == "outage-529" && (p.End > 6*time.Minute || p.LastCall < p.End+30*time.Second) {
			t.Errorf("outage-529: the axis ends at %v, the last call at %v: want the wave's end, well before the last call", p.End, p.LastCall)
		}
	}
}

// TestCostAgreesWithTable: each fleet's cost panel has a bar per row of its
// table, of its WIRE/PROMPT, with its 429_OVER_CAP and IN_RETRY_AFTER
// written beside it; quota-window's shows the fleet's point, 4.02 against
// 1.19 requests per prompt for the same failures.
func TestCostAgreesWithTable(t *testing.T) {
	res := readyFleets(t)
	table := tableOf(t, res)
	var svg bytes.Buffer
	if err := Write(&svg, res, "svg"); err != nil {
		t.Fatal(err)
	}
	drawn := svgStructure(svg.String())
	for _, p := range DataOf(res).Panels {
		rows := table[p.Fleet]
		if len(p.Costs) != len(rows) {
			t.Fatalf("%s: %d bars, %d rows", p.Fleet, len(p.Costs), len(rows))
		}
		for i, c := range p.Costs {
			r := rows[i]
			if c.WirePerPrompt != r.WireCallsPerPrompt || c.OverCapacity != r.Rejected || c.InRetryAfter != r.InRetryAfter {
				t.Errorf("%s %s: bar %+v, table %+v", p.Fleet, c.Label, c, r)
			}
			if want := "text " + strconv.FormatFloat(r.WireCallsPerPrompt, 'f', 2, 64) + " per prompt\n"; !strings.Contains(drawn, want) {
				t.Errorf("%s %s: the chart lacks %q", p.Fleet, c.Label, want)
			}
		}
	}
	for _, want := range []string{"text 4.02 per prompt\n", "text 1.19 per prompt\n"} {
		if !strings.Contains(drawn, want) {
			t.Errorf("quota-window's cost: the chart lacks %q", want)
		}
	}
}

// TestSVGFontFallback: the SVG names Liberation Serif, which the labels
// were measured with, then fonts of the same metrics and a generic family:
// never the one font alone.
func TestSVGFontFallback(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, outageSweep(t), "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if strings.Contains(svg, svgFont) || !strings.Contains(svg, svgFontWithFallback) {
		t.Errorf("the SVG's fonts: %q", regexp.MustCompile(`font-family:[^;]*;`).FindAllString(svg, 3))
	}
}

// TestReadmeChart: docs/fleet.md's chart, docs/fleet-chart.png, is what Write
// draws today (go test -run TestGoldenSVG -update redraws it), and is a PNG.
func TestReadmeChart(t *testing.T) {
	got := readmeChart(t)
	want, err := os.ReadFile("../../../docs/fleet-chart.png")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/fleet-chart.png is not the chart drawn today (%d bytes, drawn %d): cd cmd/retrysim-plot && go test ./fleetplot -run TestGoldenSVG -update", len(want), len(got))
	}
	if _, err := png.Decode(bytes.NewReader(got)); err != nil {
		t.Fatal(err)
	}
}

// TestLabelsDoNotOverlap: in every panel of the ready fleets and of a
// two-seed sweep, as Write lays them out, each text label (the peak's, the
// busiest bin's, the costs') lies inside its panel, clear of the legend
// and of the other labels, measured with the font the image is drawn in.
func TestLabelsDoNotOverlap(t *testing.T) {
	overlap := func(a, b vg.Rectangle) bool {
		return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
	}
	for _, res := range []*fleet.Result{readyFleets(t), outageSweep(t)} {
		d := DataOf(res)
		plots, canvases, err := layout(&d, draw.New(vgimg.New(width, rowHeight*vg.Length(len(d.Panels)))))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for i := range plots {
			for j, pl := range plots[i] {
				area := canvases[i][j]
				dc := pl.DataCanvas(area)
				size := pl.Legend.Rectangle(dc).Size() // drawn at the top right
				legend := vg.Rectangle{Min: vg.Point{X: dc.Max.X - size.X, Y: dc.Max.Y - size.Y}, Max: dc.Max}
				var labels []vg.Rectangle
				for _, b := range pl.GlyphBoxes(pl) {
					if b.Size().X < vg.Points(12) { // a glyph (the peak's ring), not a text
						continue
					}
					at := vg.Point{X: dc.X(b.X), Y: dc.Y(b.Y)}
					labels = append(labels, vg.Rectangle{Min: at.Add(b.Min), Max: at.Add(b.Max)})
				}
				for k, r := range labels {
					checked++
					where := fmt.Sprintf("%s panel %d label %d %v", d.Panels[i].Fleet, j, k, r)
					if r.Min.X < area.Min.X || r.Max.X > area.Max.X || r.Min.Y < area.Min.Y || r.Max.Y > area.Max.Y {
						t.Errorf("%s: outside its panel %v", where, area.Rectangle)
					}
					if size.X > 0 && overlap(r, legend) {
						t.Errorf("%s: over the legend %v", where, legend)
					}
					for _, o := range labels[k+1:] {
						if overlap(r, o) {
							t.Errorf("%s: over the label %v", where, o)
						}
					}
				}
			}
		}
		if checked < 2*len(d.Panels) {
			t.Errorf("%d labels checked in %d panels: the check did not find them", checked, len(d.Panels))
		}
	}
}

// TestSpreadDrawn: a sweep of two seeds draws each row's spread of
// requests per prompt (a whisker across the bar's end, its lowest and
// highest written beside it, as the result holds them) and each profile's
// spread of failed prompts (its legend, a whisker on its plateau holding
// the plateau).
func TestSpreadDrawn(t *testing.T) {
	res := outageSweep(t)
	var svg bytes.Buffer
	if err := Write(&svg, res, "svg"); err != nil {
		t.Fatal(err)
	}
	drawn := svgStructure(svg.String())
	whiskers := 0
	for _, p := range DataOf(res).Panels {
		for _, c := range p.Costs {
			r := &res.Groups[p.Rates[c.Line].Group]
			var want fleet.Spread
			for _, s := range r.Profiles {
				if label := c.Label; s.Profile == label || (s.Profile == fleet.AllProfiles && strings.Contains(label, "all profiles")) {
					want = s.Spread
				}
			}
			if c.Spread != want || want.Runs != 2 || !(want.WirePerPromptMin < want.WirePerPromptMax) {
				t.Errorf("%s: spread %+v, the result's %+v (two seeds that differ)", c.Label, c.Spread, want)
			}
			text := "2 seeds: " + strconv.FormatFloat(want.WirePerPromptMin, 'f', 2, 64) + " to " + strconv.FormatFloat(want.WirePerPromptMax, 'f', 2, 64) + "\n"
			if !strings.Contains(drawn, text) {
				t.Errorf("%s: the chart lacks %q", c.Label, text)
			}
			whiskers++
		}
		for _, c := range p.CDFs {
			if c.Spread.FailedShareMax == 0 {
				continue
			}
			if want := c.Label + ": " + c.Gap() + "; 2 seeds " + percent(c.Spread.FailedShareMin) + " to " + percent(c.Spread.FailedShareMax); !strings.Contains(drawn, "text "+want+"\n") {
				t.Errorf("the chart lacks the legend %q", want)
			}
			end := c.Fraction[len(c.Fraction)-1]
			if lo, hi := c.PlateauSpread(); !(lo <= end && end <= hi && lo < hi) {
				t.Errorf("%s: the plateau %v, its whisker %v to %v", c.Label, end, lo, hi)
			}
		}
	}
	// A whisker is three strokes (its bar and two caps) of 1.2 points.
	n := 0
	for _, m := range regexp.MustCompile(`path \S*stroke-width:1.2\S* x(\d+)`).FindAllStringSubmatch(drawn, -1) {
		k, _ := strconv.Atoi(m[1])
		n += k
	}
	if whiskers == 0 || n != 3*whiskers {
		t.Errorf("%d strokes of the cost whiskers, want 3 for each of %d rows:\n%s", n, whiskers, drawn)
	}
}
