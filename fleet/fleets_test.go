package fleet

import (
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"path/filepath"
	"testing"
)

// readyFleet runs the ready fleet file name (fleets/) as retrysim fleet
// does (its mixes and seeds, merged), or with one seed when seed is not 0,
// and returns its profiles' stats by name and the capacity per 100 ms.
func readyFleet(t *testing.T, name string, seed int64) (map[string]Stats, float64) {
	t.Helper()
	spec, err := fleetspec.Load(filepath.Join("..", "fleets", name))
	if err != nil {
		t.Fatal(err)
	}
	if seed != 0 {
		spec.SeedFrom, spec.SeedTo = seed, seed
	}
	res, err := sweepConfigs(spec.Configs(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups[0]
	out := map[string]Stats{}
	for _, s := range g.Profiles {
		out[s.Profile] = s
	}
	return out, g.CapacityPer100ms
}

// TestReadyFleets runs the three ready fleets of fleets/ in full, as
// retrysim fleet runs them (they take under a second each), and checks the
// qualitative results the issue states. The outage and quota fleets hold
// them for each of five seeds too; the rate-limited fleet runs ten seeds,
// merged (see its file).
func TestReadyFleets(t *testing.T) {
	for _, seed := range []int64{0, 2, 3, 4, 5} {
		// A 60 s 529 outage at 1,000 sessions: the no-jitter profile's
		// peak over capacity is higher.
		st, capacity := readyFleet(t, "outage-529.yaml", seed)
		old, nw := st["omp-2026-02"], st["omp-2026-06"]
		ro, rn := old.Summarize(capacity).PeakDuringRatio, nw.Summarize(capacity).PeakDuringRatio
		if old.Sessions+nw.Sessions != 1000 || !(ro > rn) || rn == 0 {
			t.Errorf("outage-529, seed %d: peak-to-capacity omp-2026-02 %.2f, omp-2026-06 %.2f; want the first higher", seed, ro, rn)
		}
		// A 3-hour quota window: omp-2026-06 fails fast, omp-2026-02
		// retries until exhausted.
		st, _ = readyFleet(t, "quota-window.yaml", seed)
		old, nw = st["omp-2026-02"], st["omp-2026-06"]
		if nw.ChainsFailFast == 0 || nw.ChainsExhausted != 0 || old.ChainsFailFast != 0 || old.ChainsExhausted == 0 ||
			old.Calls <= nw.Calls {
			t.Errorf("quota-window, seed %d: omp-2026-06 fail-fast %d exhausted %d; omp-2026-02 fail-fast %d exhausted %d",
				seed, nw.ChainsFailFast, nw.ChainsExhausted, old.ChainsFailFast, old.ChainsExhausted)
		}
	}
	// Rate-limited at 2x capacity: hints ignored send more calls per
	// prompt and more retries inside retry-after windows.
	st, capacity := readyFleet(t, "rate-limited.yaml", 0)
	old, nw := st["omp-2026-02"], st["omp-2026-06"]
	co, cn := old.Summarize(capacity).CallsPerPrompt, nw.Summarize(capacity).CallsPerPrompt
	if old.Prompts != 5000 || !(co > cn) || !(old.InRetryAfter > nw.InRetryAfter) || old.Rejected == 0 {
		t.Errorf("rate-limited: %d prompts, calls per prompt %.2f vs %.2f, in retry-after %d vs %d; want omp-2026-02's higher",
			old.Prompts, co, cn, old.InRetryAfter, nw.InRetryAfter)
	}
}
