package fleet

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// TestCatalogSharesClassifiers: profiles that share a classifier (the
// original's, nil, of omp-2026-02 and omp-2026-06) share its index in the
// catalog, so that an answer is classified once for them all (a fleet of
// retry-afters that change by the second classifies each, and the tune
// fleets mix these two); a profile with a classifier of its own (pi's
// patterns) keeps its own index, and each index's outcome is its
// classifier's.
func TestCatalogSharesClassifiers(t *testing.T) {
	c := fleetspec.Default(10)
	c.Profiles = fleetspec.Mix{{Profile: "omp-2026-02", Percent: 40}, {Profile: "omp-2026-06", Percent: 30}, {Profile: "pi", Percent: 30}}
	r, err := newRunner(c.Normalized(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.cat.cls) != 2 || r.agents[0].cls != 0 || r.agents[1].cls != 0 || r.agents[2].cls != 1 {
		t.Fatalf("%d classifiers, the profiles' indices %d %d %d; want 2, and 0 0 1", len(r.cat.cls), r.agents[0].cls, r.agents[1].cls, r.agents[2].cls)
	}
	epoch := time.UnixMilli(session.DefaultEpochMs).UTC()
	for _, a := range []fleetspec.Answer{{Kind: fleetspec.KindUsageLimit, Hint: fleetspec.HintHeader, RetryAfter: 3599},
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintText, RetryAfter: 30}, {Kind: fleetspec.Kind529}, {Tool: true}} {
		for _, l := range r.agents {
			p, err := policy.ProfileByName(l.name)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := p.Policy()
			if err != nil {
				t.Fatal(err)
			}
			want := pol.Classifier().Reply(a.Message(), session.DefaultContextWindow, epoch)
			if got := *r.cat.outcome(&a, l.cls); got != want {
				t.Errorf("%s, %+v: the catalog's outcome %+v, its classifier's %+v", l.name, a, got, want)
			}
		}
	}
	if r.cat.cls[1] == nil {
		t.Errorf("pi's classifier is the original's")
	}
}
