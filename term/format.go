package term

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/trace"
)

// FormatLine renders one trace line as "retrysim trace --format text"
// does (sim.FormatText), with fixed column widths so that lines printed
// one at a time stay aligned:
//
//	2000    2.000s  auto_retry_start          attempt=2 maxAttempts=3 delayMs=4000 ...
//
// A line that is not a JSON object is returned as it is.
func FormatLine(line []byte) string {
	s, cols, rest, ok := lineColumns(line)
	if !ok {
		return s
	}
	return strings.TrimRight(fmt.Sprintf("%7s  %9s  %-24s  %s", cols[0], cols[1], cols[2], rest), " ")
}

// lineColumns renders line with trace.FormatText and splits it into its
// time (ms, seconds), type and the rendered fields; ok is false for a
// line that has no such columns (s is then the line's rendering).
func lineColumns(line []byte) (s string, cols [3]string, rest string, ok bool) {
	out, err := trace.FormatText(line)
	s = strings.TrimRight(string(out), "\n")
	if err != nil || s == "" || strings.Contains(s, "\n") {
		return strings.TrimRight(string(line), "\r\n"), cols, "", false
	}
	// The time, seconds and type columns hold no spaces; the fields keep
	// their rendering.
	rest = s
	for i := range cols {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		cols[i], rest = rest[:j], rest[j:]
	}
	if !strings.HasSuffix(cols[1], "s") {
		return s, cols, "", false // no "t": leave FormatText's layout
	}
	return s, cols, strings.TrimLeft(rest, " "), true
}

// fieldsColumn is where a narrow line's fields start (FormatLineWidth):
// the time in seconds (9), the type (16, the longest common type's
// length, auto_retry_start), two spaces after each.
const fieldsColumn = 9 + 2 + 16 + 2

// FormatLineWidth renders one trace line as FormatLine does, in a layout
// for a terminal width columns wide: the time in seconds (the milliseconds
// column left out), the type, then the fields, wrapped (Wrap) at width
// with the lines after the first indented under the fields:
//
//	2.000s  auto_retry_start  attempt=2 maxAttempts=3 delayMs=4000
//	                          errorMessage="503 service unavailable"
//
// A type longer than 16 characters pushes its line's fields right. A
// width of 0 or less is FormatLine. Lines are counted in characters.
func FormatLineWidth(line []byte, width int) string {
	if width <= 0 {
		return FormatLine(line)
	}
	s, cols, rest, ok := lineColumns(line)
	if !ok {
		return Wrap(s, width, 4)
	}
	return Wrap(strings.TrimRight(fmt.Sprintf("%9s  %-16s  %s", cols[1], cols[2], rest), " "), width, fieldsColumn)
}

// Wrap breaks s into lines of at most width characters (runes), joined
// by "\n": at spaces where it can, within a word longer than a line where
// it must. The lines after the first are indented by indent spaces (by
// none when indent leaves less than half the width); s's own leading
// spaces are kept on its first line. A width of 0 or less, or an s that
// fits, is returned as it is.
func Wrap(s string, width, indent int) string {
	if width <= 0 || utf8.RuneCountInString(s) <= width {
		return s
	}
	if indent > width/2 {
		indent = 0
	}
	body := strings.TrimLeft(s, " ")
	var b strings.Builder
	lead := len(s) - len(body)
	line := []rune(strings.Repeat(" ", min(lead, width-1)))
	fresh := true // nothing but indentation on the line yet
	flush := func() {
		b.WriteString(strings.TrimRight(string(line), " "))
		b.WriteByte('\n')
		line = []rune(strings.Repeat(" ", indent))
		fresh = true
	}
	for _, w := range strings.Split(body, " ") {
		word := []rune(w)
		switch {
		case fresh && len(word) == 0:
			continue // a run of spaces at a break
		case !fresh && len(line)+1+len(word) > width:
			flush()
			if len(word) == 0 {
				continue
			}
		}
		if !fresh {
			line = append(line, ' ')
		}
		for len(line)+len(word) > width { // longer than a line: cut it
			n := width - len(line)
			line = append(line, word[:n]...)
			word = word[n:]
			flush()
		}
		line = append(line, word...)
		fresh = false
	}
	b.WriteString(strings.TrimRight(string(line), " "))
	return strings.TrimRight(b.String(), "\n")
}
