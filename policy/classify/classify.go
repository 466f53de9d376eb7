package classify

import (
	"fmt"
	"regexp"
	"strings"
)

// Class is the classification of an assistant reply.
type Class int

// The classes Classify returns. The zero value is ClassSuccess.
const (
	// ClassSuccess is a reply whose stopReason is neither "error" nor
	// "aborted", whatever its usage ("toolUse" and "length" included).
	ClassSuccess Class = iota
	// ClassRetryable is an error reply the original would retry: a non-empty
	// errorMessage matching the retryable regex and not a context overflow.
	ClassRetryable
	// ClassOverflow is an error reply that is a context overflow (either by
	// its message or by its usage); the original hands it to compaction.
	ClassOverflow
	// ClassFatal is an error reply that is neither retryable nor overflow,
	// including an error with an empty errorMessage.
	ClassFatal
	// ClassAborted is a reply whose stopReason is "aborted".
	ClassAborted
)

// String returns "success", "retryable", "overflow", "fatal" or "aborted",
// and "Class(N)" for a value outside the enumeration.
func (c Class) String() string {
	switch c {
	case ClassSuccess:
		return "success"
	case ClassRetryable:
		return "retryable"
	case ClassOverflow:
		return "overflow"
	case ClassFatal:
		return "fatal"
	case ClassAborted:
		return "aborted"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// RetryableSource is the original's retryable regex (SPEC §2.2), as
// JavaScript source, used with flag i.
const RetryableSource = `overloaded|rate.?limit|usage.?limit|too many requests|429|500|502|503|504|service.?unavailable|server error|internal error|connection.?error|fetch failed|retry delay`

// usageLimitSource is the original's usage-limit regex (§2.4), flag i.
const usageLimitSource = `usage.?limit|usage_limit_reached|limit_reached`

// overflowSources are the sources of the original's overflow patterns (§2.3
// case 1), all with flag i, in the original's order. The last one is the
// Cerebras/Mistral "4xx (no body)" pattern, anchored at the start.
var overflowSources = [...]string{
	`prompt is too long`,
	`input is too long for requested model`,
	`exceeds the context window`,
	`input token count.*exceeds the maximum`,
	`maximum prompt length is \d+`,
	`reduce the length of the messages`,
	`maximum context length is \d+ tokens`,
	`exceeds the limit of \d+`,
	`exceeds the available context size`,
	`requested tokens?.*exceed.*context (window|length|size)`,
	`context (window|length|size).*(exceeded|overflow|too small)`,
	`(prompt|input).*(too long|too large).*(context|n_ctx)`,
	`requested tokens?.*(exceeds?|greater than).*(n_ctx|context)`,
	`greater than the context length`,
	`context window exceeds limit`,
	`exceeded model token limit`,
	`context[_ ]length[_ ]exceeded`,
	`too many tokens`,
	`token limit exceeded`,
	`request_too_large`,
	`^4(00|13)\s*(status code)?\s*\(no body\)`,
}

// overflowNeedles holds, for each overflow pattern, a literal that every
// match contains (in the ASCII-folded input). It is a pure prefilter: a
// pattern whose needle is absent cannot match, so its regex is not run.
// TestOverflowNeedles checks each needle against its pattern.
var overflowNeedles = [len(overflowSources)]string{
	"prompt is too long",
	"input is too long for requested model",
	"exceeds the context window",
	"input token count",
	"maximum prompt length is ",
	"reduce the length of the messages",
	"maximum context length is ",
	"exceeds the limit of ",
	"exceeds the available context size",
	"requested token",
	"context ",
	"too l",
	"requested token",
	"greater than the context length",
	"context window exceeds limit",
	"exceeded model token limit",
	"length",
	"too many tokens",
	"token limit exceeded",
	"request_too_large",
	"(no body)",
}

// overflowWords are literals of which every overflow needle contains one
// (TestOverflowNeedles checks it), so every match of every overflow
// pattern does: a message without any of them is not an overflow by its
// text, and the 21 needles are not looked for.
var overflowWords = [...]string{"too", "context", "exceed", "token", "length", "(no body)"}

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// hasPrefixOf reports whether s contains re's literal prefix, with which
// every match of re begins: when it does not, re cannot match s, and is
// not run (regexp looks for the prefix too, but only after setting its
// matcher up).
func hasPrefixOf(re *regexp.Regexp, s string) bool {
	prefix, _ := re.LiteralPrefix()
	return strings.Contains(s, prefix)
}

// findPrefixed is re.FindStringSubmatch(s), run only when s has re's
// literal prefix (hasPrefixOf).
func findPrefixed(re *regexp.Regexp, s string) []string {
	if !hasPrefixOf(re, s) {
		return nil
	}
	return re.FindStringSubmatch(s)
}

// findIndexPrefixed is re.FindStringSubmatchIndex(s), gated as
// findPrefixed is.
func findIndexPrefixed(re *regexp.Regexp, s string) []int {
	if !hasPrefixOf(re, s) {
		return nil
	}
	return re.FindStringSubmatchIndex(s)
}

var (
	retryableRe  = compileJS(RetryableSource)
	usageLimitRe = compileJS(usageLimitSource)
	overflowRes  = compileAllJS(overflowSources[:])
	// retryableDotRes are the alternatives of the retryable regex that
	// are not plain literals (retryableLiterals), each a word, `.?` and a
	// word, compiled alone: each has a literal prefix, its first word,
	// which strings.Contains looks for before the regex runs, where the
	// whole alternation has none and is tried at every position of the
	// message (TestRetryableAlternatives checks that the literals and
	// these make up the whole). usageDotLimitRe is the second, the
	// usage-limit regex's one such alternative.
	retryableDotRes = compileAllJS(retryableDotSources[:])
	usageDotLimitRe = retryableDotRes[1]
)

// retryableDotSources are the sources of retryableDotRes.
var retryableDotSources = [...]string{`rate.?limit`, `usage.?limit`, `service.?unavailable`, `connection.?error`}

// OverflowPatterns returns the source text of the 21 overflow patterns in the
// original's order: the 20 message patterns, then the anchored "4xx (no
// body)" pattern. The text is JavaScript regex source (RegExp.prototype.source,
// without slashes); every pattern is used with flag i. The slice is a fresh
// copy, so callers may keep or change it.
func OverflowPatterns() []string {
	out := make([]string, len(overflowSources))
	copy(out, overflowSources[:])
	return out
}

// isRetryableErrorMessage reports whether s matches the original's retryable
// regex: a case-insensitive, unanchored substring search with no word
// boundaries, so "65000" matches through "500". That false positive is kept
// on purpose, because the original has it.
func isRetryableErrorMessage(s string) bool { return retryableFolded(foldASCII(s)) }

// retryableFolded is isRetryableErrorMessage of the message whose
// foldASCII is f.
func retryableFolded(f string) bool {
	// An unanchored alternation matches iff one alternative does, so the
	// plain literals are looked up directly, and the `.?` alternatives
	// each alone (TestRetryablePrefilter compares both paths).
	for _, lit := range retryableLiterals {
		if strings.Contains(f, lit) {
			return true
		}
	}
	return matchesDotWords(f)
}

// matchesDotWords reports whether the ASCII-folded f matches one of
// retryableDotRes: each runs only when f contains its literal prefix, its
// first word (a match begins with it), and each contains "limit",
// "unavailable" or "error".
func matchesDotWords(f string) bool {
	if !strings.Contains(f, "limit") && !strings.Contains(f, "unavailable") && !strings.Contains(f, "error") {
		return false
	}
	for _, re := range retryableDotRes {
		if hasPrefixOf(re, f) && re.MatchString(f) {
			return true
		}
	}
	return false
}

// retryableLiterals are the alternatives of the retryable regex that are
// plain literals.
var retryableLiterals = []string{"overloaded", "too many requests", "429", "500", "502", "503", "504",
	"server error", "internal error", "fetch failed", "retry delay"}

// isUsageLimitErrorMessage reports whether s matches the original's
// usage-limit regex /usage.?limit|usage_limit_reached|limit_reached/i. The
// original asks it only for replies already classified retryable.
func isUsageLimitErrorMessage(s string) bool { return usageLimitFolded(foldASCII(s)) }

// usageLimitFolded is isUsageLimitErrorMessage of the message whose
// foldASCII is f.
func usageLimitFolded(f string) bool {
	// Every alternative contains "limit": a cheap, exact prefilter. Of the
	// alternatives, usage_limit_reached contains limit_reached, a literal
	// looked up directly, and usage.?limit runs alone, when f contains its
	// literal prefix "usage" (TestRetryablePrefilter compares both paths).
	return strings.Contains(f, "limit") && (strings.Contains(f, "limit_reached") ||
		strings.Contains(f, "usage") && usageDotLimitRe.MatchString(f))
}

// isContextOverflow is the original's isContextOverflow (§2.3).
//
// Case 1 applies only to stopReason "error" with a non-empty errorMessage:
// true if any of the 21 patterns of overflowPatterns matches. Case 2, the
// "silent overflow", applies whatever the stopReason: when contextWindow is
// non-zero, true if usage.input + usage.cacheRead > contextWindow (strictly).
//
// The original's guard is JavaScript truthiness, `if (contextWindow)`, so
// only 0 disables case 2; a (meaningless) negative window is kept truthy
// rather than treated as "unknown". The sum is done in float64, as
// JavaScript numbers are, so huge usages cannot wrap around.
func isContextOverflow(m AssistantMessage, contextWindow int64) bool {
	folded := ""
	if m.StopReason == StopReasonError {
		folded = foldASCII(m.ErrorMessage)
	}
	return contextOverflow(m, folded, contextWindow)
}

// contextOverflow is isContextOverflow of m with folded
// foldASCII(m.ErrorMessage) (which only an error's case 1 reads).
func contextOverflow(m AssistantMessage, folded string, contextWindow int64) bool {
	if m.StopReason == StopReasonError && folded != "" && overflowsByText(folded) {
		return true
	}
	if contextWindow != 0 {
		if float64(m.InputTokens)+float64(m.CacheReadTokens) > float64(contextWindow) {
			return true
		}
	}
	return false
}

// overflowsByText reports whether the ASCII-folded message folded matches
// one of the overflow patterns (case 1). A pattern runs only when folded
// contains its needle, and none when folded contains no overflowWords.
func overflowsByText(folded string) bool {
	if !containsAny(folded, overflowWords[:]) {
		return false
	}
	for i, re := range overflowRes {
		if strings.Contains(folded, overflowNeedles[i]) && re.MatchString(folded) {
			return true
		}
	}
	return false
}

// JavaScript-to-RE2 translation.
//
// The original's patterns are JavaScript regexes with flag i and without
// flag u. Go's RE2 syntax looks the same but matches differently in ways
// that real error messages can hit, so compileJS rewrites a pattern into an
// RE2 pattern that accepts exactly the strings the JavaScript one does:
//
//   - JS `.` excludes \n, \r, U+2028 and U+2029; RE2 `.` excludes only \n.
//   - Without flag u, JS matches UTF-16 code units, so a `.` (or `.?`)
//     cannot match a character outside the BMP, which is two code units. The
//     only bare dots are `.?` followed by an ASCII letter, so there the dot
//     excludes U+10000-U+10FFFF too: "rate😀limit" does not match
//     /rate.?limit/ in JS. A `.*` or `.+` can eat both halves of a pair, so
//     it uses the plain JS dot.
//   - JS non-unicode /i compares toUpperCase() forms but never maps a
//     non-ASCII character to an ASCII one, so U+017F (long s) and U+212A
//     (Kelvin sign) do not match s or k. RE2 (?i) uses Unicode simple folding,
//     which folds them. So (?i) is not used: for a pattern made of ASCII
//     characters, JS /i is exactly ASCII case-insensitivity (checked for
//     every BMP character against V8), so the pattern's letters are written
//     in lower case and matched case-sensitively against foldASCII(input),
//     which lowers A-Z only. That keeps byte offsets (so a capture can be
//     cut from the original string) and is about ten times faster than
//     spelling each letter as [xX], which defeats RE2's literal scanning.
//   - JS `\s` is the ECMAScript WhiteSpace and LineTerminator set (with
//     U+00A0, U+FEFF, U+1680, U+2000-U+200A, U+2028/9, U+202F, U+205F,
//     U+3000 and \v); RE2 `\s` is only [\t\n\f\r ]. It is spelled out.
//   - `\d` is ASCII in both; it becomes [0-9] for clarity.
//
// A Go string that is not valid UTF-8 is read by RE2 as if each bad byte
// were U+FFFD; the original only ever sees decoded strings, so this case has
// no JavaScript counterpart.
//
// compileJS accepts only the small subset of syntax the original's patterns
// use and panics on anything else, so a pattern added later cannot be
// mistranslated silently; the panic happens at package initialisation.

const (
	// jsLineTerminators are the characters JS `.` does not match.
	jsLineTerminators = `\n\r\x{2028}\x{2029}`
	// jsSpaceSet is the class body of JS `\s`.
	jsSpaceSet = `\t\n\x{0B}\f\r \x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}`
	// jsDot is JS `.` where it may match a surrogate pair as a whole.
	jsDot = `[^` + jsLineTerminators + `]`
	// jsDotBMP is JS `.` where it stands for exactly one UTF-16 code unit
	// that must be a whole character.
	jsDotBMP = `[^` + jsLineTerminators + `\x{10000}-\x{10FFFF}]`
)

// compileAllJS compiles each JavaScript source with compileJS.
func compileAllJS(srcs []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(srcs))
	for i, s := range srcs {
		out[i] = compileJS(s)
	}
	return out
}

// compileJS compiles the JavaScript regex source src (with flag i, without
// flag u) to an RE2 regexp that, run on foldASCII(s), matches where the
// JavaScript one matches s; see the translation notes above.
func compileJS(src string) *regexp.Regexp {
	return regexp.MustCompile(translateJS(src))
}

// translateJS rewrites the JavaScript source src (flag i) into RE2 syntax
// for matching against foldASCII(input). It panics on syntax outside the
// subset the original's patterns use.
func translateJS(src string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\':
			if i+1 >= len(src) {
				panic("policy: trailing backslash in JS regex " + src)
			}
			i++
			e := src[i]
			switch e {
			case 's':
				if inClass {
					b.WriteString(jsSpaceSet)
				} else {
					b.WriteString("[" + jsSpaceSet + "]")
				}
			case 'd':
				if inClass {
					b.WriteString("0-9")
				} else {
					b.WriteString("[0-9]")
				}
			case '(', ')', '.', '[', ']', '\\', '-', '?', '*', '+', '|', '^', '$', '/':
				b.WriteByte('\\')
				b.WriteByte(e)
			default:
				panic(fmt.Sprintf("policy: unsupported escape \\%c in JS regex %s", e, src))
			}
		case inClass && c == ']':
			inClass = false
			b.WriteByte(c)
		case inClass:
			switch {
			case isASCIILetter(c):
				b.WriteByte(c | 0x20)
			case c == '_' || c == ' ' || c == ',' || c == ';' || c == ':' || c == '=':
				b.WriteByte(c)
			case c == '^' && src[i-1] == '[':
				b.WriteByte(c)
			default:
				panic(fmt.Sprintf("policy: unsupported class member %q in JS regex %s", c, src))
			}
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == '.':
			next := byte(0)
			if i+1 < len(src) {
				next = src[i+1]
			}
			switch {
			case next == '*' || next == '+':
				b.WriteString(jsDot)
			case next == '?' && i+2 < len(src) && isASCIILetter(src[i+2]):
				b.WriteString(jsDotBMP)
			default:
				// A bare dot could match half of a surrogate pair at a
				// boundary, which RE2 cannot express; none is needed.
				panic("policy: unsupported use of . in JS regex " + src)
			}
		case isASCIILetter(c):
			b.WriteByte(c | 0x20)
		case c == '(' && i+1 < len(src) && src[i+1] == '?':
			panic("policy: unsupported group syntax in JS regex " + src)
		case c >= '0' && c <= '9',
			c == ' ', c == '-', c == '_', c == ':', c == '=', c == ',', c == ';', c == '>',
			c == '(', c == ')', c == '|', c == '?', c == '*', c == '+':
			b.WriteByte(c)
		case c == '^' && i == 0:
			b.WriteByte(c)
		default:
			panic(fmt.Sprintf("policy: unsupported character %q in JS regex %s", c, src))
		}
	}
	if inClass {
		panic("policy: unterminated class in JS regex " + src)
	}
	return b.String()
}

// foldASCII lowers the ASCII letters A-Z of s and leaves every other byte
// alone, so offsets into the result are offsets into s. It is not
// strings.ToLower, which would also lower U+212A (Kelvin sign) to "k" and
// change the length of some strings. s is returned as is when it has no
// upper-case ASCII letter.
func foldASCII(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || s[i] > 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// isASCIILetter reports whether c is an ASCII letter.
func isASCIILetter(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
