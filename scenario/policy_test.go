package scenario

import (
	"errors"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

// TestLoadedPolicyIsTheOneCheck: loading checks the settings once, by
// compiling them, and keeps the result: Policy gives that same value
// every time (nothing compiled or checked again downstream) until the
// Settings are changed by hand, when it compiles the new ones (refusing
// invalid ones); SetProfile compiles its merge once, and a scenario built
// in Go compiles on demand.
func TestLoadedPolicyIsTheOneCheck(t *testing.T) {
	sc, err := Parse("p.yaml", []byte("settings: {classify: strict, retryablePatterns: ['slow down']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p1, err1 := sc.Policy()
	p2, err2 := sc.Policy()
	if err1 != nil || err2 != nil || p1 == nil || p1 != sc.pol || p2 != p1 {
		t.Fatalf("Policy() = %p, %p (%v, %v); want the loader's %p both times", p1, p2, err1, err2, sc.pol)
	}
	if p1.Classifier() == nil || !p1.Settings().Equal(sc.Settings) {
		t.Errorf("the loader's policy: classifier %v, settings %+v; want strict's classifier and the scenario's settings", p1.Classifier(), p1.Settings())
	}

	if err := sc.SetProfile("codex"); err != nil {
		t.Fatal(err)
	}
	p3, err := sc.Policy()
	if err != nil || p3 != sc.pol || p3 == p1 || !p3.Settings().Equal(sc.Settings) || sc.Profile != "codex" {
		t.Errorf("after SetProfile: Policy() = %p (%v), kept %p, before %p; want the one SetProfile compiled", p3, err, sc.pol, p1)
	}

	sc.Settings.MaxRetries = 7 // by hand: the kept policy no longer holds
	p4, err := sc.Policy()
	if err != nil || p4 == p3 || p4.Settings().MaxRetries != 7 {
		t.Errorf("Settings changed by hand: Policy() = %p (%v), maxRetries %d; want a new policy with 7", p4, err, p4.Settings().MaxRetries)
	}
	sc.Settings.MaxRetries = -1
	var se *policy.SettingsError
	if p, err := sc.Policy(); p != nil || !errors.As(err, &se) || se.Field != "maxRetries" {
		t.Errorf("invalid settings by hand: Policy() = %p, %v; want a *policy.SettingsError for maxRetries", p, err)
	}

	built := &Scenario{Settings: policy.DefaultSettings()}
	if p, err := built.Policy(); err != nil || !p.Settings().Equal(policy.DefaultSettings()) {
		t.Errorf("a scenario built in Go: Policy() = %v, %v; want the default settings compiled", p, err)
	}
}
