package explore

import (
	"fmt"
	"io"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/trace"
)

// CoverageUnit is one unit of transition coverage: a declared rule row of
// the variant's table (SPEC's table rows) and one of its from-states. Two
// rules that fire the same fsm edge (for example sound's continuing -fail->
// exhausted on a fatal error and on an overflow) are separate units.
type CoverageUnit struct {
	Rule  int // index in Variant.Rules
	From  policy.State
	Input policy.Input
	Guard string
	Event string // "" for an ignored rule
	To    policy.State
	Hits  int // transitions of the traces attributed to it
	// Reachable: the explorer, restricted to inputs scenario files can
	// express, exercises it for some maxRetries in 0..3.
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
	// Unattributed lists transition lines no rule matched ("trace N line L: ...").
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
// exercises for maxRetries 0..3 with the scenario-expressible alphabet.
func CoverageReachable(v *policy.Variant) map[Unit]bool {
	out := map[Unit]bool{}
	for mr := 0; mr <= 3; mr++ {
		for u := range exploreAll(Options{Variant: v, MaxRetries: mr}).Reached {
			out[u] = true
		}
	}
	return out
}

// Coverage reads the transition records of sim traces and attributes each
// to a rule row of v's table. A transition record that carries its rule
// (Edge.Rule >= 0) is attributed to it. One that names only (from, event,
// to) has its input inferred from the line before it in the
// same trace: a successful message_end (message_end:success), agent_run_end
// (agent_end of the class of the run's last reply; an error that does not
// fit is taken as an overflow by usage, which the trace does not show),
// continue_rejected (continue_failed), a response to abort_retry or to an
// accepted prompt; otherwise the timer (backoff_elapsed) or abort. Guards
// that still leave two rows are told apart by the retry events the step
// emitted.
func Coverage(v *policy.Variant, traces [][]trace.Record) (*CoverageReport, error) {
	rep := &CoverageReport{Variant: v.Name}
	reach := CoverageReachable(v)
	idx := map[Unit]int{}
	for i, r := range v.Rules {
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
		var lastMsg *trace.Record
		for i := range lines {
			l := &lines[i]
			if l.Type == trace.MessageEnd {
				lastMsg = l
			}
			if l.Type != trace.Transition {
				continue
			}
			var prev *trace.Record
			if i > 0 {
				prev = &lines[i-1]
			}
			rule := l.Edge.Rule
			if rule < 0 {
				rule = attribute(v, prev, lastMsg, l, emitted(lines[i+1:]))
			}
			k, ok := idx[Unit{rule, policy.State(l.Edge.From)}]
			if rule < 0 || !ok {
				rep.Unattributed = append(rep.Unattributed, fmt.Sprintf("trace %d line %d: %s -%s-> %s", n+1, i+1, l.Edge.From, l.Edge.Event, l.Edge.To))
				continue
			}
			rep.Units[k].Hits++
		}
	}
	return rep, nil
}

// emitted returns the retry events right after a transition line, before
// the next line of another kind: "s" for a start, "e" for an end.
func emitted(rest []trace.Record) string {
	var b strings.Builder
	for i := range rest {
		switch rest[i].Type {
		case trace.AutoRetryStart:
			b.WriteByte('s')
		case trace.AutoRetryEnd:
			b.WriteByte('e')
		case trace.MarkUsageLimitReached, trace.PromptResolved:
		default:
			return b.String()
		}
	}
	return b.String()
}

func ruleEmits(r *policy.Rule) string {
	var b strings.Builder
	for _, s := range r.Steps {
		switch s {
		case policy.StepEmitStart:
			b.WriteByte('s')
		case policy.StepEmitEnd:
			b.WriteByte('e')
		}
	}
	return b.String()
}

func attribute(v *policy.Variant, prev, lastMsg, tr *trace.Record, emits string) int {
	var ins []policy.Input
	var prevType trace.Type
	if prev != nil {
		prevType = prev.Type
	}
	switch {
	case prevType == trace.MessageEnd && policy.AssistantMessage{StopReason: prev.Message.StopReason}.IsSuccess():
		ins = []policy.Input{policy.InputSuccess}
	case prevType == trace.AgentRunEnd:
		if lastMsg == nil {
			ins = []policy.Input{policy.InputNoMessage}
			break
		}
		m := policy.AssistantMessage{StopReason: lastMsg.Message.StopReason, ErrorMessage: lastMsg.Message.ErrorMessage}
		in, ok := policy.AgentEndInput(&m, 0)
		if ok {
			ins = append(ins, in)
		}
		ins = append(ins, policy.InputOverflow)
	case prevType == trace.ContinueRejected:
		ins = []policy.Input{policy.InputContinueFailed}
	case prevType == trace.Response && prev.Response.Command == "abort_retry":
		ins = []policy.Input{policy.InputAbortRetry}
	case prevType == trace.Response && prev.Response.Command == "prompt" && prev.Response.Success:
		ins = []policy.Input{policy.InputPrompt}
	}
	// A timer or an abort starts a queue event of its own: the line before
	// belongs to an earlier event, whatever it is.
	ins = append(ins, policy.InputElapsed, policy.InputAbort)
	for _, in := range ins {
		first := -1
		for i := range v.Rules {
			r := &v.Rules[i]
			if r.Input != in || r.Ignored() || r.Event != tr.Edge.Event || string(r.To) != tr.Edge.To || !hasState(r.From, tr.Edge.From) {
				continue
			}
			if first < 0 {
				first = i
			}
			if ruleEmits(r) == emits {
				return i
			}
		}
		if first >= 0 {
			return first
		}
	}
	return -1
}

func hasState(ss []policy.State, s string) bool {
	for _, x := range ss {
		if string(x) == s {
			return true
		}
	}
	return false
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
