// Package fleetplot draws a fleet's result (package fleet) with
// gonum.org/v1/plot (SPEC.md §15.7): a row of three panels per fleet, the
// wire calls per second over time per profile (the provider's capacity a
// line, the fleet's outage windows shaded, the table's peak marked), the
// CDF of the time from a prompt to its success over every prompt (the
// failed and still-waiting prompts the gap below 100 %, their share in the
// legend), and each row's requests per prompt with its 429s. It draws from the result's fixed-size counters only
// (fleet.Series, fleet.Histogram), so a merged sweep or merged shards plot
// like one run.
package fleetplot

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/internal/imageformat"
)

// Formats are the image formats Write writes, by file extension.
var Formats = imageformat.Formats

// FormatOf is the format of an image file by its extension (".png" or
// ".svg", any case); another extension is an error saying which are
// allowed.
func FormatOf(path string) (string, error) { return imageformat.Of(path) }

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
	panelOf := map[string]int{}
	styles := map[string]int{}
	styleOf := func(key string) int {
		if s, ok := styles[key]; ok {
			return s
		}
		styles[key] = len(styles)
		return styles[key]
	}
	for gi := range res.Groups {
		g := &res.Groups[gi]
		pi, ok := panelOf[g.Fleet]
		if !ok {
			pi = len(d.Panels)
			panelOf[g.Fleet] = pi
			d.Panels = append(d.Panels, Panel{Fleet: g.Fleet})
		}
		_ = pi
	}
	// What tells a fleet's groups apart.
	for pi := range d.Panels {
		p := &d.Panels[pi]
		var groups []*fleet.Group
		var index []int
		for gi := range res.Groups {
			if res.Groups[gi].Fleet == p.Fleet {
				groups = append(groups, &res.Groups[gi])
				index = append(index, gi)
			}
		}
		varies := func(f func(g *fleet.Group) string) bool {
			for _, g := range groups {
				if f(g) != f(groups[0]) {
					return true
				}
			}
			return false
		}
		mixes := varies(func(g *fleet.Group) string { return g.Mix })
		sdks := varies(func(g *fleet.Group) string { return g.SDK })
		var seeds, mixList, sdkList []string
		for k, g := range groups {
			gi := index[k]
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
					style = styleOf(label)
				}
				ser := &s.WireSeries
				p.Rates = append(p.Rates, Rate{Label: label, Group: gi, Style: style, Runs: runs, Width: ser.BinWidth(), Counts: ser.Counts[:]})
				sum := s.Summarize(g.CapacityPer100ms)
				p.Costs = append(p.Costs, Cost{Label: label, Line: len(p.Rates) - 1, WirePerPrompt: sum.WireCallsPerPrompt,
					OverCapacity: s.Rejected, InRetryAfter: s.InRetryAfter})
				if calls := max(s.PeakDuring, s.PeakAfter); len(g.Outages) > 0 && calls > 0 && (p.Peak == nil || calls > p.Peak.Calls) {
					ratio := sum.PeakDuringRatio
					if s.PeakAfter > s.PeakDuring {
						ratio = sum.PeakAfterRatio
					}
					p.Peak = &Peak{Label: label, Line: len(p.Rates) - 1, Calls: calls, PerSecond: float64(calls) * 10,
						Ratio: ratio, After: s.PeakAfter > s.PeakDuring}
				}
				if s.Profile == fleet.AllProfiles {
					continue
				}
				c := cdfOf(s)
				c.Label, c.Line = label, len(p.Rates)-1
				p.CDFs = append(p.CDFs, c)
			}
		}
		heading := []string{"fleet " + p.Fleet, "seeds " + strings.Join(seeds, " | "), "profiles " + strings.Join(mixList, " | ")}
		if len(sdkList) > 0 {
			heading = append(heading, "sdk "+strings.Join(sdkList, " | "))
		}
		p.Heading = strings.Join(heading, "  ·  ")
		last := 0 // bins to show: up to the last non-empty one of any line
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
		if p.Peak != nil {
			p.Peak.At = busiestIn(&p.Rates[p.Peak.Line], p.Outages, p.Peak.After)
		}
		p.End, p.LastCall = activityEnd(p)
	}
	return d
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
	c := CDF{Prompts: s.Prompts, Succeeded: s.Succeeded, Failed: s.Failed, Waiting: s.Waiting}
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

// Palette is the lines' colors: Okabe and Ito's, distinct to the
// colour-blind (yellow last: faint on white).
var Palette = []color.Color{
	color.NRGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.NRGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.NRGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.NRGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.NRGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.NRGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.NRGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.NRGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

// Dashes are the lines' dash patterns (in points), one per line alongside
// its color, so that lines differ without color too.
var Dashes = [][]float64{
	nil,                    // solid
	{6, 3},                 // dashed
	{1.5, 2},               // dotted
	{8, 2.5, 1.5, 2.5},     // dash-dot
	{12, 3},                // long dash
	{6, 2, 1.5, 2, 1.5, 2}, // dash-dot-dot
}

// Image size: a row per fleet.
const (
	width      = 17 * vg.Inch
	rowHeight  = 4.4 * vg.Inch
	headingPad = 9 * vg.Millimeter
)

// Write draws res in format ("png" or "svg": FormatOf) to w: a row per
// fleet, its calls panel beside its CDF panel, under a heading naming the
// fleet, its seeds and profiles.
func Write(w io.Writer, res *fleet.Result, format string) error {
	d := DataOf(res)
	rows := max(1, len(d.Panels))
	height := rowHeight * vg.Length(rows)
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	case "svg":
		c = vgsvg.New(width, height)
	default:
		return fmt.Errorf("unknown image format %q (allowed: %s)", format, strings.Join(Formats, ", "))
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	if len(d.Panels) == 0 {
		sty := headingStyle()
		dc.FillText(sty, vg.Point{X: width / 2, Y: height / 2}, "no fleet in the result")
		_, err := c.WriteTo(w)
		return err
	}
	plots, canvases, err := layout(&d, dc)
	if err != nil {
		return err
	}
	sty := headingStyle()
	for i := range d.Panels {
		top := canvases[i][0].Max.Y
		dc.FillText(sty, vg.Point{X: width / 2, Y: top + headingPad/2}, d.Panels[i].Heading)
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	if format != "svg" {
		_, err := c.WriteTo(w)
		return err
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return err
	}
	_, err = w.Write(bytes.ReplaceAll(b.Bytes(), []byte(svgFont), []byte(svgFontWithFallback)))
	return err
}

// layout makes d's plots, a row of three per panel, and the canvases of dc
// they are drawn in.
func layout(d *Data, dc draw.Canvas) ([][]*plot.Plot, [][]draw.Canvas, error) {
	plots := make([][]*plot.Plot, len(d.Panels))
	for i := range d.Panels {
		for _, panel := range []func(*Panel) (*plot.Plot, error){callsPanel, cdfPanel, costPanel} {
			pl, err := panel(&d.Panels[i])
			if err != nil {
				return nil, nil, err
			}
			plots[i] = append(plots[i], pl)
		}
	}
	tiles := draw.Tiles{Rows: len(d.Panels), Cols: 3, PadTop: headingPad, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 4, PadX: vg.Millimeter * 8, PadY: headingPad + vg.Millimeter*4}
	return plots, plot.Align(plots, tiles, dc), nil
}

// The SVG names the font the text was measured with, Liberation Serif
// (plot.DefaultFont, compiled in); a viewer without it falls back to Times
// New Roman, which has the same metrics (Liberation's design), then Times,
// then any serif, so that the labels keep their places.
const (
	svgFont             = "font-family:Liberation Serif;"
	svgFontWithFallback = "font-family:'Liberation Serif','Times New Roman',Times,serif;"
)

// headingStyle is the style of a row's heading: bold, centered.
func headingStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(font.Font{Typeface: plot.DefaultFont.Typeface, Variant: plot.DefaultFont.Variant, Weight: xfont.WeightBold}, 14),
		XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
}

// style gives a line its color and dash pattern.
func style(s int, l *draw.LineStyle) {
	if s < 0 { // the sum of a group's profiles
		l.Color = color.NRGBA{0x80, 0x80, 0x80, 0xff}
		l.Width = vg.Points(0.8)
		return
	}
	l.Color = Palette[s%len(Palette)]
	for _, v := range Dashes[s%len(Dashes)] {
		l.Dashes = append(l.Dashes, vg.Points(v))
	}
	l.Width = vg.Points(1.4)
}

// outageColor shades the outage windows.
var outageColor = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 60}

// legendRoom is the share of a panel's height above the data kept for a
// legend of n entries, so that the legend covers no line.
func legendRoom(n int) float64 { return min(0.6, 0.075*float64(n)+0.04) }

func callsPanel(p *Panel) (*plot.Plot, error) {
	pl := plot.New()
	title := "wire calls per second"
	var width time.Duration
	for _, r := range p.Rates {
		width = max(width, r.Width)
	}
	if width > 0 {
		title += " in " + durationText(width) + " bins"
	}
	if p.Runs > 1 {
		title += ", mean of " + strconv.Itoa(p.Runs) + " seeds"
	}
	end := p.End.Seconds()
	busiest, busiestAt := 0.0, 0.0 // the highest bin of any line drawn
	for _, r := range p.Rates {
		for j, v := range r.PerSecond {
			if at := (time.Duration(j)*r.Width + r.Width/2).Seconds(); v > busiest && at < end {
				busiest, busiestAt = v, at
			}
		}
	}
	top := max(busiest, 1)
	for _, c := range p.Capacities {
		top = max(top, c.PerSecond)
	}
	// The peak is one seed's busiest 100 ms, the lines the seeds' mean over
	// wider bins: one far above them is marked at the top, off the scale,
	// rather than squash the lines.
	offScale := p.Peak != nil && p.Peak.PerSecond > offScaleFactor*top
	if p.Peak != nil && !offScale {
		top = max(top, p.Peak.PerSecond)
	}
	entries := len(p.Rates) + len(p.Capacities)
	var shaded bool
	for _, o := range p.Outages {
		if o[0].Seconds() < end {
			shaded = true
		}
	}
	if shaded {
		entries++
		title += " (outages shaded)"
	}
	ymax := top / (1 - legendRoom(entries))
	pl.Title.Text = title
	u := unitFor(end)
	pl.X.Label.Text = "time since the start (" + u.name + ")"
	if p.LastCall > p.End {
		pl.X.Label.Text += "; " + strconv.FormatFloat(100*activityShare, 'f', -1, 64) + "% of the calls sent by its end, the last by " + unitFor(p.LastCall.Seconds()).format(p.LastCall.Seconds())
	}
	pl.X.Min, pl.X.Max = 0, end
	pl.X.Tick.Marker = timeTicks{}
	pl.Y.Label.Text = "calls/s"
	pl.Y.Min, pl.Y.Max = 0, ymax
	pl.Y.Tick.Marker = upTo{top}
	pl.Legend.Top = true
	for k, o := range p.Outages {
		a, b := o[0].Seconds(), min(o[1].Seconds(), end)
		if a >= end {
			continue
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: 0}, {X: b, Y: 0}, {X: b, Y: ymax}, {X: a, Y: ymax}})
		if err != nil {
			return nil, err
		}
		poly.Color = outageColor
		poly.LineStyle.Width = 0
		pl.Add(poly)
		if k == 0 {
			pl.Legend.Add("outage", poly)
		}
	}
	for _, c := range p.Capacities {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: c.PerSecond}, {X: end, Y: c.PerSecond}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Black
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(4)}
		pl.Add(l)
		pl.Legend.Add(c.Label, l)
	}
	for _, r := range p.Rates {
		var xys plotter.XYs
		for j, v := range r.PerSecond {
			x := (time.Duration(j) * r.Width).Seconds()
			if x >= end {
				break
			}
			xys = append(xys, plotter.XY{X: x, Y: v})
		}
		xys = append(xys, plotter.XY{X: min(end, (time.Duration(len(xys))*r.Width).Seconds()), Y: 0})
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		style(r.Style, &l.LineStyle)
		pl.Add(l)
		pl.Legend.Add(r.Label, l)
	}
	at, value, label := busiestAt, busiest, ""
	if p.Peak != nil {
		at, value, label = p.Peak.At.Seconds(), p.Peak.PerSecond, p.Peak.Text(p.Runs)
		if offScale {
			value, label = top, "▲ off the scale: "+label
		}
		// A thin line from the axis up to the mark: where the spike is.
		guide, err := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: value}})
		if err != nil {
			return nil, err
		}
		guide.Color = color.Black
		guide.Width = vg.Points(0.5)
		guide.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		pl.Add(guide)
	} else if busiest > 0 {
		label = "busiest " + durationText(width) + ": " + number(busiest) + "/s at " + unitFor(end).format(busiestAt)
	}
	if label != "" {
		// A spike narrower than a pixel stays readable: a ring (a triangle
		// off the scale) and its value, the text hanging below it (the
		// legend's room is above).
		s, err := plotter.NewScatter(plotter.XYs{{X: at, Y: value}})
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Shape = draw.RingGlyph{}
		if offScale {
			s.GlyphStyle.Shape = draw.TriangleGlyph{}
		}
		s.GlyphStyle.Radius = vg.Points(3)
		pl.Add(s)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: at, Y: value}}, Labels: []string{label}})
		if err != nil {
			return nil, err
		}
		lb.TextStyle[0].YAlign = draw.YTop
		lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(-2)}
		if at > end*0.5 {
			lb.TextStyle[0].XAlign = draw.XRight
			lb.Offset.X = -vg.Points(5)
		}
		pl.Add(lb)
	}
	return pl, nil
}

// Text is the peak's label: "peak 2810/s = 5.62× capacity during an
// outage (281 calls in 100 ms, the busiest of 20 seeds)".
func (pk *Peak) Text(runs int) string {
	t := "peak " + number(pk.PerSecond) + "/s"
	if pk.Ratio > 0 {
		t += " = " + strconv.FormatFloat(pk.Ratio, 'f', 2, 64) + "× capacity"
	}
	if pk.After {
		t += " after an outage"
	} else {
		t += " during an outage"
	}
	t += "\n(" + strconv.FormatInt(pk.Calls, 10) + " calls in 100 ms"
	if runs > 1 {
		t += ", the busiest of " + strconv.Itoa(runs) + " seeds"
	}
	if pk.Label != "" && !strings.Contains(pk.Label, "all profiles") {
		t += ", " + pk.Label
	}
	return t + ")"
}

// durationText writes a bin's width: "100 ms", "1.6 s", "3.4 min".
func durationText(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	}
	return unitFor(d.Seconds()).format(d.Seconds())
}

// costPanel draws what each row cost the provider: its requests per
// prompt as a bar, with its 429s over capacity and its retries sent inside
// a retry-after window written beside it.
func costPanel(p *Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = "requests per prompt (WIRE/PROMPT)"
	pl.X.Label.Text = "requests sent per prompt"
	pl.Legend.Top = true
	most := 0.0
	var names []string
	n := len(p.Costs)
	for i, c := range p.Costs {
		most = max(most, c.WirePerPrompt)
		names = append(names, c.Label)
		// The first row at the top.
		pos := float64(n - 1 - i)
		bar, err := plotter.NewBarChart(plotter.Values{c.WirePerPrompt}, vg.Points(14))
		if err != nil {
			return nil, err
		}
		bar.Horizontal = true
		bar.XMin = pos
		var ls draw.LineStyle
		style(p.Rates[c.Line].Style, &ls)
		bar.Color = ls.Color
		bar.LineStyle.Width = 0
		pl.Add(bar)
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: c.WirePerPrompt, Y: pos}},
			Labels: []string{strconv.FormatFloat(c.WirePerPrompt, 'f', 2, 64) + " per prompt\n429 over capacity: " +
				thousands(c.OverCapacity) + "\nsent in retry-after: " + thousands(c.InRetryAfter)}})
		if err != nil {
			return nil, err
		}
		lb.TextStyle[0].YAlign = draw.YCenter
		lb.Offset = vg.Point{X: vg.Points(4)}
		pl.Add(lb)
	}
	slices.Reverse(names)
	pl.NominalY(names...)
	pl.X.Min, pl.X.Max = 0, max(most, 1)*2.2 // room for the text right of the longest bar
	pl.X.Tick.Marker = upTo{max(most, 1)}
	pl.Y.Min, pl.Y.Max = -0.7, float64(n)-0.3
	return pl, nil
}

// thousands writes n with a comma every three digits: 167,939.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func cdfPanel(p *Panel) (*plot.Plot, error) {
	pl := plot.New()
	var prompts int64
	end := 0.0
	for _, c := range p.CDFs {
		prompts += c.Prompts
		if n := len(c.Seconds); n > 0 {
			end = max(end, c.Seconds[n-1])
		}
	}
	end = max(end*1.05, 1)
	pl.Title.Text = "time from a prompt to its success, over all " + strconv.FormatInt(prompts, 10) + " prompts"
	u := unitFor(end)
	pl.X.Label.Text = "time to success (" + u.name + ")"
	pl.X.Min, pl.X.Max = 0, end
	pl.X.Tick.Marker = timeTicks{}
	pl.Y.Label.Text = "prompts succeeded (gap: failed or waiting)"
	pl.Y.Min, pl.Y.Max = 0, 1/(1-legendRoom(len(p.CDFs)+1))
	pl.Y.Tick.Marker = percentTicks{}
	pl.Legend.Top = true
	full, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: end, Y: 1}})
	if err != nil {
		return nil, err
	}
	full.Color = color.NRGBA{0x80, 0x80, 0x80, 0xff}
	full.Width = vg.Points(0.5)
	pl.Add(full)
	pl.Legend.Add("every prompt (100%)", full)
	for _, c := range p.CDFs {
		xys := plotter.XYs{{X: 0, Y: 0}}
		for j := range c.Seconds {
			xys = append(xys, plotter.XY{X: c.Seconds[j], Y: c.Fraction[j]})
		}
		xys = append(xys, plotter.XY{X: end, Y: xys[len(xys)-1].Y}) // the plateau: the gap below 1
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		style(p.Rates[c.Line].Style, &l.LineStyle)
		pl.Add(l)
		pl.Legend.Add(c.Label+": "+c.Gap(), l)
	}
	return pl, nil
}

// unit is a time axis' unit.
type unit struct {
	name    string
	seconds float64
}

// unitFor is the unit of an axis spanning span seconds: s up to 3
// minutes, min up to 3 hours, h above.
func unitFor(span float64) unit {
	switch {
	case span <= 180:
		return unit{"s", 1}
	case span <= 3*3600:
		return unit{"min", 60}
	}
	return unit{"h", 3600}
}

// format writes t seconds in the unit, with its name: "35 s", "2.5 min".
func (u unit) format(t float64) string {
	return strconv.FormatFloat(roundTo(t/u.seconds, 2), 'f', -1, 64) + " " + u.name
}

// roundTo rounds v to n significant digits.
func roundTo(v float64, n int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(n-1)-math.Floor(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// timeTicks are a time axis' ticks (in seconds) at round steps of the
// unit that fits the axis' span (unitFor), labelled in that unit.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	u := unitFor(hi - lo)
	return niceTicks(lo/u.seconds, hi/u.seconds, func(v float64) float64 { return v * u.seconds }, func(v float64) string {
		return strconv.FormatFloat(v, 'f', -1, 64)
	})
}

// upTo are the default ticks of a value axis, none above max (the room
// above it is the legend's).
type upTo struct{ max float64 }

// Ticks implements plot.Ticker.
func (t upTo) Ticks(lo, hi float64) []plot.Tick {
	return niceTicks(lo, min(hi, t.max), func(v float64) float64 { return v }, func(v float64) string {
		return strconv.FormatFloat(v, 'f', -1, 64)
	})
}

// percentTicks are a fraction axis' ticks, 0 to 100 %.
type percentTicks struct{}

// Ticks implements plot.Ticker.
func (percentTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for i := 0; i <= 20; i++ {
		v := float64(i) / 20
		label := ""
		if i%5 == 0 {
			label = strconv.Itoa(i*5) + "%"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// niceTicks are ticks from lo to hi (in an axis' unit) at a step of 1, 2
// or 5 times a power of ten giving 4 to 10 labelled ticks, with a minor
// tick between; value converts a tick to the axis' value, label writes it.
func niceTicks(lo, hi float64, value func(float64) float64, label func(float64) string) []plot.Tick {
	span := hi - lo
	if !(span > 0) {
		return []plot.Tick{{Value: value(lo), Label: label(lo)}}
	}
	step := math.Pow(10, math.Floor(math.Log10(span/4)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= 8 {
			step *= m
			break
		}
	}
	var ticks []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for i := 0; ; i++ {
		v := first + float64(i)*step/2
		if v > hi+step*1e-9 {
			break
		}
		v = roundTo(v, 12)
		t := plot.Tick{Value: value(v)}
		if i%2 == 0 {
			t.Label = label(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}
