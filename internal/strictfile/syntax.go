package strictfile

// Syntax errors: where, in the file, the YAML or JSON library stopped.
//
// The YAML library (gopkg.in/yaml.v3) reports a syntax error as
// "yaml: line N: PROBLEM" with no column, and N is often not the line of
// the problem: for most errors it is the line where the enclosing
// construct starts (a block mapping, a flow list, a quoted string), and
// for the parser's errors (as opposed to the scanner's) it is one less
// than that line. The library keeps the exact position to itself.
//
// The library is streaming: once the text up to the offending character
// has been read, the error is certain, whatever follows. So the position
// is found by asking the library itself about prefixes of the file: the
// offending character is the one from which on every prefix fails with
// the same problem. The library's line tells which line to look at first;
// only a few prefixes are parsed, and only when the file is already known
// to be broken. No YAML is parsed here by hand.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// yamlMessageRe splits the YAML library's error message.
var yamlMessageRe = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// yamlProblem parses every document of data with the YAML library and
// returns its first error split into the line it names (0 when none) and
// the problem; failed is false when data parses.
func yamlProblem(data []byte) (line int, problem string, failed bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return 0, "", false
		}
		line, problem = splitYAMLError(err)
		return line, problem, true
	}
}

func splitYAMLError(err error) (line int, problem string) {
	msg := err.Error()
	m := yamlMessageRe.FindStringSubmatch(msg)
	if m == nil {
		return 0, msg
	}
	if m[1] != "" {
		if n, e := strconv.Atoi(m[1]); e == nil && n > 0 {
			line = n
		}
	}
	return line, m[2]
}

// The YAML library's problems, by the way it reports their line.
var (
	// Problems found by the reader, before any line is counted: the
	// message names no line.
	yamlReaderProblems = map[string]bool{
		"invalid leading UTF-8 octet":        true,
		"incomplete UTF-8 octet sequence":    true,
		"invalid trailing UTF-8 octet":       true,
		"invalid length of a UTF-8 sequence": true,
		"invalid Unicode character":          true,
		"control characters are not allowed": true,
	}
	// Problems found by the parser: the line named is the 0-based line of
	// the enclosing construct (so one less than its line), or of the
	// offending token when the construct is on line 1. Every other problem
	// with a line is the scanner's, and names the (1-based) line where
	// the offending token or its construct starts.
	yamlParserProblems = map[string]bool{
		"did not find expected <stream-start>":   true,
		"did not find expected <document start>": true,
		"found undefined tag handle":             true,
		"did not find expected node content":     true,
		"did not find expected '-' indicator":    true,
		"did not find expected key":              true,
		"did not find expected ',' or ']'":       true,
		"did not find expected ',' or '}'":       true,
		"found duplicate %YAML directive":        true,
		"found incompatible YAML document":       true,
		"found duplicate %TAG directive":         true,
	}
	// Scanner problems where the line named is that of a construct (a
	// plain scalar) that starts before the offending character, a tab on
	// a later line.
	yamlTabProblems = map[string]bool{
		"found a tab character that violates indentation":              true,
		"found a tab character where an indentation space is expected": true,
	}
)

// maxProbes bounds the prefixes parsed to locate one syntax error.
const maxProbes = 96

// locator finds the position of a YAML syntax error in data.
type locator struct {
	data    []byte
	problem string
	starts  []int // byte offset where each line starts; starts[0] == 0
	probes  int
	cache   map[int]bool
	// exhausted is set when a probe was refused: what was found since
	// may be wrong.
	exhausted bool
	// complete, when set, is applied to each prefix before it is parsed.
	complete func(prefix []byte) []byte
}

func newLocator(data []byte, problem string) *locator {
	return &locator{data: data, problem: problem, starts: lineStarts(data), cache: map[int]bool{}}
}

// lineStarts gives the offsets where lines start, counting line breaks
// as the YAML library does: CR LF, CR, LF, NEL, LS and PS.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); {
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			i += 2
		case data[i] == '\r' || data[i] == '\n':
			i++
		case bytes.HasPrefix(data[i:], []byte("\u0085")), bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
			_, size := utf8.DecodeRune(data[i:])
			i += size
		default:
			i++
			continue
		}
		starts = append(starts, i)
	}
	return starts
}

// lines is the number of lines (a last line without a line break counts).
func (l *locator) lines() int { return len(l.starts) }

// lineStart is the offset of line n's first byte (1-based n).
func (l *locator) lineStart(n int) int { return l.starts[n-1] }

// lineEnd is the offset of line n's line break, or the end of the data.
func (l *locator) lineEnd(n int) int {
	if n >= len(l.starts) {
		return len(l.data)
	}
	end := l.starts[n]
	for end > l.starts[n-1] {
		c := l.data[end-1]
		if c == '\n' || c == '\r' {
			end--
			continue
		}
		if r, size := utf8.DecodeLastRune(l.data[:end]); r == '\u0085' || r == '\u2028' || r == '\u2029' {
			end -= size
			continue
		}
		break
	}
	return end
}

// pos converts a byte offset into a 1-based line and column (in
// characters, as the YAML library counts).
func (l *locator) pos(off int) (line, col int) {
	line = 1
	for line < len(l.starts) && l.starts[line] <= off {
		line++
	}
	return line, utf8.RuneCount(l.data[l.lineStart(line):off]) + 1
}

// fails tells whether data[:n] fails with the problem being located. It
// returns false without parsing once the budget of probes is spent.
func (l *locator) fails(n int) bool {
	if v, ok := l.cache[n]; ok {
		return v
	}
	if l.probes >= maxProbes {
		l.exhausted = true
		return false
	}
	l.probes++
	prefix := l.data[:n]
	if l.complete != nil {
		prefix = l.complete(prefix)
	}
	_, problem, failed := yamlProblem(prefix)
	v := failed && sameProblem(l.problem, problem)
	l.cache[n] = v
	return v
}

// quotedProblems are the problems of a quoted string that is not
// closed: a prefix that ends inside the string fails with one of them.
var quotedProblems = map[string]bool{
	"found unexpected end of stream":              true,
	"found unexpected document indicator":         true,
	"found unknown escape character":              true,
	"did not find expected hexdecimal number":     true,
	"found invalid Unicode character escape code": true,
}

// sameProblem tells whether a prefix failing with problem got as far
// as the error being located, want.
func sameProblem(want, problem string) bool {
	switch {
	case want == "found unexpected end of stream" || want == "found unexpected document indicator":
		return quotedProblems[problem]
	case strings.HasPrefix(want, "unknown anchor '"):
		// The prefix may hold only part of the alias's name.
		return strings.HasPrefix(problem, "unknown anchor '")
	}
	return want == problem
}

// onsetInLine returns the offset of the character of line n from which
// on every prefix fails, given that the whole line fails: the last
// character, going backwards, before which the prefix does not fail yet
// (one by one near the end of the line, then by bisection). Spaces are
// skipped (one is never the cause). When every prefix in the line fails,
// it is the first character that is not a space; ok is false when the
// line holds nothing but spaces.
func (l *locator) onsetInLine(n int) (off int, ok bool) {
	start, end := l.lineStart(n), l.lineEnd(n)
	var cand []int // where the characters but spaces start
	for i := start; i < end; {
		_, size := utf8.DecodeRune(l.data[i:end])
		if l.data[i] != ' ' {
			cand = append(cand, i)
		}
		i += size
	}
	if len(cand) == 0 {
		return 0, false
	}
	hi := len(cand) - 1 // the prefix up to cand[hi] is the last one tried that fails
	for ; hi >= 0 && hi >= len(cand)-24; hi-- {
		if !l.fails(cand[hi]) {
			return cand[hi], true
		}
	}
	if hi < 0 || l.fails(cand[0]) {
		return cand[0], true
	}
	lo := 0 // does not fail
	hi++
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if l.fails(cand[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return cand[lo], true
}

// lineFails tells whether the prefix up to the end of line n fails.
func (l *locator) lineFails(n int) bool { return l.fails(l.lineEnd(n)) }

// firstFailingLine returns the first line whose prefix fails, looking
// from line n on (a few lines one by one, then by bisection), then back
// from there: a problem noticed at the end of the file (an open
// bracket) starts before the line the library names. It returns 0 when
// no line fails.
func (l *locator) firstFailingLine(n int) int {
	n = max(n, 1)
	last := l.lines()
	k := 0
	for j := n; j <= last && j < n+4; j++ {
		if l.lineFails(j) {
			k = j
			break
		}
	}
	if k == 0 {
		lo, hi := n+4, last // the answer is in [lo, hi] if any
		if lo > hi || !l.lineFails(hi) {
			return 0
		}
		k = l.bisect(lo, hi)
	}
	// Back: find a line before k that does not fail, then bisect.
	step := 1
	for k-step >= 1 && l.lineFails(k-step) {
		step *= 2
	}
	if step == 1 {
		return k
	}
	return l.bisect(max(k-step+1, 1), k)
}

// bisect returns the first failing line in [lo, hi], hi failing.
func (l *locator) bisect(lo, hi int) int {
	for lo < hi {
		mid := lo + (hi-lo)/2
		if l.lineFails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// yamlSyntaxError turns the YAML library's error for data into an
// Error at the offending character.
func (r *Reader) yamlSyntaxError(data []byte, err error) {
	named, problem := splitYAMLError(err)
	msg := "invalid YAML: " + problem
	pos := Pos{File: r.File}
	if yamlReaderProblems[problem] {
		if off, ok := badCharacter(data); ok {
			l := newLocator(data, problem)
			pos.Line, pos.Column = l.pos(off)
			r, _ := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError {
				msg += fmt.Sprintf(" (found byte 0x%02x)", data[off])
			} else {
				msg += fmt.Sprintf(" (found %U)", r)
			}
		}
		r.FailPos(pos, "", msg)
	}
	l := newLocator(data, problem)
	off, ok := -1, false
	switch {
	case problem == "did not find expected ',' or ']'" || problem == "did not find expected ',' or '}'":
		r.yamlFlowError(l, named, problem)
	case yamlParserProblems[problem] || named == 0:
		// The offending token is on the line after the one named, or
		// after: its construct starts there.
		if k := l.firstFailingLine(named + 1); k > 0 {
			off, ok = l.onsetInLine(k)
		}
	case yamlTabProblems[problem]:
		if k := l.firstFailingLine(named); k > 0 {
			off, ok = l.onsetInLine(k)
		}
	default:
		// A scanner problem: the line named is that of the offending
		// token or of the construct it ends, or, when that is on line 1,
		// the line where the library noticed.
		for _, k := range []int{named, 1} {
			if k <= l.lines() && l.lineFails(k) && (k == 1 || !l.fails(l.lineStart(k))) {
				off, ok = l.onsetInLine(k)
				break
			}
		}
	}
	if ok && !l.exhausted {
		if strings.HasPrefix(problem, "unknown anchor '") && off > 0 && l.data[off-1] == '*' {
			off-- // at the alias, not its name
		}
		pos.Line, pos.Column = l.pos(off)
		msg += yamlHint(l, problem, off)
	} else if named > 0 || !strings.HasPrefix(problem, "unknown anchor '") {
		// Not located: the line of the construct the problem is in
		// (line 1 when the library names none), column 1.
		pos.Line, pos.Column = max(named, 1), 1
		if yamlParserProblems[problem] && named > 0 && named < l.lines() {
			pos.Line++
		}
	}
	r.FailPos(pos, "", msg)
}

// yamlHint explains a problem found at data[off].
func yamlHint(l *locator, problem string, off int) string {
	c := l.data[off]
	switch {
	case c == '\t':
		return " (tabs are not allowed in YAML indentation; use spaces)"
	case problem == "found character that cannot start any token" && (c == '@' || c == '`'):
		return fmt.Sprintf(" (%c is reserved in YAML: quote the value)", c)
	case problem == "found unexpected end of stream" && (c == '"' || c == '\''):
		return fmt.Sprintf(" (the string quoted with %c here is not closed)", c)
	case problem == "mapping values are not allowed in this context":
		return ` (quote a value that contains ": ", or check this line's indentation)`
	case strings.HasPrefix(problem, "unknown anchor '"):
		return " (aliases are not supported; write the value out)"
	case problem == "did not find expected node content" && len(bytes.TrimRight(l.data[off+1:], " \t\r\n")) == 0:
		if c == '[' || c == '{' {
			return fmt.Sprintf(" (the '%c' here is not closed)", c)
		}
		return " (the file ends here: is a closing bracket missing?)"
	case problem == "did not find expected key" || problem == "did not find expected '-' indicator":
		line, _ := l.pos(off)
		if strings.TrimLeft(string(l.data[l.lineStart(line):off]), " ") == "" {
			return " (check this line's indentation)"
		}
	}
	return ""
}

// yamlFlowError reports a flow list or mapping (`[...]`, `{...}`) that
// lacks a ',' or its closing bracket. The library names the line before
// its opening bracket (or, for one on line 1, the line before the one
// where it noticed). An opening bracket not closed is reported where it
// is; otherwise the entry that lacks a ',' before it is found as the
// other errors are, the prefixes completed with the brackets they leave
// open (so that a prefix does not fail merely for ending early).
func (r *Reader) yamlFlowError(l *locator, named int, problem string) {
	open, name := byte('['), "list"
	if strings.HasSuffix(problem, "'}'") {
		open, name = '{', "mapping"
	}
	msg := "invalid YAML: " + problem
	for _, k := range []int{named + 1, 1} {
		if named == 0 && k != 1 || k > l.lines() {
			continue
		}
		start := l.lineStart(k)
		off, closed, found := flowOpener(l.data, start, l.lineEnd(k), open)
		if !found {
			continue
		}
		pos := Pos{File: r.File}
		if !closed {
			pos.Line, pos.Column = l.pos(off)
			r.FailPos(pos, "", msg+fmt.Sprintf(" (the '%c' here is not closed)", open))
		}
		c := newLocator(l.data, problem)
		c.complete = func(prefix []byte) []byte { return closeFlow(prefix, start) }
		if line := c.firstFailingLine(k); line > 0 {
			if at, ok := c.onsetInLine(line); ok && at > off && !c.exhausted {
				pos.Line, pos.Column = l.pos(at)
				r.FailPos(pos, "", msg+fmt.Sprintf(" (a ',' missing between two entries of the flow %s?)", name))
			}
		}
		pos.Line, pos.Column = l.pos(off)
		r.FailPos(pos, "", msg+fmt.Sprintf(" (in the flow %s that starts here: an entry not followed by ',' or '%c')", name, closer(open)))
	}
	pos := Pos{File: r.File, Line: 1, Column: 1}
	if named > 0 && named < l.lines() {
		pos.Line = named + 1
	}
	r.FailPos(pos, "", msg)
}

func closer(open byte) byte {
	if open == '[' {
		return ']'
	}
	return '}'
}

// bracket is an opening bracket and its offset.
type bracket struct {
	c   byte
	off int
}

// flowScan pairs the brackets of data[start:], skipping quoted strings
// and comments: it returns the brackets still open at the end (or, when
// a closing bracket does not match, there), the quote of a string still
// open and whether the end is inside a comment. It does not parse YAML:
// it only tells brackets apart, to choose among those of one line and to
// close those a prefix leaves open.
func flowScan(data []byte, start int) (stack []bracket, quote byte, comment bool) {
	for i := start; i < len(data); i++ {
		c := data[i]
		if quote != 0 {
			switch {
			case quote == '"' && c == '\\':
				i++
			case c == quote && quote == '\'' && i+1 < len(data) && data[i+1] == '\'':
				i++
			case c == quote:
				quote = 0
			}
			continue
		}
		atToken := i == 0 || strings.IndexByte(" \t\r\n[{,:", data[i-1]) >= 0
		switch {
		case c == '#' && atToken:
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
			if i == len(data) {
				comment = true
			}
		case (c == '"' || c == '\'') && atToken:
			quote = c
		case (c == '[' || c == '{') && (atToken || len(stack) > 0):
			stack = append(stack, bracket{c, i})
		case (c == ']' || c == '}') && len(stack) > 0:
			if closer(stack[len(stack)-1].c) != c {
				return stack, 0, false // mismatched: the innermost is not closed
			}
			stack = stack[:len(stack)-1]
		}
	}
	return stack, quote, comment
}

// flowOpener finds, on the line data[start:end], the opening bracket
// of the flow collection an error is about: the innermost one still open
// at the end of the file, else the first one on the line.
func flowOpener(data []byte, start, end int, open byte) (off int, closed, found bool) {
	stack, _, _ := flowScan(data, start)
	for j := len(stack) - 1; j >= 0; j-- {
		if b := stack[j]; b.c == open && b.off < end {
			return b.off, false, true
		}
	}
	for i := start; i < end; i++ {
		if data[i] == open {
			return i, true, true
		}
	}
	return 0, false, false
}

// closeFlow completes prefix with what closes the strings and brackets
// it leaves open since offset start.
func closeFlow(prefix []byte, start int) []byte {
	stack, quote, comment := flowScan(prefix, start)
	out := append([]byte(nil), prefix...)
	switch {
	case quote == '"':
		out = append(out, ' ', '"') // a space: the prefix may end in a backslash
	case quote != 0:
		out = append(out, quote)
	case comment:
		out = append(out, '\n')
	}
	out = append(out, ' ')
	for j := len(stack) - 1; j >= 0; j-- {
		out = append(out, closer(stack[j].c))
	}
	return out
}

// badCharacter finds the first byte that is not UTF-8, or character
// that YAML does not allow in a file (control characters but tab, line
// feed and carriage return; surrogates; U+FFFE and U+FFFF).
func badCharacter(data []byte) (int, bool) {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i, true
		}
		if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0x7E || r == 0x85 ||
			r >= 0xA0 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return i, true
		}
		i += size
	}
	return 0, false
}
