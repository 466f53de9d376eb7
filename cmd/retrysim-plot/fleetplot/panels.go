package fleetplot

import (
	"image/color"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// outageColor shades the outage windows.
var outageColor = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 60}

// legendRoom is the share of a panel's height above the data kept for a
// legend of n entries, so that the legend covers no line.
func legendRoom(n int) float64 { return min(0.6, 0.075*float64(n)+0.04) }

// callsPanel draws p's wire calls per second over time: a line per Rate,
// the capacities, the outages shaded and the peak (or the busiest bin)
// marked.
func callsPanel(p *Panel) (*plot.Plot, error) {
	sc := callsScaleOf(p)
	pl := plot.New()
	pl.Title.Text = sc.title
	u := unitFor(sc.end)
	pl.X.Label.Text = "time since the start (" + u.name + ")"
	if p.LastCall > p.End {
		pl.X.Label.Text += "; " + strconv.FormatFloat(100*activityShare, 'f', -1, 64) + "% of the calls sent by its end, the last by " + unitFor(p.LastCall.Seconds()).format(p.LastCall.Seconds())
	}
	pl.X.Min, pl.X.Max = 0, sc.end
	pl.X.Tick.Marker = timeTicks{}
	pl.Y.Label.Text = "calls/s"
	pl.Y.Min, pl.Y.Max = 0, sc.ymax
	pl.Y.Tick.Marker = upTo{sc.top}
	pl.Legend.Top = true
	for _, step := range []func(*plot.Plot, *Panel, *callsScale) error{addOutages, addCapacities, addRates, markPeak} {
		if err := step(pl, p, &sc); err != nil {
			return nil, err
		}
	}
	return pl, nil
}

// callsScale is a calls panel's title and scale.
type callsScale struct {
	title string
	// width is the widest bin; end the time axis' end (s).
	width time.Duration
	end   float64
	// busiest is the highest bin of any line drawn, at busiestAt (s).
	busiest, busiestAt float64
	// top is the highest value drawn below the legend's room, ymax the
	// axis' top (the legend's room above top).
	top, ymax float64
	// offScale says the peak is marked at top, off the scale.
	offScale bool
}

// callsScaleOf is p's calls panel's title and scale.
func callsScaleOf(p *Panel) callsScale {
	sc := callsScale{title: "wire calls per second", end: p.End.Seconds()}
	for _, r := range p.Rates {
		sc.width = max(sc.width, r.Width)
	}
	if sc.width > 0 {
		sc.title += " in " + durationText(sc.width) + " bins"
	}
	if p.Runs > 1 {
		sc.title += ", mean of " + strconv.Itoa(p.Runs) + " seeds"
	}
	for _, r := range p.Rates {
		for j, v := range r.PerSecond {
			if at := (time.Duration(j)*r.Width + r.Width/2).Seconds(); v > sc.busiest && at < sc.end {
				sc.busiest, sc.busiestAt = v, at
			}
		}
	}
	sc.top = max(sc.busiest, 1)
	for _, c := range p.Capacities {
		sc.top = max(sc.top, c.PerSecond)
	}
	// The peak is one seed's busiest 100 ms, the lines the seeds' mean over
	// wider bins: one far above them is marked at the top, off the scale,
	// rather than squash the lines.
	sc.offScale = p.Peak != nil && p.Peak.PerSecond > offScaleFactor*sc.top
	if p.Peak != nil && !sc.offScale {
		sc.top = max(sc.top, p.Peak.PerSecond)
	}
	entries := len(p.Rates) + len(p.Capacities)
	var shaded bool
	for _, o := range p.Outages {
		if o[0].Seconds() < sc.end {
			shaded = true
		}
	}
	if shaded {
		entries++
		sc.title += " (outages shaded)"
	}
	sc.ymax = sc.top / (1 - legendRoom(entries))
	return sc
}

// addOutages shades p's outage windows up to the axis' end.
func addOutages(pl *plot.Plot, p *Panel, sc *callsScale) error {
	for k, o := range p.Outages {
		a, b := o[0].Seconds(), min(o[1].Seconds(), sc.end)
		if a >= sc.end {
			continue
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: a, Y: 0}, {X: b, Y: 0}, {X: b, Y: sc.ymax}, {X: a, Y: sc.ymax}})
		if err != nil {
			return err
		}
		poly.Color = outageColor
		poly.LineStyle.Width = 0
		pl.Add(poly)
		if k == 0 {
			pl.Legend.Add("outage", poly)
		}
	}
	return nil
}

// addCapacities draws p's capacities, a dotted line each.
func addCapacities(pl *plot.Plot, p *Panel, sc *callsScale) error {
	for _, c := range p.Capacities {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: c.PerSecond}, {X: sc.end, Y: c.PerSecond}})
		if err != nil {
			return err
		}
		l.Color = color.Black
		l.Width = vg.Points(1)
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(4)}
		pl.Add(l)
		pl.Legend.Add(c.Label, l)
	}
	return nil
}

// addRates draws p's lines, a step per bin, up to the axis' end.
func addRates(pl *plot.Plot, p *Panel, sc *callsScale) error {
	for _, r := range p.Rates {
		var xys plotter.XYs
		for j, v := range r.PerSecond {
			x := (time.Duration(j) * r.Width).Seconds()
			if x >= sc.end {
				break
			}
			xys = append(xys, plotter.XY{X: x, Y: v})
		}
		xys = append(xys, plotter.XY{X: min(sc.end, (time.Duration(len(xys)) * r.Width).Seconds()), Y: 0})
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		l.StepStyle = plotter.PostStep
		style(r.Style, &l.LineStyle)
		pl.Add(l)
		pl.Legend.Add(r.Label, l)
	}
	return nil
}

// markPeak marks p's peak (its guide from the axis up, a ring, a triangle
// off the scale, and its text), or without one the busiest bin drawn.
func markPeak(pl *plot.Plot, p *Panel, sc *callsScale) error {
	at, value, label := sc.busiestAt, sc.busiest, ""
	if p.Peak != nil {
		at, value, label = p.Peak.At.Seconds(), p.Peak.PerSecond, p.Peak.Text(p.Runs)
		if sc.offScale {
			value, label = sc.top, "▲ off the scale: "+label
		}
		// A thin line from the axis up to the mark: where the spike is.
		guide, err := plotter.NewLine(plotter.XYs{{X: at, Y: 0}, {X: at, Y: value}})
		if err != nil {
			return err
		}
		guide.Color = color.Black
		guide.Width = vg.Points(0.5)
		guide.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
		pl.Add(guide)
	} else if sc.busiest > 0 {
		label = "busiest " + durationText(sc.width) + ": " + number(sc.busiest) + "/s at " + unitFor(sc.end).format(sc.busiestAt)
	}
	if label == "" {
		return nil
	}
	// A spike narrower than a pixel stays readable: a ring (a triangle off
	// the scale) and its value, the text hanging below it (the legend's
	// room is above).
	s, err := plotter.NewScatter(plotter.XYs{{X: at, Y: value}})
	if err != nil {
		return err
	}
	s.GlyphStyle.Shape = draw.RingGlyph{}
	if sc.offScale {
		s.GlyphStyle.Shape = draw.TriangleGlyph{}
	}
	s.GlyphStyle.Radius = vg.Points(3)
	pl.Add(s)
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: at, Y: value}}, Labels: []string{label}})
	if err != nil {
		return err
	}
	lb.TextStyle[0].YAlign = draw.YTop
	lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(-2)}
	if at > sc.end*0.5 {
		lb.TextStyle[0].XAlign = draw.XRight
		lb.Offset.X = -vg.Points(5)
	}
	pl.Add(lb)
	return nil
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
		most = max(most, c.WirePerPrompt, c.Spread.WirePerPromptMax)
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
		perPrompt := strconv.FormatFloat(c.WirePerPrompt, 'f', 2, 64) + " per prompt"
		if sp := &c.Spread; sp.Runs > 1 {
			// The seeds' lowest and highest: a whisker across the bar's end.
			w, err := plotter.NewXErrorBars(struct {
				plotter.XYs
				plotter.XErrors
			}{plotter.XYs{{X: c.WirePerPrompt, Y: pos}}, plotter.XErrors{{Low: c.WirePerPrompt - sp.WirePerPromptMin, High: sp.WirePerPromptMax - c.WirePerPrompt}}})
			if err != nil {
				return nil, err
			}
			w.LineStyle.Width = vg.Points(1.2)
			w.CapWidth = vg.Points(10)
			pl.Add(w)
			perPrompt += "\n" + strconv.FormatInt(sp.Runs, 10) + " seeds: " + strconv.FormatFloat(sp.WirePerPromptMin, 'f', 2, 64) + " to " + strconv.FormatFloat(sp.WirePerPromptMax, 'f', 2, 64)
		}
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: max(c.WirePerPrompt, c.Spread.WirePerPromptMax), Y: pos}},
			Labels: []string{perPrompt + "\n429 over capacity: " +
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
		pl.Legend.Add(c.Label+": "+c.Gap()+c.SeedsText(), l)
		if lo, hi := c.PlateauSpread(); c.Spread.Runs > 1 && len(c.Seconds) > 0 {
			// The seeds' lowest and highest end: a whisker at the plateau's start.
			at := c.Seconds[len(c.Seconds)-1]
			y := xys[len(xys)-1].Y
			w, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{plotter.XYs{{X: at, Y: y}}, plotter.YErrors{{Low: y - lo, High: hi - y}}})
			if err != nil {
				return nil, err
			}
			w.LineStyle = l.LineStyle
			w.LineStyle.Dashes = nil
			w.CapWidth = vg.Points(8)
			pl.Add(w)
		}
	}
	return pl, nil
}
