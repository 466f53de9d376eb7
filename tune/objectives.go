package tune

import (
	"fmt"
	"math"
	"strings"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/suggest"
)

// objective is one figure a tune minimizes, measured on one run's
// sessions (the fleet result's "all" row, or its one profile's).
type objective struct {
	name, meaning string
	// of measures it; +Inf when the run cannot say (no prompt
	// succeeded: no time to success), which every value beats.
	of func(s *fleet.Stats, c *fleetspec.Config) float64
	// text writes a value for the table.
	text func(v float64) string
}

// objectiveDefs are the objectives in the report's column order; the
// --objectives parser, the report and SPEC.md §15.11 derive from them.
var objectiveDefs = []objective{
	{name: "fail", meaning: "the share of prompts that did not succeed (failed, or not done by the horizon)",
		of: func(s *fleet.Stats, _ *fleetspec.Config) float64 {
			if s.Prompts == 0 {
				return 0
			}
			return float64(s.Prompts-s.Succeeded) / float64(s.Prompts)
		},
		text: func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }},
	quantile("p50", 0.50),
	quantile("p95", 0.95),
	quantile("p99", 0.99),
	{name: "calls", meaning: "requests sent to the provider per prompt (an SDK layer's retries included)",
		of: func(s *fleet.Stats, _ *fleetspec.Config) float64 {
			if s.Prompts == 0 {
				return 0
			}
			return float64(s.WireCalls) / float64(s.Prompts)
		},
		text: func(v float64) string { return fmt.Sprintf("%.2f", v) }},
	{name: "peak", meaning: "the most requests per second in one bin of the wire series, over the capacity's rps (without a capacity: requests per second)",
		of: func(s *fleet.Stats, c *fleetspec.Config) float64 {
			var most int64
			for _, n := range s.WireSeries.Counts {
				most = max(most, n)
			}
			perSec := float64(most) / s.WireSeries.BinWidth().Seconds()
			if c.Capacity.RPS > 0 {
				return perSec / c.Capacity.RPS
			}
			return perSec
		},
		text: func(v float64) string { return fmt.Sprintf("%.2f", v) }},
}

// quantile is the time-to-success quantile objective.
func quantile(name string, p float64) objective {
	return objective{name: name,
		meaning: fmt.Sprintf("time from a prompt to its success, %s of the prompts that succeeded (ms; worst when none did)", name),
		of: func(s *fleet.Stats, _ *fleetspec.Config) float64 {
			if s.TimeToSuccess.N == 0 {
				return math.Inf(1)
			}
			return s.TimeToSuccess.Quantile(p)
		},
		text: func(v float64) string {
			if math.IsInf(v, 1) {
				return "-"
			}
			return msText(v)
		}}
}

// DefaultObjectives are the objectives a tune minimizes unless told:
// the share of prompts that fail, the p95 time to success, the calls per
// prompt and the peak load. With more objectives, more points are
// incomparable and the front grows toward the whole design.
func DefaultObjectives() []string { return []string{"fail", "p95", "calls", "peak"} }

// ObjectiveNames lists the objectives, in the report's order.
func ObjectiveNames() []string {
	names := make([]string, len(objectiveDefs))
	for i, o := range objectiveDefs {
		names[i] = o.name
	}
	return names
}

func objectiveByName(name string) *objective {
	for i := range objectiveDefs {
		if objectiveDefs[i].name == name {
			return &objectiveDefs[i]
		}
	}
	return nil
}

// ParseObjectives reads --objectives: names separated by commas, each
// once; they come back in the report's order.
func ParseObjectives(spec string) ([]string, error) {
	given := map[string]bool{}
	for name := range strings.SplitSeq(spec, ",") {
		name = strings.TrimSpace(name)
		if objectiveByName(name) == nil {
			return nil, fmt.Errorf("unknown objective %q%s (allowed: %s)", name, suggest.DidYouMean(name, ObjectiveNames(), ""), strings.Join(ObjectiveNames(), ", "))
		}
		if given[name] {
			return nil, fmt.Errorf("objective %s given twice", name)
		}
		given[name] = true
	}
	var out []string
	for _, o := range objectiveDefs {
		if given[o.name] {
			out = append(out, o.name)
		}
	}
	return out, nil
}

// checkObjectives checks names are objectives, each once.
func checkObjectives(names []string) error {
	if len(names) == 0 {
		return fmt.Errorf("no objectives (allowed: %s)", strings.Join(ObjectiveNames(), ", "))
	}
	_, err := ParseObjectives(strings.Join(names, ","))
	return err
}

// measure is the objectives' values of one run's row s.
func measure(names []string, s *fleet.Stats, c *fleetspec.Config) []float64 {
	out := make([]float64, len(names))
	for i, n := range names {
		out[i] = objectiveByName(n).of(s, c)
	}
	return out
}

// msText writes milliseconds as a rounded duration ("15.3s").
func msText(ms float64) string {
	d := ms / 1000
	switch {
	case d >= 60:
		return fmt.Sprintf("%.1fm", d/60)
	case d >= 10:
		return fmt.Sprintf("%.1fs", d)
	default:
		return fmt.Sprintf("%.2fs", d)
	}
}

// ObjectiveText writes objective name's value v as the report's table
// does ("2.50%", "14.6s", "4.02"; "-" for a time when no prompt
// succeeded).
func ObjectiveText(name string, v float64) string {
	if o := objectiveByName(name); o != nil {
		return o.text(v)
	}
	return fmt.Sprint(v)
}

// ObjectiveMeaning is what objective name measures ("" for none).
func ObjectiveMeaning(name string) string {
	if o := objectiveByName(name); o != nil {
		return o.meaning
	}
	return ""
}
