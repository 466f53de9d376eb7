// Package fleetplot draws a fleet's result (package fleet) with
// gonum.org/v1/plot: one image of two panels, the wire calls per second
// over time per profile with the outage windows shaded, and the CDF of the
// time to success per profile (SPEC.md §15.7). It draws from the result's
// fixed-size counters only (fleet.Series, fleet.Histogram), so a merged
// sweep or merged shards plot like one run.
package fleetplot

import (
	"fmt"
	"image/color"
	"io"

	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
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

// Rate is one line of the calls panel: a profile's wire calls per bin of
// its series and per second.
type Rate struct {
	Label string
	// Group is the index of its group in the result (lines of one group
	// share a dash pattern).
	Group int
	// Width is the bins' width; bin i is [i×Width, (i+1)×Width).
	Width time.Duration
	// Runs is the number of runs (seeds) merged into the group.
	Runs int
	// Counts are the wire calls per bin, over every run, up to the last
	// bin of any line with a call; PerSecond is the mean per run: the
	// counts over the width in seconds and over Runs.
	Counts    []int64
	PerSecond []float64
}

// CDF is one line of the time-to-success panel: for each non-empty
// histogram bucket, its upper bound in seconds (the maximum for the last)
// and the fraction of the successes at or below it.
type CDF struct {
	Label string
	// Line is the index of the profile's Rate (drawn in the same color).
	Line              int
	Seconds, Fraction []float64
}

// Data is what the image shows.
type Data struct {
	Rates []Rate
	CDFs  []CDF // the profiles with at least one success
	// Outages are the windows shaded, [start, end), without repeats.
	Outages [][2]time.Duration
}

// DataOf is the data drawn for res: a line per profile of each group (not
// the "all" rows), labelled by the profile and, when res has several
// groups, by what tells them apart (fleet, mix, SDK).
func DataOf(res *fleet.Result) Data {
	var d Data
	varies := func(f func(g *fleet.Group) string) bool {
		for i := range res.Groups {
			if f(&res.Groups[i]) != f(&res.Groups[0]) {
				return true
			}
		}
		return false
	}
	fleets := varies(func(g *fleet.Group) string { return g.Fleet })
	mixes := varies(func(g *fleet.Group) string { return g.Mix })
	sdks := varies(func(g *fleet.Group) string { return g.SDK })
	last := 0 // bins to show: up to the last non-empty one of any line
	for gi := range res.Groups {
		g := &res.Groups[gi]
		for _, o := range g.Outages {
			w := [2]time.Duration{o.Start, o.End()}
			if !slices.Contains(d.Outages, w) {
				d.Outages = append(d.Outages, w)
			}
		}
		var parts []string
		if fleets {
			parts = append(parts, g.Fleet)
		}
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
		for pi := range g.Profiles {
			s := &g.Profiles[pi]
			if s.Profile == fleet.AllProfiles {
				continue
			}
			label := strings.Join(append(slices.Clone(parts), s.Profile), " ")
			ser := &s.WireSeries
			n := len(ser.Counts)
			for n > 0 && ser.Counts[n-1] == 0 {
				n--
			}
			last = max(last, n)
			d.Rates = append(d.Rates, Rate{Label: label, Group: gi, Runs: max(1, len(g.Seeds)), Width: ser.BinWidth(), Counts: ser.Counts[:]})
			if c, ok := cdfOf(&s.TimeToSuccess); ok {
				c.Label, c.Line = label, len(d.Rates)-1
				d.CDFs = append(d.CDFs, c)
			}
		}
	}
	for i := range d.Rates {
		r := &d.Rates[i]
		r.Counts = slices.Clone(r.Counts[:min(last+1, len(r.Counts))])
		r.PerSecond = make([]float64, len(r.Counts))
		for j, c := range r.Counts {
			r.PerSecond[j] = float64(c) / r.Width.Seconds() / float64(r.Runs)
		}
	}
	return d
}

// cdfOf is h's CDF; false when h is empty.
func cdfOf(h *fleet.Histogram) (CDF, bool) {
	if h.N == 0 {
		return CDF{}, false
	}
	var c CDF
	var seen uint64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		seen += n
		upper := min(time.Duration(fleet.BucketUpperMs(i))*time.Millisecond, h.Max)
		c.Seconds = append(c.Seconds, upper.Seconds())
		c.Fraction = append(c.Fraction, float64(seen)/float64(h.N))
	}
	return c, true
}

// Image size.
const (
	width  = 8 * vg.Inch
	height = 9 * vg.Inch
)

// Write draws res in format ("png" or "svg": FormatOf) to w: the calls
// panel above the CDF panel.
func Write(w io.Writer, res *fleet.Result, format string) error {
	d := DataOf(res)
	calls, err := callsPanel(&d)
	if err != nil {
		return err
	}
	cdf, err := cdfPanel(&d)
	if err != nil {
		return err
	}
	var c vg.CanvasWriterTo
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	case "svg":
		c = vgsvg.New(width, height)
	default:
		return fmt.Errorf("unknown image format %q (allowed: %s)", format, strings.Join(Formats, ", "))
	}
	plots := [][]*plot.Plot{{calls}, {cdf}}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2, PadY: vg.Millimeter * 6}
	canvases := plot.Align(plots, tiles, draw.New(c))
	calls.Draw(canvases[0][0])
	cdf.Draw(canvases[1][0])
	_, err = c.WriteTo(w)
	return err
}

// style gives line i of d its color, and its group's dash pattern.
func style(d *Data, i int, l *plotter.Line) {
	l.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
	l.Dashes = plotutil.Dashes(d.Rates[i].Group)
	l.Width = vg.Points(1.2)
}

// outageColor shades the outage windows.
var outageColor = color.NRGBA{R: 230, G: 80, B: 60, A: 50}

func callsPanel(d *Data) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Wire calls per second (outages shaded)"
	for _, r := range d.Rates {
		if r.Runs > 1 {
			p.Title.Text = "Wire calls per second, mean of the seeds (outages shaded)"
			break
		}
	}
	p.X.Label.Text = "time (s)"
	p.Y.Label.Text = "calls/s"
	p.Legend.Top = true
	top := 1.0
	for _, r := range d.Rates {
		for _, v := range r.PerSecond {
			top = max(top, v)
		}
	}
	for _, o := range d.Outages {
		a, b := o[0].Seconds(), o[1].Seconds()
		poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: 0}, {X: b, Y: 0}, {X: b, Y: top}, {X: a, Y: top}})
		if err != nil {
			return nil, err
		}
		poly.Color = outageColor
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	for i, r := range d.Rates {
		xys := make(plotter.XYs, len(r.PerSecond)+1)
		for j, v := range r.PerSecond {
			xys[j] = plotter.XY{X: (time.Duration(j) * r.Width).Seconds(), Y: v}
		}
		end := len(r.PerSecond)
		xys[end] = plotter.XY{X: (time.Duration(end) * r.Width).Seconds(), Y: 0}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		style(d, i, l)
		p.Add(l)
		p.Legend.Add(r.Label, l)
	}
	return p, nil
}

func cdfPanel(d *Data) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "Time to success, CDF"
	p.X.Label.Text = "time from prompt to success (s)"
	p.Y.Label.Text = "fraction of successes"
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = false
	p.Legend.Left = false
	if len(d.CDFs) == 0 {
		p.Title.Text += ": no prompt succeeded"
		p.X.Min, p.X.Max = 0, 1
	}
	for _, c := range d.CDFs {
		xys := make(plotter.XYs, 0, len(c.Seconds)+1)
		xys = append(xys, plotter.XY{X: 0, Y: 0})
		for j := range c.Seconds {
			xys = append(xys, plotter.XY{X: c.Seconds[j], Y: c.Fraction[j]})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		style(d, c.Line, l)
		p.Add(l)
		p.Legend.Add(c.Label, l)
	}
	return p, nil
}
