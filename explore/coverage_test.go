package explore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// TestCoverageAttribution replays every explored transition through sim and
// checks that Coverage attributes the trace's transition lines to exactly
// the rows the model fired.
func TestCoverageAttribution(t *testing.T) {
	for _, tc := range []struct {
		v  *policy.Variant
		mr int
	}{{policy.Sound, 0}, {policy.Sound, 1}, {policy.Sound, 3}, {policy.Original, 1}} {
		r := exploreAll(Options{Variant: tc.v, MaxRetries: tc.mr})
		m := newModel(tc.v, tc.mr, false)
		var traces [][]trace.Record
		want := map[Unit]int{}
		for i := 0; i < r.States; i++ {
			s := r.State(i)
			for in := Input(0); in < numInputs; in++ {
				if !m.enabled(&s, in) {
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
				// The model's fired rows along the replayed path.
				mm := newModel(tc.v, tc.mr, false)
				st := initial()
				for _, x := range rp.Path {
					st = mm.step(st, x)
					for _, o := range mm.obs {
						if o.Kind == ObsTransition {
							want[Unit{ruleIndex(tc.v, o.Rule), o.From}]++
						}
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
				t.Errorf("%s mr=%d: %s: coverage %d hits, model fired it %d times", tc.v.Name, tc.mr, u, u.Hits, w)
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
	rep, err := Coverage(policy.Sound, traces)
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
