package termsafe

import (
	"strings"
	"testing"
)

func TestSafeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain name 42", "plain name 42"},
		{"x\nPASS  forged", `x\nPASS  forged`},
		{"\x1b[8mhidden", `\x1b[8mhidden`},
		{"a\rb\tc\x00d\x07", `a\rb\tc\x00d\a`},
		{"del\x7f", `del\x7f`},
		{"c1 \u0085 \u009b", `c1 \u0085 \u009b`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f", `bidi \u202eevil\u202c \u2066x\u2069 \u200f`},
		{"sep\u2028\u2029", `sep\u2028\u2029`},
		{"zw\u200b\ufeff", `zw\u200b\ufeff`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		// Ordinary text is kept: any script, emoji (joined too), spaces,
		// quotes and backslashes.
		{"ทดสอบ ภาษาไทย", "ทดสอบ ภาษาไทย"},
		{"emoji 😀 👨\u200d👩\u200d👧 ❤\ufe0f", "emoji 😀 👨\u200d👩\u200d👧 ❤\ufe0f"},
		{"nbsp\u00a0ideo\u3000", "nbsp\u00a0ideo\u3000"},
		{`quote " and \n literal`, `quote " and \n literal`},
		{"\ufffd replacement char", "\ufffd replacement char"},
	}
	for _, tt := range tests {
		got := Text(tt.in)
		if got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := Text(got); again != got {
			t.Errorf("Text not idempotent on %q: %q", got, again)
		}
		if strings.ContainsAny(got, "\n\r\x1b\x7f\u202e") {
			t.Errorf("Text(%q) = %q keeps a control character", tt.in, got)
		}
	}
}
