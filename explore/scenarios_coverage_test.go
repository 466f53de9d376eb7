package explore

import (
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// TestScenariosCoverSoundTable: the scenario files of scenarios/ exercise
// every transition of the sound table that a scenario file can reach, and
// the policy unit test TestSoundEveryRule cover the unreachable rest.
func TestScenariosCoverSoundTable(t *testing.T) {
	files, err := scenario.Files("../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	var traces [][]trace.Record
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			t.Fatal(err)
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
	covered, missed, unreachable := rep.Counts()
	if missed != 0 || covered == 0 {
		for _, u := range rep.Units {
			if u.Hits == 0 && u.Reachable {
				t.Errorf("no scenario exercises %+v", u)
			}
		}
		t.Fatalf("covered %d, missed %d, unreachable %d", covered, missed, unreachable)
	}
	if len(rep.Unattributed) != 0 {
		t.Errorf("transition lines no rule explains: %v", rep.Unattributed)
	}
}
