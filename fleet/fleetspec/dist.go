package fleetspec

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// DistKind is a distribution's family.
type DistKind uint8

// Distribution families.
const (
	DistNone      DistKind = iota // unset (a Config's default applies)
	DistFixed                     // always A
	DistUniform                   // uniform on [A, B] (counts: A to B inclusive)
	DistExp                       // exponential with mean A
	DistLogNormal                 // log-normal with median A and shape B (sigma)
	DistGeometric                 // counts only: geometric on 1, 2, ... with mean A
)

// Dist is a distribution of durations (values in nanoseconds) or of counts.
// Its text form, in flags and files: a duration ("1s") or a count ("3")
// for a fixed value, "uniform:A,B", "exp:MEAN", "lognormal:MEDIAN,SIGMA"
// (durations) and "geometric:MEAN" (counts).
type Dist struct {
	Kind DistKind
	A, B float64
}

// Fixed is the distribution that is always v.
func Fixed(v float64) Dist { return Dist{Kind: DistFixed, A: v} }

// ParseDuration reads a distribution of durations (Go durations: "1s",
// "uniform:500ms,3s", "exp:2s", "lognormal:2s,0.5").
func ParseDuration(s string) (Dist, error) { return parseDist(s, false) }

// ParseCount reads a distribution of counts ("3", "uniform:1,5",
// "geometric:4").
func ParseCount(s string) (Dist, error) { return parseDist(s, true) }

func parseDist(s string, count bool) (Dist, error) {
	name, args, hasName := strings.Cut(strings.TrimSpace(s), ":")
	if !hasName {
		name, args = "fixed", name
	}
	var fams string
	if count {
		fams = `COUNT, uniform:A,B, geometric:MEAN (e.g. "3", "uniform:1,5", "geometric:4")`
	} else {
		fams = `DURATION, uniform:A,B, exp:MEAN, lognormal:MEDIAN,SIGMA (Go durations, e.g. "1s", "uniform:500ms,3s", "lognormal:2s,0.5")`
	}
	bad := func(detail string) (Dist, error) {
		return Dist{}, fmt.Errorf("%q: %s (allowed: %s)", s, detail, fams)
	}
	vals := strings.Split(args, ",")
	want := map[string]int{"fixed": 1, "uniform": 2, "exp": 1, "lognormal": 2, "geometric": 1}
	n, known := want[name]
	if !known || (count && (name == "exp" || name == "lognormal")) || (!count && name == "geometric") {
		return bad("unknown distribution " + strconv.Quote(name))
	}
	if len(vals) != n {
		return bad(fmt.Sprintf("%s takes %d value(s)", name, n))
	}
	num := make([]float64, n)
	for i, v := range vals {
		v = strings.TrimSpace(v)
		var err error
		switch {
		case name == "lognormal" && i == 1:
			num[i], err = strconv.ParseFloat(v, 64)
		case count:
			var k int
			k, err = strconv.Atoi(v)
			num[i] = float64(k)
		default:
			var d time.Duration
			d, err = time.ParseDuration(v)
			num[i] = float64(d)
		}
		if err != nil {
			return bad(fmt.Sprintf("value %q", v))
		}
		// A value out of range is quoted as written: a duration near the
		// largest one does not survive the float64 (it came back negative).
		if !(name == "lognormal" && i == 1) && (num[i] < 0 || num[i] > float64(MaxDuration) || count && num[i] > MaxCalls) {
			unit := "a duration from 0s to " + MaxDuration.String()
			if count {
				unit = fmt.Sprintf("an integer from 1 to %d", MaxCalls)
			}
			return Dist{}, fmt.Errorf("%q: %s is out of range (allowed: %s)", s, v, unit)
		}
	}
	d := Dist{A: num[0]}
	if n == 2 {
		d.B = num[1]
	}
	switch name {
	case "fixed":
		d.Kind = DistFixed
	case "uniform":
		d.Kind = DistUniform
	case "exp":
		d.Kind = DistExp
	case "lognormal":
		d.Kind = DistLogNormal
	case "geometric":
		d.Kind = DistGeometric
	}
	if err := d.validate(count); err != nil {
		return Dist{}, fmt.Errorf("%q: %v", s, err)
	}
	return d, nil
}

// validate checks d's parameters.
func (d Dist) validate(count bool) error {
	lo, hi, unit := 0.0, float64(MaxDuration), "a duration from 0s to "+MaxDuration.String()
	if count {
		lo, hi, unit = 1, MaxCalls, fmt.Sprintf("an integer from 1 to %d", MaxCalls)
	}
	in := func(v float64) bool { return v >= lo && v <= hi && v == math.Trunc(v) }
	switch d.Kind {
	case DistFixed, DistExp, DistGeometric:
		if !in(d.A) {
			return fmt.Errorf("%s is out of range (allowed: %s)", d.value(d.A, count), unit)
		}
		if d.Kind == DistExp && d.A == 0 {
			return errors.New("the mean must be above 0")
		}
	case DistUniform:
		if !in(d.A) || !in(d.B) || d.B < d.A {
			return fmt.Errorf("uniform:%s,%s is out of range (allowed: A <= B, each %s)", d.value(d.A, count), d.value(d.B, count), unit)
		}
	case DistLogNormal:
		if !in(d.A) || d.A == 0 {
			return fmt.Errorf("the median %s is out of range (allowed: above 0s, at most %v)", d.value(d.A, count), MaxDuration)
		}
		if !(d.B >= 0 && d.B <= 10) {
			return fmt.Errorf("sigma %v is out of range (allowed: 0 to 10)", d.B)
		}
	default:
		return errors.New("no distribution")
	}
	return nil
}

func (d Dist) value(v float64, count bool) string {
	if count {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return time.Duration(v).String()
}

// Format writes d as ParseDuration (count false) or ParseCount reads it.
func (d Dist) Format(count bool) string {
	a, b := d.value(d.A, count), d.value(d.B, count)
	switch d.Kind {
	case DistFixed:
		return a
	case DistUniform:
		return "uniform:" + a + "," + b
	case DistExp:
		return "exp:" + a
	case DistLogNormal:
		return "lognormal:" + a + "," + strconv.FormatFloat(d.B, 'f', -1, 64)
	case DistGeometric:
		return "geometric:" + a
	}
	return ""
}

// Mean is d's mean.
func (d Dist) Mean() float64 {
	switch d.Kind {
	case DistFixed, DistExp, DistGeometric:
		return d.A
	case DistUniform:
		return (d.A + d.B) / 2
	case DistLogNormal:
		return d.A * math.Exp(d.B*d.B/2)
	}
	return 0
}

// Random draws. A stream is a PCG (math/rand/v2) used without rand.Rand,
// so that a session holds its streams by value and drawing allocates
// nothing; float64s are drawn exactly as rand.Rand.Float64 draws them (the
// simulator's jitter draws, which the tests compare).

// Float01 is rand.Rand.Float64 of a Rand over p: a uniform draw in [0, 1).
func Float01(p *rand.PCG) float64 { return float64(p.Uint64()<<11>>11) / (1 << 53) }

// DrawDuration draws a duration from d (at least min).
func (d *Dist) DrawDuration(p *rand.PCG, min time.Duration) time.Duration {
	var v float64
	switch d.Kind {
	case DistFixed:
		v = d.A
	case DistUniform:
		v = d.A + (d.B-d.A)*Float01(p)
	case DistExp:
		v = -d.A * math.Log(1-Float01(p))
	case DistLogNormal:
		v = d.A * math.Exp(d.B*normal(p))
	}
	if !(v < float64(MaxDuration)) {
		v = float64(MaxDuration)
	}
	r := time.Duration(v)
	if r < min {
		r = min
	}
	return r
}

// Draws reports whether DrawDuration and DrawCount may draw from their
// generator: false for a fixed value (or none), which they return without
// a draw.
func (d *Dist) Draws() bool { return d.Kind != DistNone && d.Kind != DistFixed }

// DrawCount draws a count from d (at least 1).
func (d *Dist) DrawCount(p *rand.PCG) int {
	switch d.Kind {
	case DistUniform:
		return int(d.A) + int(Float01(p)*(d.B-d.A+1))
	case DistGeometric:
		if d.A <= 1 {
			return 1
		}
		n := 1 + math.Floor(math.Log(1-Float01(p))/math.Log(1-1/d.A))
		return int(min(n, MaxCalls))
	}
	return int(d.A)
}

// normal is a standard normal draw (Box–Muller, two uniform draws).
func normal(p *rand.PCG) float64 {
	u1 := 1 - Float01(p) // in (0, 1]
	u2 := Float01(p)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
