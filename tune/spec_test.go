package tune

import (
	"os"
	"strings"
	"testing"
)

// TestSpecAxesAndObjectives: SPEC.md §15.11's tables of the axes and the
// objectives are the declarations' (axisDefs, objectiveDefs), row for row
// and in order, and the default objectives are the ones it names.
func TestSpecAxesAndObjectives(t *testing.T) {
	data, err := os.ReadFile("../SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(data)
	at := 0
	for _, d := range axisDefs {
		row := "| `" + d.name + "` | " + strings.Join(d.def, ", ") + " | " + d.meaning + " |\n"
		i := strings.Index(spec[at:], row)
		if i < 0 {
			t.Errorf("SPEC.md has no row, after the one before, for axis %s:\n%s", d.name, row)
			continue
		}
		at += i
	}
	at = 0
	for _, o := range objectiveDefs {
		row := "| `" + o.name + "` | " + o.meaning + " |\n"
		i := strings.Index(spec[at:], row)
		if i < 0 {
			t.Errorf("SPEC.md has no row, after the one before, for objective %s:\n%s", o.name, row)
			continue
		}
		at += i
	}
	if want := "(default\n`" + strings.Join(DefaultObjectives(), ",") + "`"; !strings.Contains(spec, want) {
		t.Errorf("SPEC.md does not name the default objectives as %q", want)
	}
}
