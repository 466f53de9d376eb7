package tune

import (
	"testing"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
)

// TestCandidateRunsItsPolicy: a candidate's settings are checked once,
// when the tune makes it (compiled), and every run of it (the short run,
// each seed) takes that policy, checking nothing again; a Candidate built
// in Go (no policy kept) has its settings compiled by the run's plan.
func TestCandidateRunsItsPolicy(t *testing.T) {
	tn := &Tuner{base: policy.DefaultSettings(), seen: map[string]bool{}}
	c := tn.candidate(nil)
	if c == nil || c.pol == nil {
		t.Fatalf("candidate %+v: no compiled policy kept", c)
	}
	for _, cfg := range []fleetspec.Config{fleetspec.Default(3), tn.short(fleetspec.Default(30))} {
		if p, err := c.run(cfg).Compile(); err != nil || p != c.pol {
			t.Errorf("a run's settings: %p, %v; want the candidate's %p", p, err, c.pol)
		}
	}
	built := &Candidate{Settings: c.Settings}
	if p, err := built.run(fleetspec.Default(3)).Compile(); err != nil || p == nil || p == c.pol || !p.Settings().Equal(c.Settings) {
		t.Errorf("a Candidate built in Go: %v, %v; want its settings compiled by the run", p, err)
	}
	bad := policy.DefaultSettings()
	bad.MaxBackoff = bad.BaseDelay / 2 // a cap below the base: invalid together
	if c := (&Tuner{base: bad, seen: map[string]bool{}}).candidate(nil); c != nil {
		t.Error("invalid settings made a candidate")
	}
}
