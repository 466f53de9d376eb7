package fleet

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// TestAloneKeepsToItself: the fast path's structure. Sessions run alone
// (the default fleet, and the same with a jittered profile, whose sessions
// are simulated one by one rather than replayed) run one at a time through
// one slot, their events in the session's own queue, a few at a time,
// never in the run's: should a change send them through the shared queue
// or keep sessions alive side by side, this fails (beside
// TestSessionsAllocateNothing's allocations and BenchmarkFleetDefault's
// time).
func TestAloneKeepsToItself(t *testing.T) {
	jittered := fleetspec.Default(2_000)
	jittered.Profiles = fleetspec.Mix{{Profile: "omp-2026-06", Percent: 100}}
	for _, c := range []fleetspec.Config{fleetspec.Default(2_000), jittered} {
		r := runAlone(t, c)
		if r.q.seq != 0 || r.q.len() != 0 {
			t.Errorf("%s: sessions run alone scheduled %d events in the run's queue, want none", c.Profiles, r.q.seq)
		}
		if len(r.sessions) != 1 {
			t.Errorf("%s: sessions run alone took %d slots, want 1", c.Profiles, len(r.sessions))
		}
		if c := cap(r.local.ev); c > 8 {
			t.Errorf("a session's own queue grew to %d events, want a few", c)
		}
		if r.local.seq == 0 {
			t.Errorf("%s: no event went through a session's own queue", c.Profiles)
		}
		if st := r.stats[0]; st.Sessions != 2_000 || st.Succeeded != 2_000 {
			t.Errorf("%s: %d sessions, %d prompts done; want 2,000 and 2,000", c.Profiles, st.Sessions, st.Succeeded)
		}
	}
	if r := runAlone(t, jittered); r.replays || r.local.seq != 2_000*7 {
		t.Errorf("the jittered fleet: replays %v, %d events through the sessions' own queue; want false, 7 a session (4 answers, 3 backoff timers)", r.replays, r.local.seq)
	}
}

// runAlone runs fleet c (valid), which must run alone.
func runAlone(t *testing.T, c fleetspec.Config) *runner {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := newRunner(c.Normalized(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.run()
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !r.alone {
		t.Fatalf("%+v did not run alone", c)
	}
	return r
}

// TestAloneReplays: sessions run alone that draw nothing replay their
// profile's first session (runner.replays): the default fleet simulates
// one session and replays the others, a horizon that cuts the first
// session leaves every session simulated, and a fleet with a draw (jitter,
// a latency or count distribution, error rates) replays none.
// TestAloneEqualsQueue holds the replayed results to the queue's, byte for
// byte.
func TestAloneReplays(t *testing.T) {
	run := func(c fleetspec.Config) *runner { return runAlone(t, c) }
	if r := run(fleetspec.Default(2_000)); !r.replays || r.replayed != 1_999 {
		t.Errorf("the default fleet: replays %v, %d sessions replayed; want true, 1,999", r.replays, r.replayed)
	} else if len(r.memos) != 1 || r.memos[0].state != memoTaken || len(r.memos[0].sends) != 4 || len(r.memos[0].succeeded) != 1 {
		t.Errorf("the default fleet's memo: %+v, want taken, 4 wire calls, 1 success", r.memos)
	}
	// A think time is drawn only between prompts.
	think := fleetspec.Default(200)
	think.Think = fleetspec.Dist{Kind: fleetspec.DistExp, A: 1e9}
	if r := run(think); !r.replays || r.replayed != 199 {
		t.Errorf("one prompt, a think time drawn: replays %v, %d replayed; want true, 199", r.replays, r.replayed)
	}
	cut := fleetspec.Default(2_000)
	cut.Horizon = 7 * time.Second // the first session ends at 15.3 s
	if r := run(cut); !r.replays || r.replayed != 0 || r.memos[0].state != memoNot {
		t.Errorf("a horizon that cuts the first session: replays %v, %d replayed, memo state %d; want true, 0, %d",
			r.replays, r.replayed, r.memos[0].state, memoNot)
	}
	for name, edit := range map[string]func(*fleetspec.Config){
		"jitter":        func(c *fleetspec.Config) { c.Profiles = fleetspec.Mix{{Profile: "omp-2026-06", Percent: 100}} },
		"latency":       func(c *fleetspec.Config) { c.Latency = fleetspec.Dist{Kind: fleetspec.DistUniform, A: 1e9, B: 2e9} },
		"error latency": func(c *fleetspec.Config) { c.ErrorLatency = fleetspec.Dist{Kind: fleetspec.DistExp, A: 1e8} },
		"calls":         func(c *fleetspec.Config) { c.Calls = fleetspec.Dist{Kind: fleetspec.DistGeometric, A: 3} },
		"think":         func(c *fleetspec.Config) { c.Prompts = 2; c.Think = fleetspec.Dist{Kind: fleetspec.DistExp, A: 1e9} },
		"error rates":   func(c *fleetspec.Config) { c.Errors = []fleetspec.Rate{{Kind: fleetspec.Kind503, P: 0.01}} },
		"overflow":      func(c *fleetspec.Config) { c.Overflow = 0.01 },
	} {
		c := fleetspec.Default(200)
		edit(&c)
		if r := run(c); r.replays || r.replayed != 0 {
			t.Errorf("%s: replays %v, %d replayed; want none", name, r.replays, r.replayed)
		}
	}
}
