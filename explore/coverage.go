package explore

import (
	"fmt"
	"io"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// CoverageUnit is one unit of transition coverage: a declared rule row of
// the variant's table (SPEC's table rows) and one of its from-states. Two
// rules that fire the same fsm edge (for example sound's continuing -fail->
// exhausted on a fatal error and on an overflow) are separate units.
type CoverageUnit struct {
	Rule  int // index in the variant's table (session.Variant.Retry.Rules)
	From  policy.State
	Input retry.Input
	Guard string
	Event string // "" for an ignored rule
	To    policy.State
	Hits  int // transition records of the traces attributed to it
	// Reachable: the explorer (whose inputs scenario files can all
	// express) fires it for some maxRetries in 0..3.
	Reachable bool
}

// String describes the unit as the coverage report prints it.
func (u CoverageUnit) String() string {
	g := ""
	if u.Guard != "" {
		g = " [" + u.Guard + "]"
	}
	if u.Event == "" {
		return fmt.Sprintf("%s --%s%s--> (ignored)", u.From, u.Input, g)
	}
	return fmt.Sprintf("%s --%s%s--> %s -%s-> %s", u.From, u.Input, g, u.From, u.Event, u.To)
}

// CoverageReport says which units the traces exercised.
type CoverageReport struct {
	Variant string
	Units   []CoverageUnit // declared transitions, table order
	Ignored []CoverageUnit // ignored (state, input) rows, listed apart, never counted
	// Unattributed lists the transition records whose rule field names no
	// rule that fits them ("trace N line L: ... (why)").
	Unattributed []string
}

// Covered, Missed and Unreachable count the declared units.
func (r *CoverageReport) Counts() (covered, missed, unreachable int) {
	for _, u := range r.Units {
		switch {
		case u.Hits > 0:
			covered++
		case !u.Reachable:
			unreachable++
		default:
			missed++
		}
	}
	return
}

// CoverageReachable returns the (rule, from-state) units the explorer
// fires for maxRetries 0..3: with the default settings and, for the sound
// variant (the only one that takes opt-in settings), with
// coverageSettings, which reach the fallback and fail-fast rules.
func CoverageReachable(v *session.Variant) map[Unit]bool {
	out := map[Unit]bool{}
	for mr := 0; mr <= 3; mr++ {
		for u := range exploreAll(Options{Variant: v, MaxRetries: mr}).Reached {
			out[u] = true
		}
		if v != nil && v != session.Sound {
			continue
		}
		for _, set := range coverageSettings() {
			c, err := newConfig(session.Sound, &set, mr, false)
			if err != nil {
				panic(fmt.Sprintf("explore: coverage settings: %v", err)) // fixed settings: a bug
			}
			for u := range exploreConfig(Options{Variant: session.Sound, MaxRetries: mr}, c).Reached {
				out[u] = true
			}
		}
	}
	return out
}

// coverageSettings are the opt-in settings CoverageReachable explores
// besides the default ones: hints as a floor under a 5 s ceiling, with and
// without a fallback model.
func coverageSettings() []policy.Settings {
	base := policy.DefaultSettings()
	base.RetryAfter = policy.RetryAfter{Use: policy.HintFloor, MaxWait: 5 * time.Second}
	fb := base.Clone()
	fb.Fallback = []string{"fallback-model"}
	return []policy.Settings{base, fb}
}

// Coverage reads the transition records of traces of variant v and
// attributes each to the rule row its "rule" field names (Edge.Rule), in
// the from-state it names. A record whose rule field is missing (Edge.Rule
// < 0), names no rule of v's table, or names a rule that does not fit the
// record's input, from-state, event and target, is listed as unattributed.
func Coverage(v *session.Variant, traces [][]trace.Record) (*CoverageReport, error) {
	if v == nil {
		v = session.Sound
	}
	rules := v.Retry.Rules()
	rep := &CoverageReport{Variant: v.Name}
	reach := CoverageReachable(v)
	idx := map[Unit]int{}
	for i, r := range rules {
		for _, s := range r.From {
			u := CoverageUnit{Rule: i, From: s, Input: r.Input, Guard: r.Guard.Name, Event: r.Event, To: r.To,
				Reachable: reach[Unit{i, s}]}
			if r.Ignored() {
				rep.Ignored = append(rep.Ignored, u)
				continue
			}
			idx[Unit{i, s}] = len(rep.Units)
			rep.Units = append(rep.Units, u)
		}
	}
	for n, lines := range traces {
		for i := range lines {
			l := &lines[i]
			if l.Type != trace.Transition {
				continue
			}
			e := &l.Edge
			k, ok := idx[Unit{e.Rule, policy.State(e.From)}]
			why := ""
			switch {
			case e.Rule < 0:
				why = "no rule"
			case !ok:
				why = fmt.Sprintf("rule %d is not a declared transition of %s from %s", e.Rule, v.Name, e.From)
			case rules[e.Rule].Input != e.Input || rules[e.Rule].Event != e.Event || string(rules[e.Rule].To) != e.To:
				why = fmt.Sprintf("rule %d is %s -%s-> %s", e.Rule, rules[e.Rule].Input, rules[e.Rule].Event, rules[e.Rule].To)
			}
			if why != "" {
				rep.Unattributed = append(rep.Unattributed, fmt.Sprintf("trace %d line %d: %s --%s--> %s -%s-> %s (%s)",
					n+1, i+1, e.From, e.Input, e.From, e.Event, e.To, why))
				continue
			}
			rep.Units[k].Hits++
		}
	}
	return rep, nil
}

// Format writes the report: the covered, missed and unreachable declared
// transitions, the ignored rows apart, and a summary line.
func (r *CoverageReport) Format(w io.Writer) {
	covered, missed, unreachable := r.Counts()
	fmt.Fprintf(w, "transition coverage (%s): per (rule row, from-state)\n", r.Variant)
	for _, u := range r.Units {
		mark := "MISS   "
		switch {
		case u.Hits > 0:
			mark = "COVER  "
		case !u.Reachable:
			mark = "UNREACH"
		}
		fmt.Fprintf(w, "  %s %s", mark, u)
		if u.Hits > 0 {
			fmt.Fprintf(w, "  (%d)", u.Hits)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "ignored (not counted): %d rows\n", len(r.Ignored))
	for _, u := range r.Ignored {
		fmt.Fprintf(w, "  IGNORED %s\n", u)
	}
	for _, s := range r.Unattributed {
		fmt.Fprintf(w, "  UNATTRIBUTED %s\n", s)
	}
	fmt.Fprintf(w, "coverage: %d covered, %d missed, %d unreachable by scenario files (of %d declared)\n",
		covered, missed, unreachable, len(r.Units))
}
