package explore

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// Replay is an explored path made concrete: a scenario file that drives sim
// through the same inputs, and the trace lines the session core predicts.
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
	// Scenario is the scenario file YAML holds, for sim.RunScenario
	// without parsing.
	Scenario *scenario.Scenario
}

// Final is the predicted final state in sim's terms.
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
	// Settings are the retry settings of the exploration the path comes
	// from (nil: the default settings), as in Options.Settings; the
	// scenario file carries them.
	Settings *policy.Settings
}

type turnSpec struct {
	stop     policy.StopReason
	msg      string
	switched bool
	start    int64
	duration int64
	done     bool
}

// Kinds of the replay's steps: what the scenario makes of an input.
const (
	stepAction = iota // a scenario action, posted when the scenario loads
	stepReply         // the reply of a call, posted when the call starts
	stepTimer         // a timer, posted when armed
)

// replayStep is one input of a replayed path as the scheduler sees it.
type replayStep struct {
	in    Input
	kind  int
	seq   int           // the posting order of its event
	from  int           // a reply's or timer's: the step that posted it
	delay time.Duration // a timer's
	key   key           // the state after it (abstract time)
	lo    int           // its records in the abstract session's records
	hi    int
}

// postInfo is an event posted by a step: a timer armed or a call started.
type postInfo struct {
	step, seq int
	delay     time.Duration
}

// NewReplay synthesizes the scenario of path for variant v and maxRetries.
//
// The path is stepped through the session core three ways: as the
// explorer steps it (abstract time, the state normalised after each
// input), the same without normalising (which must give the same keys),
// and as a real session at the times the scenario gives each input (which
// must give the same keys and retry records, and whose records are the
// predicted lines). The times are the earliest whole milliseconds that
// make a real scheduler deliver the events in the path's order: a timer
// fires at its due time; a reply comes at least 1 ms after its call
// starts; events due at the same instant come in the order posted
// (actions first). Inputs other than timers are kept 2 ms apart when that
// is possible, else as close as need be. NewReplay fails when no such
// times exist or the sessions differ (SPEC.md §12.2), and for settings
// the explorer refuses (see Options.Settings).
func NewReplay(v *session.Variant, maxRetries int, path []Input, opt ReplayOptions) (*Replay, error) {
	if v == nil {
		v = session.Sound
	}
	if err := ValidateMaxRetries(v, maxRetries); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	cfg, err := newConfig(v, opt.Settings, maxRetries, false)
	if err != nil {
		return nil, fmt.Errorf("replay: settings: %w", err)
	}
	return newReplay(v, cfg, path, opt)
}

// replayShells keeps the shells of finished replays (*shell), whose
// buffers the next replay's shells reuse (shell.reuse): a replay's three
// shells grew their records (736 bytes each), effects and posts from
// nothing at every call, and the replay tests make 15,000 replays. A
// replay's result holds nothing of its shells.
var replayShells sync.Pool

// replayShell returns newConfigShell(v, c, raw), reusing a shell of
// replayShells if there is one; putShell gives it back.
func replayShell(v *session.Variant, c *config, raw bool) *shell {
	sh, ok := replayShells.Get().(*shell)
	if !ok {
		return newConfigShell(v, c, raw)
	}
	sh.reuse(v, c, raw)
	return sh
}

// putShell gives sh, which nothing uses any longer, to replayShells.
func putShell(sh *shell) { replayShells.Put(sh) }

// newReplay is NewReplay for the configuration cfg.
func newReplay(v *session.Variant, cfg *config, path []Input, opt ReplayOptions) (*Replay, error) {
	ab, steps, times, err := abstractReplay(v, cfg, path, opt.Extend)
	if err != nil {
		return nil, err
	}
	defer putShell(ab)
	run, err := realReplay(v, cfg, ab, steps, times)
	if err != nil {
		return nil, err
	}
	if err := run.file(v, cfg, opt); err != nil {
		return nil, err
	}
	return run.rp, nil
}

// satKey is s's key, saturated in persistent mode (config.saturate) as
// the explorer's are.
func (cfg *config) satKey(s State) key {
	cfg.saturate(&s)
	return s.key()
}

// abstractReplay is the replay's pass 1: the abstract session (ab),
// checked against the explorer's normalised stepping; the events each
// step posts, and the times that deliver them in the path's order.
func abstractReplay(v *session.Variant, cfg *config, path []Input, extend bool) (*shell, []replayStep, []int64, error) {
	ab := replayShell(v, cfg, false)
	ab.keep, ab.logging = true, true
	// Fewer records than inputs as a rule (0.8 a path's input, the
	// extension's included, over the replay tests' paths): sized once
	// rather than grown (a record is 736 bytes).
	ab.records = slices.Grow(ab.records, len(path)+8)
	c := replayShell(v, cfg, false)
	defer putShell(c)
	sb, sc := initial(), initial()
	posted := map[uint64]postInfo{}
	var steps []replayStep
	actions := 0
	do := func(in Input) error {
		if !c.enabled(&sc, in) {
			return fmt.Errorf("input %s not enabled in %v", in, sc)
		}
		st := replayStep{in: in, kind: stepAction}
		switch {
		case in == FireTimer:
			p := posted[sb.T[0].ID]
			st.kind, st.from, st.seq, st.delay = stepTimer, p.step, p.seq, p.delay
		case in.isReply():
			p := posted[sb.Session.Run.Call]
			st.kind, st.from, st.seq = stepReply, p.step, p.seq
		default:
			st.seq = actions
			actions++
		}
		np := len(ab.posts)
		st.lo = len(ab.records)
		ab.step(&sb, in)
		c.step(&sc, in)
		if ab.pruned || c.pruned {
			return fmt.Errorf("after %s: timer bound exceeded", in)
		}
		st.hi = len(ab.records)
		st.key = cfg.satKey(sb)
		if kc := cfg.satKey(sc); kc != st.key {
			return fmt.Errorf("after %s: the normalised state steps unlike the session's:\nnormalised %v\nsession    %v", in, sc, sb)
		}
		sc = st.key.state()
		for i := np; i < len(ab.posts); i++ {
			if d := ab.posts[i].delay; d%time.Millisecond != 0 {
				return notReplayable{fmt.Sprintf("after %s: a wait of %v is not a whole number of milliseconds, and scenario files time replies and actions in whole milliseconds", in, d)}
			}
			posted[ab.posts[i].id] = postInfo{step: len(steps), seq: 1<<30 + i, delay: ab.posts[i].delay}
		}
		steps = append(steps, st)
		return nil
	}
	for _, in := range path {
		if err := do(in); err != nil {
			putShell(ab)
			return nil, nil, nil, err
		}
	}
	for n := 0; extend && !sc.Quiescent(); n++ {
		if n > 1000 {
			putShell(ab)
			return nil, nil, nil, fmt.Errorf("no quiescence after 1000 extension steps")
		}
		in := FireTimer
		if sc.Session.Run.Call != 0 && !(sc.NT > 0 && sc.T[0].Rem == 0) {
			in = ReplyStop
		}
		if err := do(in); err != nil {
			putShell(ab)
			return nil, nil, nil, err
		}
	}
	var leftover []postInfo // timers still pending after the last input
	for i := 0; i < int(sb.NT); i++ {
		leftover = append(leftover, posted[sb.T[i].ID])
	}
	times, ok := schedule(steps, leftover, 2)
	if !ok {
		if times, ok = schedule(steps, leftover, 0); !ok {
			putShell(ab)
			return nil, nil, nil, fmt.Errorf("path %v: no times in whole milliseconds deliver its events in its order", path)
		}
	}
	return ab, steps, times, nil
}

// replayRun is the replay's pass 2: the real session at the times found,
// and what its scenario file is made of.
type replayRun struct {
	rp     *Replay
	r      State
	events []scenario.ExpectEvent
	turns  []*turnSpec
	acts   []scenario.Action
}

// realReplay runs the real session at times, each step checked against
// the abstract session's (ab, steps).
func realReplay(v *session.Variant, cfg *config, ab *shell, steps []replayStep, times []int64) (*replayRun, error) {
	raw := replayShell(v, cfg, true)
	defer putShell(raw)
	// Every record of the session, where the abstract one keeps those the
	// invariants read: 2.6 a step over the replay tests' paths, at most 4.
	raw.records = slices.Grow(raw.records, 3*len(steps)+8)
	run := &replayRun{rp: &Replay{}, r: initial()}
	var cur *turnSpec
	for k := range steps {
		st := &steps[k]
		in := st.in
		now := times[k]
		if in != FireTimer {
			raw.now = time.Duration(now) * time.Millisecond
		}
		switch {
		case in.isReply():
			m := &cfg.msgs[in]
			cur.stop, cur.msg, cur.switched, cur.duration, cur.done = m.msg.StopReason, m.msg.ErrorMessage, m.switched, now-cur.start, true
			cur = nil
		case in == ActAbort:
			if cur != nil {
				// The aborted call used up its turn; its reply never comes.
				cur.stop, cur.duration, cur.done = policy.StopReasonStop, now-cur.start+1, true
				cur = nil
			}
		}
		if a, ok := commandAction(in, ms(now)); ok {
			run.acts = append(run.acts, a)
		}
		nr, calls := len(raw.records), raw.calls
		raw.step(&run.r, in)
		if raw.now.Milliseconds() != now {
			return nil, fmt.Errorf("after %s: the timer fired at t=%d, not t=%d", in, raw.now.Milliseconds(), now)
		}
		if err := sameRetryRecords(ab.records[st.lo:st.hi], raw.records[nr:]); err != nil {
			return nil, fmt.Errorf("after %s at t=%d: %w", in, now, err)
		}
		if cfg.satKey(run.r) != st.key {
			return nil, fmt.Errorf("after %s at t=%d: the session at real times differs from the session at time 0:\nreal     %v\nabstract %v",
				in, now, run.r, st.key.state())
		}
		if raw.calls > calls {
			if cur != nil {
				return nil, fmt.Errorf("two calls in flight")
			}
			cur = &turnSpec{start: now}
			run.turns = append(run.turns, cur)
		}
		run.rp.Path = append(run.rp.Path, in)
		run.expectRecords(raw.records[nr:])
	}
	run.rp.Lines = NormalizeTrace(raw.records)
	rs := &run.r.Session.Retry
	run.rp.Final = Final{State: rs.State, Attempt: rs.Attempt, IsRetrying: rs.Open}
	if p := run.r.Session.Pending; p != 0 {
		run.rp.Final.Unresolved = []int{p}
	}
	return run, nil
}

// expectRecords adds the expected events of a step's records.
func (run *replayRun) expectRecords(records []trace.Record) {
	for i := range records {
		l := &records[i]
		t := l.T.Milliseconds()
		var ev scenario.ExpectEvent
		switch l.Type {
		case trace.AutoRetryStart:
			ev = expectEvent("t", t, "type", l.Type.String(), "attempt", l.Start.Attempt)
		case trace.AutoRetryEnd:
			ev = expectEvent("t", t, "type", l.Type.String(), "success", l.End.Success, "attempt", l.End.Attempt)
		case trace.PromptResolved:
			ev = expectEvent("t", t, "type", l.Type.String(), "prompt", l.Prompt)
		default:
			continue
		}
		run.events = append(run.events, ev)
		run.rp.Events = append(run.rp.Events, string(scenario.FormatEvent(&ev)))
	}
}

// file makes the replay's scenario file (rp.Scenario, rp.YAML).
func (run *replayRun) file(v *session.Variant, cfg *config, opt ReplayOptions) error {
	rp := run.rp
	file := &scenario.Scenario{Name: opt.Name, Description: opt.Description, Variant: v.Name,
		Settings:      cfg.set.Clone(),
		ContextWindow: 200000, Compaction: scenario.Compaction{Enabled: true, Succeed: true},
		Actions: run.acts}
	if cfg.set.Jittered() {
		if err := fixDraw(file, cfg.draw); err != nil {
			return err
		}
	}
	for _, t := range run.turns {
		if !t.done { // cannot happen after Extend; a call left in flight
			t.stop, t.duration = policy.StopReasonStop, 1_000_000
		}
		file.Turns = append(file.Turns, scenario.Turn{StopReason: t.stop, ErrorMessage: t.msg, SwitchModel: t.switched, Duration: ms(t.duration)})
	}
	if opt.Expect {
		f := rp.Final
		state := string(f.State)
		file.Expect = &scenario.Expect{Events: run.events, Final: &scenario.ExpectFinal{State: &state, Attempt: &f.Attempt,
			IsRetrying: &f.IsRetrying, UnresolvedPrompts: append([]int{}, f.Unresolved...), HasUnresolved: true}}
	}
	rp.YAML = scenario.Format(file)
	rp.Scenario = file
	return nil
}

// fixDraw makes every jitter draw of file's session u, as the explorer's
// are (JitterDraw). The scenario files of this build cannot fix the draw
// (sim draws from a seeded source), so a path of jittered settings is not
// replayed.
func fixDraw(file *scenario.Scenario, u float64) error {
	return notReplayable{fmt.Sprintf("jitter %s: the scenario file cannot fix the draws at %v, so sim's waits would differ from the explorer's", file.Settings.Jitter.Mode, u)}
}

// notReplayable is NewReplay's error for a path that scenario files
// cannot express (not a disagreement between the explorer and the
// session): jitter draws, waits of fractions of a millisecond.
type notReplayable struct{ why string }

func (e notReplayable) Error() string { return "replay: " + e.why }

// ms is n milliseconds.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// expectEvent builds an expected event from key, value pairs.
func expectEvent(kv ...any) scenario.ExpectEvent {
	ev := scenario.ExpectEvent{Fields: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i].(string)
		ev.Keys = append(ev.Keys, k)
		switch v := kv[i+1].(type) {
		case int:
			ev.Fields[k] = float64(v)
		case int64:
			ev.Fields[k] = float64(v)
		default:
			ev.Fields[k] = v
		}
	}
	return ev
}

// sameRetryRecords compares the records the explorer reads (abs, at
// abstract time) with the real session's (raw, every type), but for
// their times.
func sameRetryRecords(abs, raw []trace.Record) error {
	i := 0
	for j := range raw {
		r := &raw[j]
		if invariantRecords&(1<<r.Type) == 0 {
			continue
		}
		if i == len(abs) {
			return fmt.Errorf("the real session writes %s, the abstract one does not", r.Type)
		}
		x := &abs[i]
		i++
		if x.Type != r.Type || x.Edge != r.Edge || x.Start != r.Start || x.End != r.End || x.Fallback != r.Fallback {
			return fmt.Errorf("the abstract session writes %s %+v%+v%+v, the real one %s %+v%+v%+v",
				x.Type, x.Edge, x.Start, x.End, r.Type, r.Edge, r.Start, r.End)
		}
	}
	if i != len(abs) {
		return fmt.Errorf("the abstract session writes %s, the real one does not", abs[i].Type)
	}
	return nil
}

// schedule returns the earliest times (ms) of the steps' events such that
// a scheduler delivers them in order: a timer fires exactly at its arming
// step's time + its delay, a reply at least 1 ms after its call started,
// each event no earlier than the one before it and, if it was posted
// before it, strictly later; the timers still pending (leftover) come
// after the last. Inputs other than timers are at least gap ms after the
// step before. ok is false when no times fit. The constraints are
// differences of two times, solved by longest paths (Bellman-Ford): a
// positive cycle means there is no solution.
func schedule(steps []replayStep, leftover []postInfo, gap int64) (times []int64, ok bool) {
	type cons struct {
		a, b int   // t[b] - t[a] >= w
		w    int64 //
	}
	var cs []cons
	for k := range steps {
		st := &steps[k]
		switch st.kind {
		case stepTimer:
			d := st.delay.Milliseconds()
			cs = append(cs, cons{st.from, k, d}, cons{k, st.from, -d})
		case stepReply:
			cs = append(cs, cons{st.from, k, 1})
		}
		if k == 0 {
			continue
		}
		w := int64(0)
		if steps[k-1].seq > st.seq {
			w = 1
		}
		if st.kind != stepTimer {
			w = max(w, gap)
		}
		cs = append(cs, cons{k - 1, k, w})
	}
	if last := len(steps) - 1; last >= 0 {
		for _, p := range leftover {
			w := -p.delay.Milliseconds()
			if steps[last].seq > p.seq {
				w++
			}
			cs = append(cs, cons{last, p.step, w})
		}
	}
	times = make([]int64, len(steps))
	for range len(steps) + 1 {
		changed := false
		for _, c := range cs {
			if t := times[c.a] + c.w; t > times[c.b] {
				times[c.b], changed = t, true
			}
		}
		if !changed {
			return times, true
		}
	}
	return nil, false
}
