package fleetplot

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

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
