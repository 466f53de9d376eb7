package jsonw

import (
	"encoding/json"
	"testing"
)

// TestAppendJSONStringLikeJSON: the output parses back to the same string
// (invalid UTF-8 as U+FFFD) and never HTML-escapes.
func TestAppendJSONStringLikeJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "nl\ncr\rtab\t\b\f\x01\x1f", "héllo ✓ 😀", "<&>", "bad\xffbyte", "\u2028\u2029"} {
		b := AppendString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q -> %s: %v", s, b, err)
		}
		want := string([]rune(s)) // invalid bytes become U+FFFD
		if back != want {
			t.Errorf("%q -> %s -> %q", s, b, back)
		}
	}
	if got := string(AppendString(nil, "<&>\u2028")); got != "\"<&>\u2028\"" {
		t.Errorf("got %s: JSON.stringify does not escape these", got)
	}
	if got := string(AppendString(nil, "a\x01")); got != `"a\u0001"` {
		t.Errorf("got %s", got)
	}
}
