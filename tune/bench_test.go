package tune

import (
	"context"
	"testing"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// BenchmarkTuneDefault is a default tune (every default axis and
// objective, 3 seeds, every named profile) of fleets/outage-529.yaml
// whole, on GOMAXPROCS cores: the time of one tune, and its runs and
// sessions (SPEC.md §15.11 states how the cost grows).
func BenchmarkTuneDefault(b *testing.B) {
	spec, err := fleetspec.Load("../fleets/outage-529.yaml")
	if err != nil {
		b.Fatal(err)
	}
	cfg := spec.Config
	cfg.Profiles, cfg.Seed = spec.Mixes[0], spec.SeedFrom
	var r *Report
	var sessions int64
	for b.Loop() {
		tu, err := New(cfg, Options{})
		if err != nil {
			b.Fatal(err)
		}
		sessions = tu.Sessions()
		if r, err = tu.Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Counts.ShortRuns), "short-runs/op")
	b.ReportMetric(float64(r.Counts.LongRuns), "full-runs/op")
	b.ReportMetric(float64(sessions), "sessions/op")
}
