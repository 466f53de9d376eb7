package explore

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// TestCoverageAttribution replays every explored transition through sim and
// checks that Coverage attributes the trace's transition records to
// exactly the rows the explorer fired along the same paths. A replayed
// path goes on from its transition through transitions not yet replayed
// (coverWalks), so that the paths hit every transition that a path of its
// own would, in a tenth of the steps. The explorations run in parallel,
// each a subtest; sim runs the replay's scenario as NewReplay made it
// (TestReplayEveryState reads the scenarios back from their YAML).
func TestCoverageAttribution(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v  *session.Variant
		mr int
	}{{session.Sound, 0}, {session.Sound, 1}, {session.Sound, 3}, {session.Original, 1}} {
		t.Run(fmt.Sprintf("%s-mr%d", tc.v.Name, tc.mr), func(t *testing.T) {
			t.Parallel()
			coverageAttribution(t, tc.v, tc.mr)
		})
	}
}

// coverageAttribution is TestCoverageAttribution for variant v and
// maxRetries mr.
func coverageAttribution(t *testing.T, v *session.Variant, mr int) {
	r := exploreAll(Options{Variant: v, MaxRetries: mr})
	sh := newShell(v, mr, false)
	var traces [][]trace.Record
	want := map[Unit]int{}
	fired := map[Unit]bool{}
	for _, rp := range coverWalks(t, r, v, mr) {
		res, err := sim.RunScenario(rp.Scenario, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, transitionRecords(res.Records))
		// The rows the explorer fires along the replayed path.
		st := initial()
		for _, x := range rp.Path {
			sh.step(&st, x)
			for _, u := range sh.units {
				unit := Unit{u / len(policy.States()), policy.States()[u%len(policy.States())]}
				want[unit]++
				fired[unit] = true
			}
		}
	}
	if !maps.Equal(fired, r.Reached) {
		t.Errorf("the replayed paths fire the rows %v, the exploration reached %v", fired, r.Reached)
	}
	rep, err := Coverage(v, traces)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Unattributed) > 0 {
		t.Errorf("unattributed: %v", rep.Unattributed[:min(5, len(rep.Unattributed))])
	}
	for _, u := range rep.Units {
		if w := want[Unit{u.Rule, u.From}]; w != u.Hits {
			t.Errorf("%s: coverage %d hits, the explorer fired it %d times", u, u.Hits, w)
		}
	}
}

// transitionRecords returns a copy of the transition records of records,
// the only ones Coverage reads: the test holds the traces of every replay
// (4,210 at the original's maxRetries 1) until it calls Coverage, and the
// transitions are a tenth of the records.
func transitionRecords(records []trace.Record) []trace.Record {
	n := 0
	for i := range records {
		if records[i].Type == trace.Transition {
			n++
		}
	}
	out := make([]trace.Record, 0, n)
	for i := range records {
		if records[i].Type == trace.Transition {
			out = append(out, records[i])
		}
	}
	return out
}

// edge is a transition of an exploration: an enabled input of a state.
type edge struct {
	from int
	in   Input
}

// maxWalk bounds the inputs a cover walk appends after its first
// transition (a longer path is more often beyond the replay's timer
// bounds), and maxDetour the inputs it takes through transitions already
// hit to reach one that is not.
const (
	maxWalk   = 16
	maxDetour = 3
)

// coverWalks returns replays of r's exploration (Extend) that together
// hit every transition whose own path (the shortest path to its state,
// then its input) replays. A walk is the path of the first transition
// not yet hit, then from each state it reaches the first input not yet
// hit, or else the shortest detour (up to maxDetour inputs) to a state
// that has one, up to maxWalk inputs; a walk that does not replay is cut
// back to that first transition. It fails the test unless every
// transition is hit or its own path does not replay (as the replay of
// every transition on its own path would have it).
func coverWalks(t *testing.T, r *Result, v *session.Variant, mr int) []*Replay {
	t.Helper()
	sh := newShell(v, mr, false)
	index := make(map[key]int, r.States)
	for i := range r.States {
		s := r.State(i)
		index[s.key()] = i
	}
	// succ[i] are the transitions of state i and the states they lead to
	// (-1: pruned).
	type arc struct {
		in Input
		to int
	}
	succ := make([][]arc, r.States)
	n := 0
	for i := range r.States {
		for in := Input(0); in < numInputs; in++ {
			s := r.State(i)
			if !sh.enabled(&s, in) {
				continue
			}
			n++
			sh.step(&s, in)
			to := -1
			if !sh.pruned {
				sh.cfg.saturate(&s)
				j, ok := index[s.key()]
				if !ok {
					t.Fatalf("state %d, input %v: a state the exploration did not reach", i, in)
				}
				to = j
			}
			succ[i] = append(succ[i], arc{in, to})
		}
	}
	// to is the state input in leads to from state i (-1: pruned).
	to := func(i int, in Input) int {
		for _, a := range succ[i] {
			if a.in == in {
				return a.to
			}
		}
		t.Fatalf("state %d: input %v is not enabled", i, in)
		return -1
	}
	covered := map[edge]bool{}
	open := func(i int) (Input, bool) {
		for _, a := range succ[i] {
			if !covered[edge{i, a.in}] {
				return a.in, true
			}
		}
		return 0, false
	}
	// detour is the shortest path (up to maxDetour inputs) from i to a
	// state with a transition not yet hit, through transitions.
	detour := func(i int) []Input {
		type visit struct {
			state int
			path  []Input
		}
		seen := map[int]bool{i: true}
		level := []visit{{i, nil}}
		for range maxDetour {
			var nextLevel []visit
			for _, x := range level {
				for _, a := range succ[x.state] {
					if a.to < 0 || seen[a.to] {
						continue
					}
					seen[a.to] = true
					p := append(slices.Clone(x.path), a.in)
					if _, ok := open(a.to); ok {
						return p
					}
					nextLevel = append(nextLevel, visit{a.to, p})
				}
			}
			level = nextLevel
		}
		return nil
	}
	// hit marks the transitions along path as hit.
	hit := func(path []Input) {
		i := 0
		for _, in := range path {
			covered[edge{i, in}] = true
			i = to(i, in) // a replayed path takes no pruned transition
		}
	}
	var replays []*Replay
	ownFails, steps, cut := 0, 0, 0
	for i := range r.States {
		for {
			in, ok := open(i)
			if !ok {
				break
			}
			own := append(r.PathTo(i), in)
			path := slices.Clone(own)
			// the walk marks what it takes, to choose its next input, and
			// is undone: hit marks what the replay took
			taken := []edge{{i, in}}
			covered[taken[0]] = true
			cur := i
			for len(path) < len(own)+maxWalk {
				if cur = to(cur, in); cur < 0 {
					break
				}
				if next, ok := open(cur); ok {
					in = next
				} else if d := detour(cur); d != nil {
					for _, x := range d {
						cur = to(cur, x)
					}
					path = append(path, d...)
					in, _ = open(cur)
				} else {
					break
				}
				path = append(path, in)
				taken = append(taken, edge{cur, in})
				covered[edge{cur, in}] = true
			}
			for _, e := range taken {
				delete(covered, e)
			}
			rp, err := NewReplay(v, mr, path, ReplayOptions{Extend: true})
			if err != nil && len(path) > len(own) {
				cut++
				rp, err = NewReplay(v, mr, own, ReplayOptions{Extend: true})
			}
			if err != nil {
				covered[edge{i, own[len(own)-1]}] = true // not replayable on its own path (timer bound)
				ownFails++
				continue
			}
			hit(rp.Path)
			steps += len(rp.Path)
			replays = append(replays, rp)
		}
	}
	t.Logf("%d transitions: %d replays of %d inputs (%d walks cut back), %d not replayable on their own path", n, len(replays), steps, cut, ownFails)
	return replays
}

func TestCoverageScenarios(t *testing.T) {
	files, err := filepath.Glob("../scenarios/*")
	if err != nil || len(files) == 0 {
		t.Skip("no scenarios")
	}
	var traces [][]trace.Record
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		res, err := sim.RunScenario(sc, sim.Options{Variant: "sound"})
		if err != nil {
			t.Fatal(err)
		}
		traces = append(traces, res.Records)
	}
	rep, err := Coverage(session.Sound, traces)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Format(&b)
	if len(rep.Unattributed) > 0 {
		t.Errorf("unattributed transitions:\n%s", b.String())
	}
	if testing.Verbose() {
		os.Stdout.Write(b.Bytes())
	}
}

// TestCoverageUsesTheRuleField: a transition record is attributed to the
// rule its rule field names, in its from-state, and only when that rule
// fits the record's input, event and target; a record without a rule, or
// whose rule does not fit, is unattributed (nothing is inferred from the
// lines around it).
func TestCoverageUsesTheRuleField(t *testing.T) {
	v := session.Sound
	prompt, retried := -1, -1
	for i, r := range v.Retry.Rules() {
		switch {
		case r.Input == retry.InputPrompt && r.Event == "prompt":
			prompt = i
		case r.Input == retry.InputRetryable && r.Event == "retry" && retried < 0:
			retried = i
		}
	}
	edge := func(rule int, in retry.Input, from, event, to policy.State) trace.Record {
		return trace.Record{Type: trace.Transition, Edge: trace.Edge{From: string(from), Event: string(event), To: string(to), Input: in, Rule: rule}}
	}
	ok := edge(prompt, retry.InputPrompt, policy.StateExhausted, "prompt", policy.StateIdle)
	accepted := trace.Record{Type: trace.Response, Response: trace.ResponseRecord{Command: "prompt", Success: true}}
	rep, err := Coverage(v, [][]trace.Record{{
		ok,
		accepted, edge(-1, retry.InputPrompt, policy.StateExhausted, "prompt", policy.StateIdle), // no rule field
		accepted, edge(retried, retry.InputPrompt, policy.StateExhausted, "prompt", policy.StateIdle), // another rule's index
		edge(len(v.Retry.Rules()), retry.InputPrompt, policy.StateExhausted, "prompt", policy.StateIdle), // no such rule
		edge(prompt, retry.InputPrompt, policy.StateBackoff, "prompt", policy.StateIdle),                 // not from backoff
	}})
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, u := range rep.Units {
		hits += u.Hits
		if u.Hits != 0 && (u.Rule != prompt || u.From != policy.StateExhausted || u.Hits != 1) {
			t.Errorf("%s: %d hits", u, u.Hits)
		}
	}
	if hits != 1 || len(rep.Unattributed) != 4 {
		t.Errorf("%d hits, unattributed %q; want 1 hit and 4 unattributed", hits, rep.Unattributed)
	}
}
