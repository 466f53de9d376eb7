// Package chart is what the charts share (gonum.org/v1/plot, SPEC.md
// §15.7 and §15.11): a white canvas of an image format and the style of a
// heading. Only the chart packages (fleet/fleetplot, tune/tuneplot) import
// it, so that retrysim links no chart library (the formats' names, which
// retrysim checks, are internal/imageformat's).
package chart

import (
	"fmt"
	"image/color"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/ohmypi/retryfsm/internal/imageformat"
)

// Canvas is a canvas of width by height in format (one of
// imageformat.Formats: "png" or "svg"), filled white: c writes the image,
// dc draws on it. Another format is an error saying which are allowed.
func Canvas(format string, width, height vg.Length) (c vg.CanvasWriterTo, dc draw.Canvas, err error) {
	switch format {
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	case "svg":
		c = vgsvg.New(width, height)
	default:
		return nil, draw.Canvas{}, fmt.Errorf("unknown image format %q (allowed: %s)", format, strings.Join(imageformat.Formats, ", "))
	}
	dc = draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	return c, dc, nil
}

// HeadingStyle is the style of a chart's headings: the default font, bold,
// 14 points, black, centered on its point.
func HeadingStyle() text.Style {
	return text.Style{Color: color.Black, Font: font.From(font.Font{Typeface: plot.DefaultFont.Typeface, Variant: plot.DefaultFont.Variant, Weight: xfont.WeightBold}, 14),
		XAlign: draw.XCenter, YAlign: draw.YCenter, Handler: plot.DefaultTextHandler}
}
