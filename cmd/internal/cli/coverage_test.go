package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

func TestCoverageMain(t *testing.T) {
	files, _ := filepath.Glob("../../../scenarios/*.yaml")
	traces := map[string][][]trace.Record{}
	for _, f := range files {
		sc, err := scenario.Load(f)
		if err != nil {
			continue
		}
		res, err := sim.RunScenario(sc, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		traces[res.Variant] = append(traces[res.Variant], res.Records)
	}
	var out, errOut bytes.Buffer
	if code := coverageMain(traces, &out, &errOut); code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"transition coverage (sound)", "COVER", "ignored (not counted)",
		"UNREACH continuing --continue_failed--> continuing -fail-> exhausted", "coverage: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code := coverageMain(map[string][][]trace.Record{"nope": nil}, &out, &errOut); code != exitUsage {
		t.Errorf("unknown variant: exit %d", code)
	}
}
