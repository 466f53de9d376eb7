package retry

import (
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy/classify"
)

var updateSpec = flag.Bool("update", false, "rewrite the generated blocks of ../../SPEC.md")

// specBlocks are the parts of SPEC.md generated from the code.
func specBlocks() map[string]string {
	var pats strings.Builder
	for i, p := range classify.OverflowPatterns() {
		pats.WriteString(itoa(i+1) + ". `" + p + "`\n")
	}
	return map[string]string{
		"sound-table":       Sound().TableMarkdown(),
		"original-table":    Original().TableMarkdown(),
		"overflow-patterns": pats.String(),
		// The sound-mermaid diagram is retrysim graph's: cmd/retrysim's
		// TestReadmeDiagramInSync keeps it.
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestSpecInSync: the tables and pattern lists in SPEC.md are the ones the
// code declares (run `go test ./policy/retry -run TestSpecInSync -update` to
// regenerate them).
func TestSpecInSync(t *testing.T) {
	b, err := os.ReadFile("../../SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	spec := string(b)
	for name, want := range specBlocks() {
		re := regexp.MustCompile(`(?s)(<!-- BEGIN ` + name + ` -->\n)(.*?)(<!-- END ` + name + ` -->)`)
		m := re.FindStringSubmatch(spec)
		if m == nil {
			t.Errorf("SPEC.md has no generated block %q", name)
			continue
		}
		if m[2] != want {
			if *updateSpec {
				spec = re.ReplaceAllLiteralString(spec, m[1]+want+m[3])
				continue
			}
			t.Errorf("SPEC.md block %q is out of date; run go test ./policy/retry -run TestSpecInSync -update\n--- want\n%s--- have\n%s", name, want, m[2])
		}
	}
	if *updateSpec {
		if err := os.WriteFile("../../SPEC.md", []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
