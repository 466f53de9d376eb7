// Package tuneplot draws a tune's report (package tune) with
// gonum.org/v1/plot (SPEC.md §15.11): a panel per objective after the
// first, that objective across against the first (the share of prompts
// that fail, by default) up, each point a confirmed candidate's worst case
// over the seeds: the candidates off the front in grey, the front in blue,
// the chosen point ringed, and every named profile a labelled red
// triangle. It is a package of its own, drawn by the command
// retrysim-plot, so that retrysim links no chart library.
package tuneplot

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/internal/chart"
	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/tune"
)

const (
	panelWidth  = 5.2 * vg.Inch
	panelHeight = 4.6 * vg.Inch
	headingPad  = 12 * vg.Millimeter
	maxCols     = 3
)

var (
	grey   = color.NRGBA{0xa0, 0xa0, 0xa0, 0xff}
	blue   = color.NRGBA{0x1f, 0x5f, 0xbf, 0xff}
	red    = color.NRGBA{0xd6, 0x27, 0x28, 0xff}
	green  = color.NRGBA{0x2c, 0xa0, 0x2c, 0xff}
	labelC = color.NRGBA{0x80, 0x10, 0x10, 0xff}
)

// Write draws r in format ("png" or "svg") to w.
func Write(w io.Writer, r *tune.Report, format string) error {
	if len(r.Objectives) < 2 {
		return fmt.Errorf("a chart needs two objectives or more (the report has %d)", len(r.Objectives))
	}
	n := len(r.Objectives) - 1
	cols := min(n, maxCols)
	rows := (n + cols - 1) / cols
	width, height := panelWidth*vg.Length(cols), panelHeight*vg.Length(rows)+headingPad
	c, dc, err := chart.Canvas(format, width, height)
	if err != nil {
		return err
	}
	plots := make([][]*plot.Plot, rows)
	for k := range n {
		p, err := panel(r, k+1)
		if err != nil {
			return err
		}
		plots[k/cols] = append(plots[k/cols], p)
	}
	for len(plots[rows-1]) < cols {
		plots[rows-1] = append(plots[rows-1], nil)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadTop: headingPad, PadBottom: vg.Millimeter * 2,
		PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 4, PadX: vg.Millimeter * 10, PadY: vg.Millimeter * 8}
	canvases := plot.Align(plots, tiles, dc)
	heading := fmt.Sprintf("tune %s: %d confirmed of %d candidates, seeds %s; front %d, chosen #%d",
		r.Fleet, r.Counts.Confirmed, len(r.Candidates), fleet.SeedsText(r.Seeds), len(r.Front), r.Chosen)
	dc.FillText(chart.HeadingStyle(), vg.Point{X: width / 2, Y: height - headingPad/2}, heading)
	for i := range plots {
		for j, p := range plots[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	_, err = c.WriteTo(w)
	return err
}

// panel is objective o across, the first objective up.
func panel(r *tune.Report, o int) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = axisLabel(r.Objectives[o])
	p.Y.Label.Text = axisLabel(r.Objectives[0])
	p.Legend.Top = true
	xy := func(v tune.Vec) (plotter.XY, bool) {
		x, y := scale(r.Objectives[o], v[o]), scale(r.Objectives[0], v[0])
		return plotter.XY{X: x, Y: y}, !math.IsInf(x, 0) && !math.IsInf(y, 0)
	}
	var off, front, chosen plotter.XYs
	for i := range r.Candidates {
		c := &r.Candidates[i]
		if c.Pruned {
			continue
		}
		pt, ok := xy(c.Worst)
		if !ok {
			continue
		}
		switch {
		case c.Front:
			front = append(front, pt)
		default:
			off = append(off, pt)
		}
		if c.ID == r.Chosen {
			chosen = append(chosen, pt)
		}
	}
	add := func(pts plotter.XYs, shape draw.GlyphDrawer, col color.Color, radius vg.Length, name string) error {
		if len(pts) == 0 {
			return nil
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: radius, Shape: shape}
		p.Add(s)
		p.Legend.Add(name, s)
		return nil
	}
	if err := add(off, draw.CircleGlyph{}, grey, vg.Points(2.5), "confirmed, off the front"); err != nil {
		return nil, err
	}
	if err := add(front, draw.CircleGlyph{}, blue, vg.Points(3.5), "the front"); err != nil {
		return nil, err
	}
	if err := add(chosen, draw.RingGlyph{}, green, vg.Points(7), "chosen"); err != nil {
		return nil, err
	}
	// profiles: one triangle and one label per position (profiles alike
	// on these two objectives share it)
	var pts plotter.XYs
	var names []string
	for _, pl := range r.Profiles {
		if pl.Error != "" {
			continue
		}
		pt, ok := xy(pl.Worst)
		if !ok {
			continue
		}
		if i := slices.Index(pts, pt); i >= 0 {
			names[i] += ", " + pl.Profile
			continue
		}
		pts, names = append(pts, pt), append(names, pl.Profile)
	}
	if err := add(pts, draw.TriangleGlyph{}, red, vg.Points(3.5), "named profiles"); err != nil {
		return nil, err
	}
	if len(pts) > 0 {
		l, err := plotter.NewLabels(plotter.XYLabels{XYs: pts, Labels: names})
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].Color = labelC
			l.TextStyle[i].Font.Size = vg.Points(7)
		}
		l.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(2)}
		p.Add(l)
	}
	p.Add(plotter.NewGrid())
	// room above the points for the legend, and right of them for labels
	p.Y.Max += 0.3 * (p.Y.Max - p.Y.Min)
	p.X.Max += 0.15 * (p.X.Max - p.X.Min)
	return p, nil
}

// scale is an objective's value as the chart shows it: shares in %,
// times in seconds.
func scale(name string, v float64) float64 {
	switch name {
	case "fail":
		return 100 * v
	case "p50", "p95", "p99":
		return v / 1000
	}
	return v
}

func axisLabel(name string) string {
	switch name {
	case "fail":
		return "prompts failed, % (worst seed)"
	case "p50", "p95", "p99":
		return "time to success " + name + ", s (worst seed)"
	case "calls":
		return "requests per prompt (worst seed)"
	case "peak":
		return "peak requests/s over capacity (worst seed)"
	}
	return name
}
