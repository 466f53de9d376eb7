package fleet

import (
	"context"
	"testing"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/testkit"
)

// TestRunsReuseSessionSlots: runs one after another (a sweep's, a tune's)
// take their session slots from a run that ended (sessionSlots): a run's
// slots, a sess for each session alive at once, go back when it ends, and
// the next run starts with them, instead of growing its own from nothing
// (BenchmarkTuneDefault's allocations show the effect).
func TestRunsReuseSessionSlots(t *testing.T) {
	if testkit.Race {
		t.Skip("the race detector's sync.Pool drops some of what it is given")
	}
	cfg := fleetspec.Default(4_000)
	cfg.Capacity = fleetspec.Capacity{MaxInFlight: 10_000} // the one queue: about 1,500 sessions alive at once
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg = cfg.Normalized()
	if _, err := runOne(context.Background(), cfg, nil, Options{}); err != nil { // its slots go back
		t.Fatal(err)
	}
	r, err := newRunner(cfg, nil, Options{}) // and this run takes them
	if err != nil {
		t.Fatal(err)
	}
	if len(r.sessions) != 0 || cap(r.sessions) < 500 {
		t.Fatalf("a new run's slots: %d in use, room for %d; want none in use and room for the last run's (about 1,500)", len(r.sessions), cap(r.sessions))
	}
	room := cap(r.sessions)
	r.run()
	if r.err != nil || r.alone {
		t.Fatalf("the run: error %v, alone %v; want none and the one queue", r.err, r.alone)
	}
	if cap(r.sessions) != room {
		t.Errorf("the run grew its slots from room for %d to %d: it had the last run's, for as many sessions alive at once", room, cap(r.sessions))
	}
	used := r.sessions
	r.freeSlots()
	for i := range used {
		if used[i].agent != nil || used[i].stats != nil {
			t.Fatalf("freed slot %d of %d holds the run's pointers", i, len(used))
		}
	}
}
