package main

import (
	"io"
	"path/filepath"
	"testing"
)

// BenchmarkRunScenarioFiles is "retrysim run" on every scenario file of
// the repository and the public conformance set: load, run, check the
// expectations, print. One op is the whole set; files/s is reported.
func BenchmarkRunScenarioFiles(b *testing.B) {
	args := []string{"run", filepath.Join("..", "..", "scenarios"), filepath.Join("..", "..", "testdata", "conformance", "public")}
	files, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "*.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "conformance", "public", "*.json"))
	n := len(files) + len(more)
	b.ReportAllocs()
	for b.Loop() {
		if code := realMain(args, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "files/s")
}
