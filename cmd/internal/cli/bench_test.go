package cli

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkRunScenarioFiles is "retrysim run" on every scenario file of
// the repository and the public conformance set: load, run, check the
// expectations, print. One op is the whole set; files/s is reported.
func BenchmarkRunScenarioFiles(b *testing.B) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "scenarios", "*.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "conformance", "public", "[0-9]*.json"))
	// The files by name, not the directories: run's discovery is
	// recursive, and the benchmark keeps measuring the same files as
	// its baseline (the top-level scenarios and the public conformance
	// set, not scenarios/profiles/).
	if len(files) == 0 || len(more) == 0 {
		b.Fatalf("found %d scenario files and %d conformance files: the paths are wrong", len(files), len(more))
	}
	args := append(append([]string{"run"}, files...), more...)
	n := len(files) + len(more)
	b.ReportAllocs()
	for b.Loop() {
		if code := realMain(args, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}
