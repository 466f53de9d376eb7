package term_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/term"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		s             string
		width, indent int
		want          string
	}{
		{"short", 10, 2, "short"},
		{"one two three four", 9, 2, "one two\n  three\n  four"},
		{"    lead kept", 10, 6, "    lead\nkept"}, // indent over half the width: none
		{"abcdefghijkl", 5, 0, "abcde\nfghij\nkl"},
		{"ab cdefghijklmn", 6, 2, "ab\n  cdef\n  ghij\n  klmn"},
		{"a  b", 3, 0, "a\nb"},
		{"a  b", 10, 0, "a  b"},
		{"ünïcödé wörds hére", 8, 1, "ünïcödé\n wörds\n hére"},
		{"anything", 0, 4, "anything"},
	}
	for _, tt := range tests {
		if got := term.Wrap(tt.s, tt.width, tt.indent); got != tt.want {
			t.Errorf("Wrap(%q, %d, %d)\n got %q\nwant %q", tt.s, tt.width, tt.indent, got, tt.want)
		}
	}
}

// TestFormatLineWidth: a trace line in 80 columns: seconds, type, fields
// wrapped under the fields; every line within the width.
func TestFormatLineWidth(t *testing.T) {
	under := strings.Repeat(" ", 29) // the fields' column
	tests := []struct{ line, want string }{
		{`{"t":0,"type":"agent_run","kind":"prompt"}`, `   0.000s  agent_run         kind=prompt`},
		{`{"t":2000,"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"503 service unavailable"}`,
			"   2.000s  auto_retry_start  attempt=2 maxAttempts=3 delayMs=4000\n" +
				under + `errorMessage="503 service unavailable"`},
		{`{"t":1500,"type":"response","id":"s1","command":"get_state","success":true,"data":{"isStreaming":true,"messageCount":1,"autoCompactionEnabled":true,"sessionId":"session-1"}}`,
			"   1.500s  response          id=s1 command=get_state success=true\n" +
				under + `data={"isStreaming":true,"messageCount":1,"autoComp` + "\n" +
				under + `actionEnabled":true,"sessionId":"session-1"}`},
		{`{"t":0,"type":"mark_usage_limit_reached","provider":"anthropic"}`, `   0.000s  mark_usage_limit_reached  provider=anthropic`},
		{`not json`, `not json`},
	}
	for _, tt := range tests {
		got := term.FormatLineWidth([]byte(tt.line+"\n"), 80)
		if got != tt.want {
			t.Errorf("FormatLineWidth(%s)\n got:\n%s\nwant:\n%s", tt.line, got, tt.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(l); n > 80 {
				t.Errorf("a line of %d characters: %q", n, l)
			}
		}
	}
	if got, want := term.FormatLineWidth([]byte(`{"t":0,"type":"agent_run"}`), 0), term.FormatLine([]byte(`{"t":0,"type":"agent_run"}`)); got != want {
		t.Errorf("width 0: %q, want FormatLine's %q", got, want)
	}
}
