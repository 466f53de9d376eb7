package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/trace"
)

type manifestEntry struct {
	File    string   `json:"file"`
	Clean   bool     `json:"clean"`
	Flags   []string `json:"flags"`
	Summary string   `json:"summary"`
}

const publicConformanceDir = "../testdata/conformance/public"

func loadManifest(t *testing.T) []manifestEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(publicConformanceDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m []manifestEntry
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 29 {
		t.Fatalf("manifest lists %d scenarios, want 29", len(m))
	}
	return m
}

func runFile(t *testing.T, path, variant string) ([]byte, Final) {
	t.Helper()
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(sc, Options{Variant: variant})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	return s.Trace().Bytes(), f
}

func compareWithOriginal(t *testing.T, file string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(publicConformanceDir, strings.TrimSuffix(file, ".json")+".out.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := trace.FilterConformance(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := trace.FilterConformance(want)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("%s: filtered trace differs from the original\n--- got\n%s\n--- want\n%s\n--- full trace\n%s", file, strings.Join(g, "\n"), strings.Join(w, "\n"), got)
	}
}

// TestConformanceClean: the sound variant gives the original's filtered
// trace on every scenario the manifest marks clean.
func TestConformanceClean(t *testing.T) {
	for _, e := range loadManifest(t) {
		if !e.Clean {
			continue
		}
		t.Run(e.File, func(t *testing.T) {
			got, _ := runFile(t, filepath.Join(publicConformanceDir, e.File), "sound")
			compareWithOriginal(t, e.File, got)
		})
	}
}

// TestConformanceFlaggedSound: on the flagged scenarios the sound variant
// keeps its guarantees instead of the original's hazards.
func TestConformanceFlaggedSound(t *testing.T) {
	for _, e := range loadManifest(t) {
		if e.Clean {
			continue
		}
		t.Run(e.File, func(t *testing.T) {
			got, f := runFile(t, filepath.Join(publicConformanceDir, e.File), "sound")
			records, err := trace.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckSoundTrace(records); err != nil {
				t.Errorf("%v\n%s", err, got)
			}
			if len(f.UnresolvedPrompts) != 0 || f.IsRetrying || f.Attempt != 0 {
				t.Errorf("final %+v: want no unresolved prompt, not retrying, attempt 0\n%s", f, got)
			}
		})
	}
}

// TestConformanceOriginal: the original variant gives the original's
// filtered trace on every public scenario, clean or flagged.
func TestConformanceOriginal(t *testing.T) {
	for _, e := range loadManifest(t) {
		t.Run(e.File, func(t *testing.T) {
			got, _ := runFile(t, filepath.Join(publicConformanceDir, e.File), "original")
			compareWithOriginal(t, e.File, got)
		})
	}
}

// fullOrder is a stricter comparison than the conformance filter: the
// order and time of every line type both traces have (responses and
// agent_run_end included), with ids and success flags.
func fullOrder(t *testing.T, trace []byte) []string {
	t.Helper()
	types := map[string]bool{"agent_run": true, "agent_run_end": true, "auto_retry_start": true, "auto_retry_end": true,
		"prompt_resolved": true, "prompt_rejected": true, "response": true, "auto_compaction_start": true,
		"auto_compaction_end": true, "mark_usage_limit_reached": true}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(trace)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if typ, _ := m["type"].(string); types[typ] {
			out = append(out, fmt.Sprint(m["t"], " ", typ, " ", m["id"], " ", m["success"]))
		}
	}
	return out
}

// TestConformanceFullOrder: beyond the compared subset, the original
// variant (all scenarios) and the sound variant (clean ones) also order the
// other lines inside one millisecond as the original's traces do.
func TestConformanceFullOrder(t *testing.T) {
	for _, e := range loadManifest(t) {
		for _, variant := range []string{"sound", "original"} {
			if variant == "sound" && !e.Clean {
				continue
			}
			t.Run(variant+"/"+e.File, func(t *testing.T) {
				got, _ := runFile(t, filepath.Join(publicConformanceDir, e.File), variant)
				want, err := os.ReadFile(filepath.Join(publicConformanceDir, strings.TrimSuffix(e.File, ".json")+".out.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				g, w := fullOrder(t, got), fullOrder(t, want)
				if realOriginal(want) {
					// The original's own traces (21-24) resolve the prompt
					// while the compaction summary is awaited, between
					// auto_compaction_start and _end; the transcription's
					// (09, 09b) after both, as the core does. Inside one
					// millisecond the README leaves that order open, so
					// the compaction lines are left out here for those
					// traces (the filtered trace still compares them all).
					g, w = withoutCompaction(g), withoutCompaction(w)
				}
				if strings.Join(g, "\n") != strings.Join(w, "\n") {
					t.Errorf("order differs\n--- got\n%s\n--- want\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
				}
			})
		}
	}
}

// realOriginal reports whether an expected trace comes from the original
// code itself (its last line is "final", the transcription's
// "final_state").
func realOriginal(out []byte) bool {
	return strings.Contains(string(out), `"type":"final",`)
}

func withoutCompaction(lines []string) []string {
	var out []string
	for _, l := range lines {
		if !strings.Contains(l, " auto_compaction_") {
			out = append(out, l)
		}
	}
	return out
}
