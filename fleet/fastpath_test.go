package fleet

import (
	"testing"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// TestAloneKeepsToItself: the fast path's structure. Sessions run alone
// (the default fleet) run one at a time through one slot, their events in
// the session's own queue, a few at a time, never in the run's: should a
// change send them through the shared queue or keep sessions alive side by
// side, this fails (beside TestSessionsAllocateNothing's allocations and
// BenchmarkFleetDefault's time).
func TestAloneKeepsToItself(t *testing.T) {
	r, err := newRunner(fleetspec.Default(2_000).Normalized(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.alone {
		t.Fatal("the default fleet did not run alone")
	}
	if r.q.seq != 0 || r.q.len() != 0 {
		t.Errorf("sessions run alone scheduled %d events in the run's queue, want none", r.q.seq)
	}
	if len(r.sessions) != 1 {
		t.Errorf("sessions run alone took %d slots, want 1", len(r.sessions))
	}
	if c := cap(r.local.ev); c > 8 {
		t.Errorf("a session's own queue grew to %d events, want a few", c)
	}
	if r.local.seq == 0 {
		t.Error("no event went through a session's own queue")
	}
	if st := r.stats[0]; st.Sessions != 2_000 || st.Succeeded != 2_000 {
		t.Errorf("%d sessions, %d prompts done; want 2,000 and 2,000", st.Sessions, st.Succeeded)
	}
}
