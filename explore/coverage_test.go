package explore

import (
	"bytes"
	"os"
	"path/filepath"
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
// exactly the rows the explorer fired along the same paths.
func TestCoverageAttribution(t *testing.T) {
	for _, tc := range []struct {
		v  *session.Variant
		mr int
	}{{session.Sound, 0}, {session.Sound, 1}, {session.Sound, 3}, {session.Original, 1}} {
		r := exploreAll(Options{Variant: tc.v, MaxRetries: tc.mr})
		sh := newShell(tc.v, tc.mr, false)
		var traces [][]trace.Record
		want := map[Unit]int{}
		for i := 0; i < r.States; i++ {
			s := r.State(i)
			for in := Input(0); in < numInputs; in++ {
				if !sh.enabled(&s, in) {
					continue
				}
				rp, err := NewReplay(tc.v, tc.mr, append(r.PathTo(i), in), ReplayOptions{Extend: true})
				if err != nil {
					continue // not replayable (timer bound)
				}
				sc, err := scenario.Parse("x.yaml", rp.YAML)
				if err != nil {
					t.Fatal(err)
				}
				res, err := sim.RunScenario(sc, sim.Options{})
				if err != nil {
					t.Fatal(err)
				}
				traces = append(traces, res.Records)
				// The rows the explorer fires along the replayed path.
				st := initial()
				for _, x := range rp.Path {
					sh.step(&st, x)
					for _, u := range sh.units {
						want[Unit{u / len(policy.States()), policy.States()[u%len(policy.States())]}]++
					}
				}
			}
		}
		rep, err := Coverage(tc.v, traces)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Unattributed) > 0 {
			t.Errorf("%s mr=%d: unattributed: %v", tc.v.Name, tc.mr, rep.Unattributed[:min(5, len(rep.Unattributed))])
		}
		for _, u := range rep.Units {
			if w := want[Unit{u.Rule, u.From}]; w != u.Hits {
				t.Errorf("%s mr=%d: %s: coverage %d hits, the explorer fired it %d times", tc.v.Name, tc.mr, u, u.Hits, w)
			}
		}
	}
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
