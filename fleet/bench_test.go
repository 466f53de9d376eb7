package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
)

// benchSessions is the size of the benchmarks' default fleet.
const benchSessions = 1_000_000

// reportRates reports sessions per second of wall-clock time and per
// second of the process's CPU time (which a machine busy with other work
// does not inflate) since cpu0.
func reportRates(b *testing.B, sessions int, cpu0 time.Duration) {
	b.ReportMetric(float64(sessions)/b.Elapsed().Seconds(), "sessions/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(sessions)/cpu.Seconds(), "sessions/cpu-s")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkFleetDefault: the default fleet of 1,000,000 sessions (each
// prompt a chain of three 529s then a success), one discrete-event
// simulation on one goroutine; sessions/s is the figure README reports.
func BenchmarkFleetDefault(b *testing.B) { benchDefaultFleet(b, fleetspec.Default(benchSessions)) }

// benchDefaultFleet runs cfg, the default fleet of benchSessions sessions
// changed in a way that keeps its result (a profile, a capacity it never
// reaches), and reports its rates: every session succeeds after four
// calls, none rejected.
func benchDefaultFleet(b *testing.B, cfg fleetspec.Config) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := runConfig(cfg, fleet.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if s := res.Groups[0].Profiles[0]; s.Succeeded != benchSessions || s.Calls != 4*benchSessions || s.Rejected != 0 {
			b.Fatalf("%+v", s)
		}
	}
	reportRates(b, benchSessions*b.N, cpu0)
}

// BenchmarkFleetDefaultJittered: the default fleet with a jittered
// profile (omp-2026-06): run alone, its sessions each simulated (a
// session's jitter draws are its own: none is replayed, SPEC §15.1,
// "Sessions apart").
func BenchmarkFleetDefaultJittered(b *testing.B) {
	cfg := fleetspec.Default(benchSessions)
	cfg.Profiles = fleetspec.Mix{{Profile: "omp-2026-06", Percent: 100}}
	benchDefaultFleet(b, cfg)
}

// BenchmarkFleetDefaultShared: the default fleet with an in-flight bound
// it never reaches (about 40 calls are in flight at once): the same
// sessions and result, but a provider whose capacity every call shares, so
// that the sessions run in the one event queue (SPEC §15.1, "Sessions
// apart"): what a fleet whose sessions meet costs.
func BenchmarkFleetDefaultShared(b *testing.B) {
	cfg := fleetspec.Default(benchSessions)
	cfg.Capacity = fleetspec.Capacity{MaxInFlight: 10_000}
	benchDefaultFleet(b, cfg)
}

// BenchmarkFleetSweep: the same 1,000,000 sessions as a sweep of four
// seeds of 250,000, its runs on every processor (-cpu 1,2 shows the
// scaling).
func BenchmarkFleetSweep(b *testing.B) {
	b.ReportAllocs()
	var cfgs []fleetspec.Config
	for seed := int64(1); seed <= 4; seed++ {
		c := fleetspec.Default(benchSessions / 4)
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	cpu0 := cpuTime()
	for b.Loop() {
		res, err := sweepConfigs(cfgs, fleet.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if s := res.Groups[0].Profiles[0]; s.Succeeded != benchSessions {
			b.Fatalf("%+v", s)
		}
	}
	reportRates(b, benchSessions*b.N, cpu0)
}

// BenchmarkSimDefaultSession: one session of the default fleet through
// sim, as a scenario with the JSON trace on (the session reset between
// runs): the figure the fleet's speed is compared with.
func BenchmarkSimDefaultSession(b *testing.B) {
	b.ReportAllocs()
	sc, err := scenario.Parse("default-session", []byte("{}"))
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		sc.Turns = append(sc.Turns, scenario.Turn{StopReason: policy.StopReasonError, ErrorMessage: fleetspec.Message529, Status: 529,
			Duration: 100 * time.Millisecond})
	}
	sc.Turns = append(sc.Turns, scenario.Turn{StopReason: policy.StopReasonStop, Duration: time.Second})
	s, err := sim.NewSession(sc, sim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuTime()
	for b.Loop() {
		s.Reset()
		if f, err := s.Run(); err != nil || f.State != policy.StateIdle || len(f.UnresolvedPrompts) != 0 || s.Trace().Lines() == 0 {
			b.Fatalf("%+v %v", f, err)
		}
	}
	reportRates(b, b.N, cpu0)
}

// runConfig runs the one fleet cfg (Run of PlanOf(cfg)): its result.
func runConfig(cfg fleetspec.Config, opt fleet.Options) (*fleet.Result, error) {
	return sweepConfigs([]fleetspec.Config{cfg}, opt)
}

// sweepConfigs runs the sweep cfgs (Run of PlanOf(cfgs...)): its result.
func sweepConfigs(cfgs []fleetspec.Config, opt fleet.Options) (*fleet.Result, error) {
	p, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), opt)
	if err != nil {
		return nil, err
	}
	return &p.Result, nil
}

// TestSessionsAllocateNothing: a fleet's allocations are its start-up's
// and its live sessions' (slots and queue, which grow with the sessions
// alive at once), none per session: the default fleet, run alone (one at
// a time: replayed, and simulated with a jittered profile) and in the one
// queue (an in-flight bound it never reaches, about 1,500 sessions alive
// from 15 s on), allocates as much for 16,000 sessions as for 4,000, give
// or take the few times a slice of the live sessions or of the queue
// grows once more when their peak is higher (the fast path's guard,
// beside BenchmarkFleetDefault's allocs per run).
func TestSessionsAllocateNothing(t *testing.T) {
	for _, way := range []string{"alone", "alone jittered", "shared"} {
		allocs := func(n int) float64 {
			cfg := fleetspec.Default(n)
			switch way {
			case "alone jittered": // (not replayed: every session simulated)
				cfg.Profiles = fleetspec.Mix{{Profile: "omp-2026-06", Percent: 100}}
			case "shared":
				cfg.Capacity = fleetspec.Capacity{MaxInFlight: 10_000}
			}
			return testing.AllocsPerRun(3, func() {
				if _, err := runConfig(cfg, fleet.Options{}); err != nil {
					t.Fatal(err)
				}
			})
		}
		// A run's own allocations (about 50, 110 in the one queue) are the
		// same for any number of sessions, to the allocation without the
		// race detector and within about ten with it (its scheduling moves
		// a few); one allocation a session would be 12,000 more.
		if small, large := allocs(4_000), allocs(16_000); large > small+24 {
			t.Errorf("%s: %.0f allocations for 16,000 sessions, %.0f for 4,000: %.4f a session, want none",
				way, large, small, (large-small)/12_000)
		}
	}
}
