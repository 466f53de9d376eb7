package scenario

import (
	"strings"
	"testing"
)

// TestTopKeys: each top-level key is one row, read and written; a
// scenario at its defaults is written as the keys Format always writes
// (variant, settings, turns, actions), and Parse of that gives the
// defaults back.
func TestTopKeys(t *testing.T) {
	seen := map[string]bool{}
	for i, k := range topKeys {
		if k.name == "" || seen[k.name] || k.read == nil || k.write == nil {
			t.Errorf("key %q: empty, twice, or without a reader or a writer", k.name)
		}
		seen[k.name] = true
		if i >= len(topKeyNames) || topKeyNames[i] != k.name {
			t.Errorf("topKeyNames %v do not follow the table at %d (%s)", topKeyNames, i, k.name)
		}
	}
	def, err := Parse("", []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSuffix(string(Format(def)), "\n"), "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, " ") {
			keys = append(keys, k)
		}
	}
	if got := strings.Join(keys, ","); got != "variant,settings,turns,actions" {
		t.Errorf("the defaults are written as %s", got)
	}
	back, err := Parse("", Format(def))
	if err != nil {
		t.Fatal(err)
	}
	if msg := sameScenario(def, back); msg != "" {
		t.Error(msg)
	}
}
