package explore

import (
	"fmt"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
)

// Replay is an explored path made concrete: a scenario file that drives sim
// through the same inputs, and the observations the model predicts.
type Replay struct {
	// YAML is the scenario file (initialPrompt false; every input an action,
	// a scripted turn or a timer at a computed time).
	YAML []byte
	// Lines are the predicted trace lines of types transition,
	// auto_retry_start, auto_retry_end, prompt_resolved, prompt_rejected,
	// agent_run, continue_rejected and auto_compaction_start, normalised by
	// NormalizeTrace.
	Lines []string
	// Events are the predicted auto_retry_start/auto_retry_end/
	// prompt_resolved lines as YAML flow mappings (for expect blocks).
	Events []string
	Final  Final
	// Path is the replayed path, extended to quiescence when asked.
	Path []Input
}

// Final is the model's final state in sim's terms.
type Final struct {
	State      policy.State
	Attempt    int
	IsRetrying bool
	Unresolved []int
}

// ReplayOptions configure NewReplay.
type ReplayOptions struct {
	Name        string
	Description string
	// Extend appends inputs until quiescence (a due timer fires, a run in
	// flight replies stop, else the next timer fires), as sim runs to
	// quiescence after the last scripted input.
	Extend bool
	// Expect writes an expect block (the predicted retry events and the
	// final state).
	Expect bool
}

type turnSpec struct {
	stop     policy.StopReason
	msg      string
	start    int64
	duration int64
	done     bool
}

// NewReplay synthesizes the scenario of path for variant v and maxRetries.
// Inputs are 2 ms apart; a timer fires at its real due time; each LLM call
// lasts from its start to its reply input. It fails when the path cannot be
// replayed (ReplyEmpty, or real times that contradict the model's timer
// order).
func NewReplay(v *policy.Variant, maxRetries int, path []Input, opt ReplayOptions) (*Replay, error) {
	m := newModel(v, maxRetries, false)
	m.track = true
	m.now = -2
	s := initial()
	rp := &Replay{}
	var turns []*turnSpec
	var cur *turnSpec
	var actions []string
	prompts, pending := 0, 0
	apply := func(in Input) error {
		if !m.enabled(&s, in) {
			return fmt.Errorf("input %s not enabled in %v", in, s)
		}
		if in == ReplyEmpty {
			return fmt.Errorf("input %s cannot be replayed", in)
		}
		if in != FireTimer {
			m.now += 2
			if s.NT > 0 && m.now >= m.dues[0] {
				return fmt.Errorf("input %s at t=%d is not before the timer due at t=%d", in, m.now, m.dues[0])
			}
		}
		switch in {
		case ReplyRetryable, ReplyOverflow, ReplyFatal, ReplyAborted, ReplyStop, ReplyToolUse:
			stops := [...]policy.StopReason{policy.StopReasonError, policy.StopReasonError, policy.StopReasonError,
				policy.StopReasonAborted, policy.StopReasonStop, policy.StopReasonToolUse}
			msgs := [...]string{MsgRetryable, MsgOverflow, MsgFatal, "", "", ""}
			cur.stop, cur.msg, cur.duration, cur.done = stops[in], msgs[in], m.now-cur.start, true
			cur = nil
		case ActAbort:
			if s.Run != RunNone {
				cur.stop, cur.duration, cur.done = policy.StopReasonStop, m.now-cur.start+1, true
				cur = nil
			}
			actions = append(actions, fmt.Sprintf("{at: %d, do: abort}", m.now))
		case ActAbortRetry:
			actions = append(actions, fmt.Sprintf("{at: %d, do: abort_retry}", m.now))
		case ActEnable, ActDisable:
			actions = append(actions, fmt.Sprintf("{at: %d, do: set_auto_retry, enabled: %t}", m.now, in == ActEnable))
		case ActPrompt:
			actions = append(actions, fmt.Sprintf("{at: %d, do: prompt}", m.now))
		}
		s = m.step(s, in)
		if m.bad != "" {
			return fmt.Errorf("after %s: %s", in, m.bad)
		}
		if m.overflow {
			return fmt.Errorf("after %s: timer bound exceeded", in)
		}
		rp.Path = append(rp.Path, in)
		t := m.now
		for _, o := range m.obs {
			switch o.Kind {
			case ObsTransition:
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d transition %s %s %s", t, o.Edge.From, o.Edge.Event, o.Edge.To))
			case ObsStart:
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d auto_retry_start attempt=%d", t, o.Attempt))
				rp.Events = append(rp.Events, fmt.Sprintf("{t: %d, type: auto_retry_start, attempt: %d}", t, o.Attempt))
			case ObsEnd:
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d auto_retry_end success=%t attempt=%d", t, o.Success, o.Attempt))
				rp.Events = append(rp.Events, fmt.Sprintf("{t: %d, type: auto_retry_end, success: %t, attempt: %d}", t, o.Success, o.Attempt))
			case ObsAccepted:
				prompts++
				pending = prompts
			case ObsRejected:
				prompts++
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d prompt_rejected prompt=%d", t, prompts))
			case ObsResolved:
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d prompt_resolved prompt=%d", t, pending))
				rp.Events = append(rp.Events, fmt.Sprintf("{t: %d, type: prompt_resolved, prompt: %d}", t, pending))
			case ObsRun:
				kind := "continue"
				if o.Run == RunPrompt {
					kind = "prompt"
				}
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d agent_run kind=%s", t, kind))
			case ObsCall:
				if cur != nil {
					return fmt.Errorf("two calls in flight")
				}
				cur = &turnSpec{start: t}
				turns = append(turns, cur)
			case ObsContinueRejected:
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d continue_rejected", t))
			case ObsCompaction:
				rp.Lines = append(rp.Lines, fmt.Sprintf("%d auto_compaction_start", t))
			}
		}
		return nil
	}
	for _, in := range path {
		if err := apply(in); err != nil {
			return nil, err
		}
	}
	if opt.Extend {
		for n := 0; !s.Quiescent(); n++ {
			if n > 1000 {
				return nil, fmt.Errorf("no quiescence after 1000 extension steps")
			}
			in := FireTimer
			if s.Run != RunNone && !(s.NT > 0 && s.T[0].Rem == 0) {
				in = ReplyStop
			}
			if err := apply(in); err != nil {
				return nil, err
			}
		}
	}
	rp.Final = Final{State: s.Snap.State, Attempt: s.Snap.Attempt, IsRetrying: s.Snap.Open}
	if s.Pending {
		rp.Final.Unresolved = []int{pending}
	}
	var b strings.Builder
	if opt.Name != "" {
		fmt.Fprintf(&b, "name: %s\n", opt.Name)
	}
	if opt.Description != "" {
		b.WriteString("description: >\n")
		for _, l := range wrap(opt.Description, 76) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	fmt.Fprintf(&b, "variant: %s\n", v.Name)
	fmt.Fprintf(&b, "settings: {enabled: true, maxRetries: %d, baseDelayMs: %d}\n", maxRetries, baseDelay.Milliseconds())
	b.WriteString("initialPrompt: false\n")
	b.WriteString("turns:")
	if len(turns) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, t := range turns {
		if !t.done { // cannot happen after Extend; a call left in flight
			t.stop, t.duration = policy.StopReasonStop, 1_000_000
		}
		if t.msg != "" {
			fmt.Fprintf(&b, "  - {stopReason: %s, errorMessage: %q, durationMs: %d}\n", t.stop, t.msg, t.duration)
		} else {
			fmt.Fprintf(&b, "  - {stopReason: %s, durationMs: %d}\n", t.stop, t.duration)
		}
	}
	b.WriteString("actions:")
	if len(actions) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, a := range actions {
		fmt.Fprintf(&b, "  - %s\n", a)
	}
	if opt.Expect {
		b.WriteString("expect:\n")
		if len(rp.Events) > 0 {
			b.WriteString("  events:\n")
			for _, e := range rp.Events {
				fmt.Fprintf(&b, "    - %s\n", e)
			}
		}
		f := rp.Final
		un := make([]string, len(f.Unresolved))
		for i, p := range f.Unresolved {
			un[i] = fmt.Sprint(p)
		}
		fmt.Fprintf(&b, "  final: {state: %s, attempt: %d, isRetrying: %t, unresolvedPrompts: [%s]}\n",
			f.State, f.Attempt, f.IsRetrying, strings.Join(un, ", "))
	}
	rp.YAML = []byte(b.String())
	return rp, nil
}

func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
