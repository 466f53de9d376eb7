package retry

import "testing"

// TestControllerAgreesWithLooplab: for every declared transition of both
// variants, firing it on a live looplab instance gives the same target as
// the compiled lookup the Controller uses.
func TestControllerAgreesWithLooplab(t *testing.T) {
	for _, v := range []*Variant{Sound(), Original()} {
		m := v.Machine()
		edges := m.Edges()
		if len(edges) == 0 {
			t.Fatalf("%s: no edges", v.Name)
		}
		for _, e := range edges {
			inst := m.NewInstance()
			if err := inst.SetState(e.From); err != nil {
				t.Fatal(err)
			}
			got, err := inst.Fire(e.Event)
			if err != nil {
				t.Fatalf("%s: looplab refuses %v: %v", v.Name, e, err)
			}
			to, ok := m.Lookup(e.From, e.Event)
			if !ok || to != got.To || inst.Current() != e.To {
				t.Errorf("%s: %v: looplab went to %s, lookup says %s (%v)", v.Name, e, got.To, to, ok)
			}
		}
		// Every transition a rule can take is a declared edge.
		for _, r := range v.rules {
			if r.Ignored() {
				continue
			}
			for _, s := range r.From {
				if to, ok := m.Lookup(string(s), r.Event); !ok || to != string(r.To) {
					t.Errorf("%s: rule %s from %s: event %q not declared to %s", v.Name, r.Input, s, r.Event, r.To)
				}
			}
		}
	}
}
