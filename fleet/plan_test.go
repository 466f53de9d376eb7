package fleet_test

import (
	"bytes"
	"context"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// bigSweep is the default fleet of one session over seeds 1 to runs.
func bigSweep(runs int64) []*fleetspec.Spec {
	c := fleetspec.Default(1)
	s := fleetspec.NewSpec(c)
	s.SeedFrom, s.SeedTo = 1, runs
	return []*fleetspec.Spec{s}
}

// allocated runs fn and returns the bytes it allocated and the process CPU
// time it took.
func allocated(fn func()) (uint64, time.Duration) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	fn()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, cpu
}

// TestShardOfAMillionRunSweep: the one-run shard of a 1,000,000-run sweep
// is run from the sweep's definition, in under 50 MB allocated and 1 s of
// CPU time (issue 19 §2: it took 2.7 GB and 33 s when every shard built and
// hashed every run's configuration), and holds the one run it should.
func TestShardOfAMillionRunSweep(t *testing.T) {
	const runs = 1_000_000
	var p *fleet.Partial
	var err error
	bytes, cpu := allocated(func() {
		p, err = fleet.Run(context.Background(), fleet.PlanOfSpecs(bigSweep(runs)...), fleet.Options{Shard: fleet.Shard{Index: runs - 1, Count: runs}, Workers: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shard %d/%d of %d runs: %d bytes allocated, %v CPU", runs-1, runs, runs, bytes, cpu)
	if bytes > 50<<20 {
		t.Errorf("%d bytes allocated (allowed: under 50 MB)", bytes)
	}
	if cpu > time.Second {
		t.Errorf("%v of CPU time (allowed: under 1 s)", cpu)
	}
	if p.Runs != runs || len(p.Result.Groups) != 1 || !slices.Equal(p.Result.Groups[0].Seeds, []int64{runs}) {
		t.Fatalf("runs %d, groups %+v", p.Runs, p.Result.Groups)
	}
	if got := fleet.PlanOfSpecs(bigSweep(runs)...).Sessions(fleet.Shard{Index: 3, Count: 4}); got != runs/4 {
		t.Errorf("Plan.Sessions of shard 3/4: %d, want %d", got, runs/4)
	}
}

// TestShardMemoryIndependentOfSweepSize: a one-run shard allocates about as
// much in a sweep of 10^6 runs as in one of 10 (within 1 MB).
func TestShardMemoryIndependentOfSweepSize(t *testing.T) {
	measure := func(runs int64) uint64 {
		b, _ := allocated(func() {
			if _, err := fleet.Run(context.Background(), fleet.PlanOfSpecs(bigSweep(runs)...), fleet.Options{Shard: fleet.Shard{Index: 0, Count: int(runs)}, Workers: 1}); err != nil {
				t.Fatal(err)
			}
		})
		return b
	}
	small, large := measure(10), measure(1_000_000)
	t.Logf("one-run shard: %d bytes in a sweep of 10 runs, %d in one of 10^6", small, large)
	if large > small+1<<20 {
		t.Errorf("a one-run shard allocates %d bytes in a sweep of 10^6 runs, %d in one of 10", large, small)
	}
}

// TestSpecsShardEqualsConfigsShard: a shard run from the specs is the shard
// run from their expanded configurations, byte for byte (same identity,
// groups, plan and result), for every shard of several splits.
func TestSpecsShardEqualsConfigsShard(t *testing.T) {
	a := fleetspec.NewSpec(fleetspec.Default(30))
	a.Config.Name = "a"
	a.Mixes = []fleetspec.Mix{{{Profile: "omp-2026-02", Percent: 100}}, {{Profile: "pi", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}}
	a.SeedFrom, a.SeedTo = 3, 5
	b := fleetspec.NewSpec(fleetspec.Default(20))
	b.Config.Name = "b"
	b.SeedFrom, b.SeedTo = 1, 4
	specs := []*fleetspec.Spec{a, b}
	var cfgs []fleetspec.Config
	for _, s := range specs {
		cfgs = append(cfgs, s.Configs()...)
	}
	for _, n := range []int{1, 2, 3, 7, 13} {
		for i := range n {
			sh := fleet.Shard{Index: i, Count: n}
			fromSpecs, err := fleet.Run(context.Background(), fleet.PlanOfSpecs(specs...), fleet.Options{Shard: sh})
			if err != nil {
				t.Fatal(err)
			}
			fromCfgs, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), fleet.Options{Shard: sh})
			if err != nil {
				t.Fatal(err)
			}
			js, _ := fromSpecs.JSON()
			jc, _ := fromCfgs.JSON()
			if !bytes.Equal(js, jc) {
				t.Fatalf("shard %s: from specs\n%s\nfrom configs\n%s", sh, js, jc)
			}
		}
	}
	if got, want := fleet.PlanOfSpecs(specs...).Sessions(fleet.Shard{Index: 1, Count: 3}), int64(30*2+20*1); got != want {
		t.Errorf("Plan.Sessions: %d, want %d", got, want)
	}
}

// BenchmarkShardMemory: the one-run shard of sweeps of 10 to 10^6 runs;
// B/op and allocs/op stay the same whatever the sweep's size.
func BenchmarkShardMemory(b *testing.B) {
	for _, runs := range []int64{10, 1_000, 100_000, 1_000_000} {
		b.Run("runs="+strconv.FormatInt(runs, 10), func(b *testing.B) {
			b.ReportAllocs()
			specs := bigSweep(runs)
			for b.Loop() {
				if _, err := fleet.Run(context.Background(), fleet.PlanOfSpecs(specs...), fleet.Options{Shard: fleet.Shard{Index: int(runs) - 1, Count: int(runs)}, Workers: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
