package sim_test

import (
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
)

// TestSessionRunsTheLoadedPolicy: a session of a loaded scenario runs the
// policy the loader compiled (the same value: its settings were checked
// once, when the file was read, and NewSession checks nothing again); a
// scenario whose settings were changed by hand gets them compiled, and
// invalid ones are refused.
func TestSessionRunsTheLoadedPolicy(t *testing.T) {
	sc, err := scenario.Parse("p.yaml", []byte("settings: {classify: status, maxRetries: 2}\nturns: [{stopReason: stop}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := sc.Policy()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		s, err := sim.NewSession(sc, sim.Options{NoJSON: true})
		if err != nil {
			t.Fatal(err)
		}
		if s.Policy() != loaded {
			t.Fatalf("NewSession's policy %p; want the loader's %p (compiled once per load)", s.Policy(), loaded)
		}
	}
	sc.Settings.MaxRetries = 5
	s, err := sim.NewSession(sc, sim.Options{NoJSON: true})
	if err != nil || s.Policy() == loaded || s.Policy().Settings().MaxRetries != 5 {
		t.Fatalf("settings changed by hand: %v; want them compiled anew (maxRetries 5)", err)
	}
	sc.Settings.MaxRetries = -1
	if _, err := sim.NewSession(sc, sim.Options{NoJSON: true}); err == nil {
		t.Error("invalid settings by hand: NewSession succeeded; want Compile's error")
	}
}
