package fleet

import (
	"bytes"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestSeriesCoarsens: bins of 100 ms until a call falls past the 1024th,
// then twice as wide, the counts kept.
func TestSeriesCoarsens(t *testing.T) {
	var s Series
	s.Add(0)
	s.Add(150 * time.Millisecond)
	s.Add(102399 * time.Millisecond)
	if s.BinWidth() != SeriesBase || s.Counts[0] != 1 || s.Counts[1] != 1 || s.Counts[1023] != 1 {
		t.Fatalf("width %v, counts %v %v %v", s.BinWidth(), s.Counts[0], s.Counts[1], s.Counts[1023])
	}
	s.Add(102400 * time.Millisecond) // past the last bin
	if s.BinWidth() != 2*SeriesBase || s.Counts[0] != 2 || s.Counts[511] != 1 || s.Counts[512] != 1 || s.Total() != 4 {
		t.Fatalf("width %v, counts %v %v %v, total %d", s.BinWidth(), s.Counts[0], s.Counts[511], s.Counts[512], s.Total())
	}
	s.Add(time.Duration(1<<62) + 12345) // far away: many doublings, no overflow
	if s.Total() != 5 || s.Counts[0] != 4 || s.BinWidth()*SeriesBins <= time.Duration(1<<62) {
		t.Fatalf("width %v, total %d, first %d", s.BinWidth(), s.Total(), s.Counts[0])
	}
}

// TestSeriesMergeExact: events split between two series in any way, each
// coarsened on its own, merge (either way round) into exactly the series
// of all of them.
func TestSeriesMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var all, a, b Series
		span := time.Duration(rng.Int64N(int64(time.Hour))) + 1
		for range rng.IntN(500) {
			at := time.Duration(rng.Int64N(int64(span)))
			all.Add(at)
			if rng.IntN(3) == 0 {
				a.Add(at)
			} else {
				b.Add(at)
			}
		}
		ab, ba := a, b
		ab.Merge(&b)
		ba.Merge(&a)
		if ab != all || ba != all {
			t.Fatalf("trial %d: merged widths %v/%v, all %v; totals %d/%d/%d", trial, ab.BinWidth(), ba.BinWidth(), all.BinWidth(),
				ab.Total(), ba.Total(), all.Total())
		}
	}
}

// TestWireSeriesCountsWireCalls: in a run with an SDK layer, every
// profile's series (and the all row's) adds up to its wire calls.
func TestWireSeriesCountsWireCalls(t *testing.T) {
	cfg := seedSweep(1, 1)[0]
	cfg.SDK = "anthropic-sdk"
	res, err := runConfig(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	if len(g.Profiles) != 3 || len(g.Outages) != 1 {
		t.Fatalf("%d profiles, outages %v", len(g.Profiles), g.Outages)
	}
	for _, s := range g.Profiles {
		if s.WireCalls <= s.Calls || s.WireSeries.Total() != s.WireCalls {
			t.Errorf("%s: series %d, wire calls %d, calls %d", s.Profile, s.WireSeries.Total(), s.WireCalls, s.Calls)
		}
	}
}

// TestSweepProgress: a sweep's progress counter ends at the sum of its
// runs' sessions (those cut by a horizon too, and past a batch), while the
// result is the same as without it.
func TestSweepProgress(t *testing.T) {
	cfgs := seedSweep(1, 3)
	cfgs[1].Sessions = 3000
	cfgs[2].Horizon = 3 * time.Second // sessions not done, not arrived
	var done atomic.Int64
	with, err := sweepConfigs(cfgs, Options{Progress: &done})
	if err != nil {
		t.Fatal(err)
	}
	without, err := sweepConfigs(cfgs, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	wj, _ := with.JSON()
	oj, _ := without.JSON()
	if got := done.Load(); got != 200+3000+200 || !bytes.Equal(wj, oj) {
		t.Fatalf("progress %d, want 3400; results equal: %v", got, bytes.Equal(wj, oj))
	}
	var w int64
	for _, s := range with.Groups[0].Profiles[:2] {
		w += s.Waiting
	}
	if w == 0 {
		t.Fatal("the horizon left no prompt waiting: the test does not cut sessions")
	}
}
