package scenario_test

import (
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
)

// BenchmarkLoadScenarios is scenario.Load (read, parse, validate, apply
// the defaults) of every top-level scenario file of the repository. One
// op is the whole set; files/s is reported. Run from another checkout's
// scenario/ directory, the same binary loads that checkout's files (how
// two commits are compared on the same files).
func BenchmarkLoadScenarios(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no scenario files (%v)", err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			if _, err := scenario.Load(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(files))*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}
