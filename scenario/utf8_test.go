package scenario

import (
	"strings"
	"testing"
)

// TestJSONScenarioInvalidUTF8: a byte that is not UTF-8 in a JSON scenario
// is an error at its line and column, as in YAML (issue 19 §5: it was read
// as U+FFFD).
func TestJSONScenarioInvalidUTF8(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"{\"name\": \"a\xffb\", \"turns\": [{\"stopReason\": \"stop\"}]}", "s.json:1:12: invalid JSON: invalid UTF-8 (found byte 0xff"},
		{"{\n  \"name\": \"ok ü\",\n  \"description\": \"x\xc3\"\n}", "s.json:3:20: invalid JSON: invalid UTF-8 (found byte 0xc3"},
	} {
		_, err := Parse("s.json", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
	// Escapes and valid UTF-8 are fine.
	if _, err := Parse("s.json", []byte(`{"name": "ü \u00fc", "turns": [{"stopReason": "stop"}]}`)); err != nil {
		t.Fatal(err)
	}
}
