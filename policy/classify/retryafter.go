package classify

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// The original's four retry hint regexes (§2.5), all with flag i, in the
// order they are tried.
var (
	retryAfterMsRe = compileJS(`retry-after-ms\s*[:=]\s*(\d+)`)
	retryAfterRe   = compileJS(`retry-after\s*[:=]\s*([^\s,;]+)`)
	resetMsRe      = compileJS(`x-ratelimit-reset-ms\s*[:=]\s*(\d+)`)
	resetRe        = compileJS(`x-ratelimit-reset\s*[:=]\s*(\d+)`)
)

// parseRetryAfterMs is the original's #parseRetryAfterMsFromError (§2.5):
// it reads a retry hint out of an error message and returns it in
// milliseconds. now stands for the original's Date.now(), taken once, so
// results are reproducible; it is used as float64(now.UnixMilli()).
//
// The first of these rules that yields a value wins:
//
//  1. retry-after-ms[:=]N (digits): max(0, N).
//  2. retry-after[:=]TOKEN, TOKEN ending at the first JavaScript whitespace,
//     ',' or ';': if JavaScript Number(TOKEN) is not NaN, max(0,
//     seconds*1000); else if Date.parse(TOKEN) is not NaN, max(0, date -
//     now); else fall through to rule 3. Only the first retry-after match is
//     looked at. An HTTP-date is captured as its weekday ("Mon") and never
//     honoured.
//  3. x-ratelimit-reset-ms[:=]N: an epoch in ms if N > 1e12 (max(0, N -
//     now)), else a duration (max(0, N)).
//  4. x-ratelimit-reset[:=]S: an epoch in s if S > 1e9 (max(0, S*1000 -
//     now)), else a duration (max(0, S*1000)).
//  5. Otherwise there is no hint: ok is false (the original's undefined).
//
// Keys are case-insensitive and may have JavaScript whitespace around the
// ':' or '='. All arithmetic is float64, as in JavaScript: ms may have a
// fraction ("retry-after: 0.0015" gives 1.5, "retry-after: 1.005" gives
// 1004.9999999999999) and may be +Inf (a huge digit string or "Infinity").
// When ok is true, ms is never negative and never NaN.
func parseRetryAfterMs(errorMessage string, now time.Time) (ms float64, ok bool) {
	return parseRetryAfterFolded(errorMessage, foldASCII(errorMessage), now)
}

// parseRetryAfterFolded is parseRetryAfterMs of errorMessage, whose
// foldASCII is folded. The regexes run on the ASCII-folded message (see
// compileJS); the folding keeps byte offsets, so captures are cut from the
// original, where the case of "Infinity", "0X1F" or "T" still matters.
func parseRetryAfterFolded(errorMessage, folded string, now time.Time) (ms float64, ok bool) {
	nowMs := float64(now.UnixMilli())

	if m := findPrefixed(retryAfterMsRe, folded); m != nil {
		return math.Max(0, digitsNumber(m[1])), true
	}

	if m := findIndexPrefixed(retryAfterRe, folded); m != nil {
		value := errorMessage[m[2]:m[3]]
		if seconds, isNum := jsNumber(value); isNum {
			return math.Max(0, seconds*1000), true
		}
		if dateMs, isDate := jsDateParse(value); isDate {
			return math.Max(0, dateMs-nowMs), true
		}
		// Neither a number nor a date: the original falls through.
	}

	if m := findPrefixed(resetMsRe, folded); m != nil {
		n := digitsNumber(m[1])
		if n > 1_000_000_000_000 {
			return math.Max(0, n-nowMs), true
		}
		return math.Max(0, n), true
	}

	if m := findPrefixed(resetRe, folded); m != nil {
		s := digitsNumber(m[1])
		if s > 1_000_000_000 {
			return math.Max(0, s*1000-nowMs), true
		}
		return math.Max(0, s*1000), true
	}

	return 0, false
}

// digitsNumber is JavaScript Number() of a non-empty ASCII digit string. A
// string too long for float64 becomes +Inf, as in JavaScript; ParseFloat's
// ErrRange only reports that, so it is ignored.
func digitsNumber(d string) float64 {
	f, _ := strconv.ParseFloat(d, 64)
	return f
}

// isJSSpace reports whether r is in JavaScript's WhiteSpace or
// LineTerminator set, the set of `\s` and of the trimming in Number().
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// jsNumber is JavaScript's Number(string) (StringToNumber): it returns the
// value and true, or false where JavaScript gives NaN.
//
// Accepted, after trimming JavaScript whitespace: the empty string (0); a
// decimal literal with optional sign, integer part, fraction and exponent
// (".5", "5.", "+5", "-5", "1e3", "1E-3"); "Infinity" with optional sign;
// and unsigned "0x"/"0o"/"0b" integers with any number of digits, in either
// letter case. Everything else is NaN, including "-0x10", "1_000", "inf",
// "NaN" and "0x". Decimal strings are rounded correctly (as V8 and
// JavaScriptCore do) by strconv.ParseFloat; out-of-range values become ±Inf
// or ±0 as in JavaScript.
func jsNumber(s string) (float64, bool) {
	s = strings.TrimFunc(s, isJSSpace)
	if s == "" {
		return 0, true
	}
	switch s {
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	if len(s) > 2 && s[0] == '0' {
		base := 0
		switch s[1] {
		case 'x', 'X':
			base = 16
		case 'o', 'O':
			base = 8
		case 'b', 'B':
			base = 2
		}
		if base != 0 {
			return radixNumber(s[2:], base)
		}
	}
	if !isJSDecimalLiteral(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		// Unreachable: the literal was validated above. Treat it as NaN
		// rather than returning a wrong value.
		return 0, false
	}
	return f, true
}

// isJSDecimalLiteral reports whether s is a StrDecimalLiteral without
// "Infinity": [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?.
func isJSDecimalLiteral(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intDigits := countDigits(s[i:], 10)
	i += intDigits
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		fracDigits = countDigits(s[i:], 10)
		i += fracDigits
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		expDigits := countDigits(s[i:], 10)
		if expDigits == 0 {
			return false
		}
		i += expDigits
	}
	return i == len(s)
}

// countDigits returns how many leading bytes of s are digits in base (2, 8,
// 10 or 16).
func countDigits(s string, base int) int {
	n := 0
	for n < len(s) && digitValue(s[n]) < base {
		n++
	}
	return n
}

// digitValue returns the value of the ASCII digit or letter c (0-35), or 99
// for any other byte.
func digitValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// radixNumber converts the digits after a 0x/0o/0b prefix. JavaScript takes
// the exact integer and rounds it to the nearest double, ties to even, so a
// big.Int rounded by big.Float (ToNearestEven) gives the same value; one too
// large becomes +Inf.
func radixNumber(digits string, base int) (float64, bool) {
	if digits == "" || countDigits(digits, base) != len(digits) {
		return 0, false
	}
	x, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return 0, false
	}
	f, _ := new(big.Float).SetInt(x).Float64()
	return f, true
}
