package tune

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/policy"
)

// Axis is one retry setting the search varies, and the values it tries
// (as written: "500", "down:0.25", "floor").
type Axis struct {
	Name   string
	Values []string
}

// axisDef is one of the settings a tune can search: its name, its default
// values, how a value sets it, and for a numeric axis the value between
// two (the refinement's midpoint). The axes, the --axes parser, the
// report's columns and SPEC.md §15.11's table derive from axisDefs; a new
// axis is one entry here.
type axisDef struct {
	name, meaning string
	def           []string
	// set parses v and sets it on s; the error says what is allowed.
	set func(s *policy.Settings, v string) error
	// mid is the value between a and b (numeric axes; nil: none), ok
	// false when there is none between them.
	mid func(a, b string) (string, bool)
	// less orders two values (numeric axes), for the refinement's
	// neighbours.
	less func(a, b string) bool
}

// axisDefs are the axes in the report's column order.
var axisDefs = []axisDef{
	{name: "maxRetries", meaning: "retries per chain (an integer, 0 to 1000)", def: []string{"2", "5", "10"},
		set: func(s *policy.Settings, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > policy.MaxRetriesLimit {
				return fmt.Errorf("%q (allowed: an integer from 0 to %d)", v, policy.MaxRetriesLimit)
			}
			s.MaxRetries = n
			return nil
		},
		mid: func(a, b string) (string, bool) {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			m := (x + y) / 2
			return strconv.Itoa(m), m != x && m != y
		},
		less: numLess},
	msAxis("baseDelayMs", "the wait before the first retry, ms", []string{"500", "2000"}, false,
		func(s *policy.Settings) *time.Duration { return &s.BaseDelay }),
	msAxis("maxBackoffMs", "the backoff's cap, ms (0: none)", []string{"0", "30000"}, true,
		func(s *policy.Settings) *time.Duration { return &s.MaxBackoff }),
	{name: "jitter", meaning: "MODE or MODE:RATIO, MODE none, down, updown, full or equal (ratio 0 to 1)",
		def: []string{"none", "full"},
		set: func(s *policy.Settings, v string) error {
			mode, ratio, hasRatio := strings.Cut(v, ":")
			switch mode {
			case policy.JitterNone, policy.JitterDown, policy.JitterUpDown, policy.JitterFull, policy.JitterEqual:
			default:
				return fmt.Errorf("%q (allowed: MODE or MODE:RATIO, MODE none, down, updown, full or equal)", v)
			}
			r := 0.0
			if hasRatio {
				var err error
				if r, err = strconv.ParseFloat(ratio, 64); err != nil || !(r >= 0 && r <= 1) {
					return fmt.Errorf("%q: ratio %q (allowed: a number from 0 to 1)", v, ratio)
				}
			}
			s.Jitter = policy.Jitter{Mode: mode, Ratio: r}
			return nil
		}},
	{name: "hint", meaning: "how a retry-after hint sets the wait (retryAfter.use): ignore, floor or replace",
		def: []string{policy.HintIgnore, policy.HintFloor},
		set: func(s *policy.Settings, v string) error {
			switch v {
			case policy.HintIgnore, policy.HintFloor, policy.HintReplace:
				s.RetryAfter.Use = v
				return nil
			}
			return fmt.Errorf("%q (allowed: ignore, floor or replace)", v)
		}},
	msAxis("maxHintMs", "the longest hint used, ms (retryAfter.maxHintMs; 0: no bound)", []string{"0"}, true,
		func(s *policy.Settings) *time.Duration { return &s.RetryAfter.MaxHint }),
	msAxis("maxWaitMs", "the fail-fast: a longer wait is not waited, ms (retryAfter.maxWaitMs; 0: none)", []string{"0", "300000"}, true,
		func(s *policy.Settings) *time.Duration { return &s.RetryAfter.MaxWait }),
}

// msAxis is an axis of milliseconds; zeroNone: 0 means "none" and has no
// midpoint with another value.
func msAxis(name, meaning string, def []string, zeroNone bool, field func(*policy.Settings) *time.Duration) axisDef {
	return axisDef{name: name, meaning: meaning, def: def,
		set: func(s *policy.Settings, v string) error {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms < 0 || ms > policy.MaxBaseDelay.Milliseconds() {
				return fmt.Errorf("%q (allowed: an integer number of milliseconds from 0 to %d)", v, policy.MaxBaseDelay.Milliseconds())
			}
			*field(s) = time.Duration(ms) * time.Millisecond
			return nil
		},
		mid: func(a, b string) (string, bool) {
			x, _ := strconv.ParseFloat(a, 64)
			y, _ := strconv.ParseFloat(b, 64)
			if zeroNone && (x == 0 || y == 0) {
				return "", false
			}
			m := math.Round(math.Sqrt(x * y)) // geometric: delays grow by factors
			if x == 0 || y == 0 {
				m = math.Round((x + y) / 2)
			}
			return strconv.FormatFloat(m, 'f', -1, 64), m != x && m != y
		},
		less: numLess}
}

func numLess(a, b string) bool {
	x, _ := strconv.ParseFloat(a, 64)
	y, _ := strconv.ParseFloat(b, 64)
	return x < y
}

// AxisNames lists the axes a tune can search, in the report's order.
func AxisNames() []string {
	names := make([]string, len(axisDefs))
	for i, d := range axisDefs {
		names[i] = d.name
	}
	return names
}

func axisByName(name string) *axisDef {
	for i := range axisDefs {
		if axisDefs[i].name == name {
			return &axisDefs[i]
		}
	}
	return nil
}

// DefaultAxes are every axis with its default values.
func DefaultAxes() []Axis {
	out := make([]Axis, len(axisDefs))
	for i, d := range axisDefs {
		out[i] = Axis{Name: d.name, Values: append([]string(nil), d.def...)}
	}
	return out
}

// ParseAxes reads --axes: axes separated by ';' (or spaces), each NAME
// (its default values) or NAME=V,V,... (those values); only the axes
// named are searched, the others keep the base settings' values. The
// axes come back in the report's order; an unknown name, a name given
// twice or a bad value is an error naming the axis and what is allowed.
func ParseAxes(spec string) ([]Axis, error) {
	given := map[string][]string{}
	for item := range strings.FieldsFuncSeq(spec, func(r rune) bool { return r == ';' || r == ' ' }) {
		name, vals, hasVals := strings.Cut(item, "=")
		d := axisByName(name)
		if d == nil {
			return nil, fmt.Errorf("unknown axis %q%s (allowed: %s)", name, suggest.DidYouMean(name, AxisNames(), ""), strings.Join(AxisNames(), ", "))
		}
		if _, dup := given[name]; dup {
			return nil, fmt.Errorf("axis %s given twice", name)
		}
		values := d.def
		if hasVals {
			values = strings.Split(vals, ",")
		}
		given[name] = values
	}
	if len(given) == 0 {
		return nil, fmt.Errorf("no axes in %q (allowed: NAME or NAME=V,V,... separated by ';', names %s)", spec, strings.Join(AxisNames(), ", "))
	}
	var out []Axis
	for _, d := range axisDefs {
		if vs, ok := given[d.name]; ok {
			out = append(out, Axis{Name: d.name, Values: vs})
		}
	}
	return out, checkAxes(out)
}

// checkAxes checks every value of every axis, and that no axis repeats a
// value.
func checkAxes(axes []Axis) error {
	seen := map[string]bool{}
	for _, a := range axes {
		d := axisByName(a.Name)
		if d == nil {
			return fmt.Errorf("unknown axis %q (allowed: %s)", a.Name, strings.Join(AxisNames(), ", "))
		}
		if seen[a.Name] {
			return fmt.Errorf("axis %s given twice", a.Name)
		}
		seen[a.Name] = true
		if len(a.Values) == 0 || len(a.Values) > MaxAxisValues {
			return fmt.Errorf("axis %s: %d values (allowed: 1 to %d)", a.Name, len(a.Values), MaxAxisValues)
		}
		vals := map[string]bool{}
		for _, v := range a.Values {
			var s policy.Settings
			if err := d.set(&s, v); err != nil {
				return fmt.Errorf("axis %s: %v", a.Name, err)
			}
			if vals[v] {
				return fmt.Errorf("axis %s: value %q given twice", a.Name, v)
			}
			vals[v] = true
		}
	}
	return nil
}

// MaxAxisValues bounds the values of one axis, and MaxCandidates the
// points of a design (its grid's product), so that a tune's memory and
// time stay bounded.
const (
	MaxAxisValues = 64
	MaxCandidates = 100_000
)
