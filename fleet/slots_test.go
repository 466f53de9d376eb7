package fleet

import (
	"context"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/testkit"
)

// TestRunsReuseSessionSlots: runs one after another (a sweep's, a tune's)
// take their session slots from a run that ended (sessionSlots): the
// slots, a sess for each session alive at once, are allocated once, not
// once a run. Without it every run allocates its slots anew, and more, as
// the slice doubles up to its peak.
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
	r, err := newRunner(cfg, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	if r.err != nil || r.alone {
		t.Fatalf("the run: error %v, alone %v; want none and the one queue", r.err, r.alone)
	}
	slots := uint64(len(r.sessions)) * uint64(unsafe.Sizeof(sess{}))
	if len(r.sessions) < 500 {
		t.Fatalf("%d sessions alive at once at most: too few for the check to see the slots", len(r.sessions))
	}
	r.freeSlots()
	const runs = 8
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := runOne(context.Background(), cfg, nil, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun >= slots/2 {
		t.Errorf("a run allocates %d bytes, its session slots are %d: the slots are not reused from run to run", perRun, slots)
	}
}
