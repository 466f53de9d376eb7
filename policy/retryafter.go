package policy

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
	nowMs := float64(now.UnixMilli())
	// The regexes run on the ASCII-folded message (see compileJS); the
	// folding keeps byte offsets, so captures are cut from the original,
	// where the case of "Infinity", "0X1F" or "T" still matters.
	folded := foldASCII(errorMessage)

	if m := retryAfterMsRe.FindStringSubmatch(folded); m != nil {
		return math.Max(0, digitsNumber(m[1])), true
	}

	if m := retryAfterRe.FindStringSubmatchIndex(folded); m != nil {
		value := errorMessage[m[2]:m[3]]
		if seconds, isNum := jsNumber(value); isNum {
			return math.Max(0, seconds*1000), true
		}
		if dateMs, isDate := jsDateParse(value); isDate {
			return math.Max(0, dateMs-nowMs), true
		}
		// Neither a number nor a date: the original falls through.
	}

	if m := resetMsRe.FindStringSubmatch(folded); m != nil {
		n := digitsNumber(m[1])
		if n > 1_000_000_000_000 {
			return math.Max(0, n-nowMs), true
		}
		return math.Max(0, n), true
	}

	if m := resetRe.FindStringSubmatch(folded); m != nil {
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

// Date parsing.
//
// jsDateParse models JavaScript's Date.parse on the ECMAScript Date Time
// String Format, the only form a retry-after token (which cannot contain
// whitespace or a comma) can usefully take:
//
//	YYYY[-MM[-DD]][THH:mm[:ss[.f+]][Z|±HH:mm|±HHmm]]
//
// with YYYY four digits or a signed six-digit extended year (-000000 is
// invalid). Date-only forms are UTC. A date-time without an offset is local
// time in JavaScript; this model takes local time as UTC, so the result does
// not depend on the machine's time zone. Ranges are checked: month 1-12, day
// within the month (leap years by the proleptic Gregorian rule), hour 0-24
// where 24 is allowed only as 24:00 with all later fields zero, minute and
// second 0-59, offset hours 0-23 and minutes 0-59. The result must lie within
// ±8.64e15 ms (TimeClip). Anything else is NaN.
//
// V8 is the reference for the details (the conformance traces come from a
// Node.js transcription; checked against Node 20 on random ISO-like
// tokens): it also accepts a lower-case "t" and "z", an offset without a
// colon (±HHmm), and any number (at least one) of fraction digits, which it
// truncates to whole milliseconds. The model does the same.
//
// Not modelled:
//   - V8's legacy fallback parser, which accepts many other shapes, for
//     example "2026/02/16", "12/25/2026", "2026-2-16", "2026-02-16Z",
//     "-000000-01-01" and even "Mon+5"; they are NaN here, so rule 2 falls
//     through where V8 would yield a date.
//   - V8 accepting day 29-31 of any month (2026-02-30 rolls over to March
//     2); the model rejects days beyond the month, as the format requires
//     and as JavaScriptCore does.
//   - V8's digit-capping quirk for fractions of more than nine digits with
//     leading zeros (".0012345678912" gives 123 ms in V8, 1 ms here).
//   - JavaScriptCore (Bun, the original's runtime) differences: years of any
//     length, seconds 60, offsets ±HH and up to 24 hours, upper-case "Z"
//     only, sub-millisecond fractions kept, and its own legacy parser.

// msPerDay is the number of milliseconds in a day.
const msPerDay = 86_400_000

// maxTimeMs is the TimeClip bound of ECMAScript time values.
const maxTimeMs = 8.64e15

// jsDateParse returns Date.parse(s) and true, or false where the model gives
// NaN. See the notes above for what it accepts.
func jsDateParse(s string) (float64, bool) {
	p := dateScanner{s: s}

	var year int64
	switch {
	case p.peek('+') || p.peek('-'):
		neg := p.s[p.i] == '-'
		p.i++
		y, ok := p.fixedDigits(6)
		if !ok || (neg && y == 0) {
			return 0, false
		}
		year = y
		if neg {
			year = -y
		}
	default:
		y, ok := p.fixedDigits(4)
		if !ok {
			return 0, false
		}
		year = y
	}

	month, day := int64(1), int64(1)
	if p.accept('-') {
		m, ok := p.fixedDigits(2)
		if !ok || m < 1 || m > 12 {
			return 0, false
		}
		month = m
		if p.accept('-') {
			d, ok := p.fixedDigits(2)
			if !ok || d < 1 || d > daysInMonth(year, month) {
				return 0, false
			}
			day = d
		}
	}

	var hour, minute, second, milli, offsetMin int64
	fracNonZero := false
	if p.accept('T') || p.accept('t') {
		var ok bool
		if hour, ok = p.fixedDigits(2); !ok || hour > 24 {
			return 0, false
		}
		if !p.accept(':') {
			return 0, false
		}
		if minute, ok = p.fixedDigits(2); !ok || minute > 59 {
			return 0, false
		}
		if p.accept(':') {
			if second, ok = p.fixedDigits(2); !ok || second > 59 {
				return 0, false
			}
			if p.accept('.') {
				if milli, fracNonZero, ok = p.fraction(); !ok {
					return 0, false
				}
			}
		}
		// 24:00 means the end of the day; V8 rejects any non-zero field
		// after it, even a fraction digit beyond the milliseconds.
		if hour == 24 && (minute != 0 || second != 0 || fracNonZero) {
			return 0, false
		}
		switch {
		case p.accept('Z') || p.accept('z'):
		case p.peek('+') || p.peek('-'):
			neg := p.s[p.i] == '-'
			p.i++
			oh, ok := p.fixedDigits(2)
			if !ok || oh > 23 {
				return 0, false
			}
			p.accept(':') // ±HH:mm and ±HHmm are both accepted.
			om, ok := p.fixedDigits(2)
			if !ok || om > 59 {
				return 0, false
			}
			offsetMin = oh*60 + om
			if neg {
				offsetMin = -offsetMin
			}
		}
	}
	if p.i != len(p.s) {
		return 0, false
	}

	t := daysFromCivil(year, month, day)*msPerDay +
		((hour*60+minute)*60+second)*1000 + milli -
		offsetMin*60_000
	ft := float64(t)
	if math.Abs(ft) > maxTimeMs {
		return 0, false
	}
	return ft, true
}

// dateScanner walks a date string byte by byte.
type dateScanner struct {
	s string
	i int
}

// peek reports whether the next byte is c.
func (p *dateScanner) peek(c byte) bool {
	return p.i < len(p.s) && p.s[p.i] == c
}

// accept consumes the next byte if it is c.
func (p *dateScanner) accept(c byte) bool {
	if p.peek(c) {
		p.i++
		return true
	}
	return false
}

// fixedDigits consumes exactly n ASCII digits and returns their value, or
// fails if fewer than n digits follow. A digit left over after the field
// makes the parse fail later, since no field may be followed by a digit
// except the offset hours (in ±HHmm).
func (p *dateScanner) fixedDigits(n int) (int64, bool) {
	if countDigits(p.s[p.i:], 10) < n {
		return 0, false
	}
	var v int64
	for _, c := range []byte(p.s[p.i : p.i+n]) {
		v = v*10 + int64(c-'0')
	}
	p.i += n
	return v, true
}

// fraction consumes one or more digits of a fraction of a second and
// returns the whole milliseconds (further digits are truncated) and whether
// any digit is non-zero.
func (p *dateScanner) fraction() (ms int64, nonZero bool, ok bool) {
	n := countDigits(p.s[p.i:], 10)
	if n == 0 {
		return 0, false, false
	}
	for k := 0; k < 3; k++ {
		ms *= 10
		if k < n {
			ms += int64(p.s[p.i+k] - '0')
		}
	}
	nonZero = strings.Trim(p.s[p.i:p.i+n], "0") != ""
	p.i += n
	return ms, nonZero, true
}

// isLeapYear applies the proleptic Gregorian rule, also to years <= 0.
func isLeapYear(y int64) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// daysInMonth returns the number of days of month m (1-12) of year y.
func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if isLeapYear(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (H. Hinnant's algorithm), valid for negative
// years too.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
