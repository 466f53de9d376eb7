// Package fleetplot draws a fleet's result (package fleet) with
// gonum.org/v1/plot (SPEC.md §15.7): a row of three panels per fleet, the
// wire calls per second over time per profile (the provider's capacity a
// line, the fleet's outage windows shaded, the table's peak marked), the
// CDF of the time from a prompt to its success over every prompt (the
// failed and still-waiting prompts the gap below 100 %, their share in the
// legend), and each row's requests per prompt with its 429s; with several
// seeds, whiskers from each row's lowest to highest over them. It draws
// from the result's fixed-size counters only (fleet.Series,
// fleet.Histogram, fleet.Spread), so a merged sweep or merged shards plot
// like one run.
package fleetplot

import (
	"bytes"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/internal/chart"
	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/internal/imageformat"
)

// Formats are the image formats Write writes, by file extension.
var Formats = imageformat.Formats

// FormatOf is the format of an image file by its extension (".png" or
// ".svg", any case); another extension is an error saying which are
// allowed.
func FormatOf(path string) (string, error) { return imageformat.Of(path) }

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
	c, dc, err := chart.Canvas(format, width, height)
	if err != nil {
		return err
	}
	if len(d.Panels) == 0 {
		sty := chart.HeadingStyle()
		dc.FillText(sty, vg.Point{X: width / 2, Y: height / 2}, "no fleet in the result")
		_, err := c.WriteTo(w)
		return err
	}
	plots, canvases, err := layout(&d, dc)
	if err != nil {
		return err
	}
	sty := chart.HeadingStyle()
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
