package fleet

import (
	"reflect"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
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

// TestCatalogLastAnswer: answers with a retry-after, looked up in runs
// and interleaved, each get their own entry and outcome (the entry of the
// answer looked up last is found without the map: a memo that ignored a
// field of the answer would give a neighbour's), and plain answers do not
// disturb it.
func TestCatalogLastAnswer(t *testing.T) {
	c := newCatalog([]*classify.Classifier{nil})
	seq := []fleetspec.Answer{
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: 30},
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: 30},
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: 29},
		{Kind: fleetspec.Kind529},
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintText, RetryAfter: 29},
		{Kind: fleetspec.KindUsageLimit, Hint: fleetspec.HintHeader, RetryAfter: 29},
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: 30},
		{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: 29},
	}
	epoch := time.UnixMilli(session.DefaultEpochMs).UTC()
	for i, a := range seq {
		if e := c.entry(a); !reflect.DeepEqual(e.msg, a.Message()) {
			t.Errorf("%d: %+v: the entry's message %+v, want %+v", i, a, e.msg, a.Message())
		}
		if got, want := *c.outcome(&a, 0), classify.ClassifyReply(a.Message(), session.DefaultContextWindow, epoch); got != want {
			t.Errorf("%d: %+v: outcome %+v, want %+v", i, a, got, want)
		}
		if a.RetryAfter != 0 && (c.last == nil || c.lastAnswer != a) {
			t.Errorf("%d: %+v: not the last answer looked up (%+v)", i, a, c.lastAnswer)
		}
	}
	if len(c.entries) != 5 {
		t.Errorf("%d entries, want 5 (four answers with a retry-after, one without)", len(c.entries))
	}
}
