package sim

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
)

// TestDeterministicAndReset: every public scenario gives a byte-identical
// trace on a fresh session, on a second fresh session, and on a reset one,
// for both variants.
func TestDeterministicAndReset(t *testing.T) {
	files, err := scenario.Files(publicConformanceDir, "../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 25 {
		t.Fatalf("only %d scenario files", len(files))
	}
	for _, f := range files {
		for _, variant := range []string{"sound", "original"} {
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			if variant != sc.Variant && sc.SetVariant(variant) != nil {
				continue // the scenario's settings or profile are not the original's
			}
			var traces [][]byte
			s, err := NewSession(sc, Options{Variant: variant})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if i > 0 {
					s.Reset()
				}
				if _, err := s.Run(); err != nil {
					t.Fatal(err)
				}
				traces = append(traces, append([]byte(nil), s.Trace().Bytes()...))
			}
			s2, _ := NewSession(sc, Options{Variant: variant})
			if _, err := s2.Run(); err != nil {
				t.Fatal(err)
			}
			traces = append(traces, s2.Trace().Bytes())
			for i := 1; i < len(traces); i++ {
				if !bytes.Equal(traces[0], traces[i]) {
					t.Errorf("%s (%s): trace %d differs from the first\n%s\n---\n%s", filepath.Base(f), variant, i, traces[0], traces[i])
				}
			}
		}
	}
}
