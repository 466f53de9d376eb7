package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s made safe to print on one line of a terminal: every
// character that could end the line, move the cursor, start an escape
// sequence, or hide or reorder the text is replaced by its Go escape, as
// strconv.QuoteToGraphic writes it (\n, \r, \t, \x1b, \x7f, \u0085,
// \u202e), and every byte that is not valid UTF-8 by \xNN. These are the
// characters that are not graphic in Unicode's sense: C0 and C1 controls,
// DEL, format characters (bidirectional overrides and isolates, zero-width
// spaces, tags), line and paragraph separators, surrogates and unassigned
// code points. Zero-width joiners and non-joiners, which join emoji, are
// kept. All other text (any script, emoji, spaces, backslashes) is left as
// it is: the result is for reading, not for unquoting, and escaping it again
// changes nothing. When there is nothing to escape, s itself is returned.
func Text(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !safeRune(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case safeRune(r, size):
			b.WriteString(s[i : i+size])
		case r == utf8.RuneError && size == 1:
			q := strconv.QuoteToGraphic(s[i : i+1]) // "\xNN"
			b.WriteString(q[1 : len(q)-1])
		default:
			q := strconv.QuoteRuneToGraphic(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// safeRune reports whether r, decoded from size bytes, can be printed as
// it is.
func safeRune(r rune, size int) bool {
	if r < utf8.RuneSelf {
		return r >= ' ' && r != 0x7f
	}
	if r == utf8.RuneError && size == 1 {
		return false // not UTF-8
	}
	return unicode.IsGraphic(r) || r == '\u200c' || r == '\u200d'
}

// Short is Text that also shortens: when s is longer than max
// bytes, only its first max bytes (cut at a character boundary) are kept,
// followed by "…(N bytes)", N being the length of s.
func Short(s string, max int) string {
	if len(s) <= max {
		return Text(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return Text(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
