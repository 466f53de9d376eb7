package sim_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// TestFormatTextScenario checks trace.FormatText's timeline of a real
// trace: one row per line, the type and field columns aligned,
// deterministic. It is here rather than in trace's tests, whose test
// binary would otherwise compile session, scenario and sim a second time
// against trace's own test files.
func TestFormatTextScenario(t *testing.T) {
	path := filepath.Join("..", "testdata", "conformance", "public", "03-three-errors-then-success.json")
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := trace.FormatText(res.Trace)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := trace.FormatText(res.Trace)
	if !bytes.Equal(out, again) {
		t.Fatal("FormatText is not deterministic")
	}
	rows := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if want := bytes.Count(res.Trace, []byte("\n")); len(rows) != want {
		t.Fatalf("%d rows for %d trace lines", len(rows), want)
	}
	for _, want := range []string{
		"  14000  14.000s  ",
		"auto_retry_start  attempt=2 maxAttempts=3 delayMs=4000 errorMessage=\"503 service unavailable\"",
		"auto_retry_end    success=true attempt=3",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Every row's type starts in the same column; every field list too.
	typeCol, fieldCol := -1, -1
	for _, row := range rows {
		if strings.HasSuffix(row, " ") {
			t.Errorf("trailing space in %q", row)
		}
		f := strings.Fields(row)
		tc := utf8.RuneCountInString(row[:strings.Index(row, "s  "+f[2])+3])
		if typeCol == -1 {
			typeCol = tc
		} else if tc != typeCol {
			t.Errorf("type column at %d, want %d: %q", tc, typeCol, row)
		}
		if len(f) > 3 {
			fc := strings.Index(row, " "+f[3]) + 1
			if fieldCol == -1 {
				fieldCol = fc
			} else if fc != fieldCol {
				t.Errorf("field column at %d, want %d: %q", fc, fieldCol, row)
			}
		}
	}
}
