package classify

import "math"

// Date parsing: the retry-after date fallback (rule 2 of parseRetryAfterMs).
//
// jsDateParse is Date.parse as the original's runtime, Bun (JavaScriptCore),
// answers it for a retry-after token: at least one byte, none of them
// JavaScript whitespace, ',' or ';'. Bun's Date.parse gives the answers of
// V8's date parser on every such token we generated (TestDateParseTable,
// TestDateParseBun), so the model is that parser's algorithm, in two stages
// over one token stream:
//
//  1. The ECMAScript Date Time String Format,
//     [±YYYYYY|YYYY][-MM[-DD]][THH:mm[:ss[.f+]][Z|±HH:mm|±HHmm]] (T and Z in
//     either case, any number of fraction digits, their first three
//     significant ones read, hour 24 only as 24:00). A string that stops
//     matching inside the time part is NaN; one that stops before it goes
//     on to stage 2 with what was read. A date-only form is UTC.
//  2. The legacy parser: numbers, words and signs in any order. A number
//     followed by ':' is an hour or minute, by '.' a second when a time is
//     being read; otherwise it is the next time field when one is expected
//     (then only the end, "Z" or a sign may follow), else the next of up to
//     three day fields. Words are a month name (its first three letters,
//     jan..dec: the month), am/pm (after a time), a zone (ut, utc, gmt, z,
//     est/edt, cst/cdt, mst/mdt, pst/pdt; after a number) or garbage, which
//     is allowed only before any number and not right before one. A sign
//     after a zone or a time starts an offset (±H, ±HH, ±HHmm, ±HHH, or
//     hours before ':'). Parenthesised text and other bytes are skipped.
//     The day fields default to 1 and are read as Y-M-D when the first is
//     not 1-31, else M-D-Y (with a month name: D-Y, or Y-D when the first
//     is not a day); a year 0-49 means 2000-2049 and 50-99 1950-1999.
//     "1" is 2001-01-01, "--1" too.
//
// Days past the month's end roll over (2026-02-30 is March 2). A date-time
// without a zone is local time in JavaScript; the model takes local time
// as UTC (the original's traces were made in UTC), so the result does not
// depend on the machine's zone. The result must lie within ±8.64e15 ms
// (TimeClip); anything else is NaN.

// msPerDay is the number of milliseconds in a day.
const msPerDay = 86_400_000

// maxTimeMs is the TimeClip bound of ECMAScript time values.
const maxTimeMs = 8.64e15

// none marks a date or time field not set.
const none = math.MinInt32

// dateToken is one token of a date string.
type dateToken struct {
	kind   tokenKind
	num    int  // tokNumber: the value of its first 9 significant digits; tokKeyword: its value
	length int  // tokNumber: digits, leading zeros included; tokKeyword: letters
	sym    byte // tokSymbol: one of ":-+.)"
	word   keywordType
}

type tokenKind uint8

const (
	tokEnd tokenKind = iota
	tokNumber
	tokSymbol
	tokKeyword
	tokSpace
	tokUnknown
	tokInvalid
)

type keywordType uint8

const (
	kwInvalid keywordType = iota
	kwMonth
	kwAmPm
	kwZone
	kwTimeSeparator
)

func (t dateToken) isSign() bool { return t.kind == tokSymbol && (t.sym == '+' || t.sym == '-') }
func (t dateToken) isSymbol(c byte) bool {
	return t.kind == tokSymbol && t.sym == c
}
func (t dateToken) isFixedNumber(n int) bool { return t.kind == tokNumber && t.length == n }

// isZ is the zone keyword "z".
func (t dateToken) isZ() bool {
	return t.kind == tokKeyword && t.word == kwZone && t.length == 1 && t.num == 0
}

// keywords are the legacy parser's words by their first three letters
// (lower case, zero-padded): the month names may be longer.
var keywords = [...]struct {
	prefix string
	typ    keywordType
	value  int
}{
	{"jan", kwMonth, 1}, {"feb", kwMonth, 2}, {"mar", kwMonth, 3}, {"apr", kwMonth, 4},
	{"may", kwMonth, 5}, {"jun", kwMonth, 6}, {"jul", kwMonth, 7}, {"aug", kwMonth, 8},
	{"sep", kwMonth, 9}, {"oct", kwMonth, 10}, {"nov", kwMonth, 11}, {"dec", kwMonth, 12},
	{"am\x00", kwAmPm, 0}, {"pm\x00", kwAmPm, 12},
	{"ut\x00", kwZone, 0}, {"utc", kwZone, 0}, {"z\x00\x00", kwZone, 0}, {"gmt", kwZone, 0},
	{"cdt", kwZone, -5}, {"cst", kwZone, -6}, {"edt", kwZone, -4}, {"est", kwZone, -5},
	{"mdt", kwZone, -6}, {"mst", kwZone, -7}, {"pdt", kwZone, -7}, {"pst", kwZone, -8},
	{"t\x00\x00", kwTimeSeparator, 0},
}

// dateTokenizer splits a date string into tokens, with one of look-ahead.
type dateTokenizer struct {
	s    string
	i    int
	next dateToken
}

func newDateTokenizer(s string) *dateTokenizer {
	z := &dateTokenizer{s: s}
	z.next = z.scan()
	return z
}

func (z *dateTokenizer) peek() dateToken { return z.next }

func (z *dateTokenizer) take() dateToken {
	t := z.next
	z.next = z.scan()
	return t
}

// skip takes the next token if it is the symbol c.
func (z *dateTokenizer) skip(c byte) bool {
	if z.next.isSymbol(c) {
		z.take()
		return true
	}
	return false
}

func (z *dateTokenizer) scan() dateToken {
	s := z.s
	if z.i >= len(s) {
		return dateToken{kind: tokEnd}
	}
	c := s[z.i]
	switch {
	case isDigit(c):
		start := z.i
		for z.i < len(s) && s[z.i] == '0' {
			z.i++
		}
		n, sig := 0, 0
		for ; z.i < len(s) && isDigit(s[z.i]); z.i++ {
			if sig < 9 {
				n = n*10 + int(s[z.i]-'0')
			}
			sig++
		}
		return dateToken{kind: tokNumber, num: n, length: z.i - start}
	case c == ':' || c == '-' || c == '+' || c == '.' || c == ')':
		z.i++
		return dateToken{kind: tokSymbol, sym: c}
	case c >= 'A' && !z.spaceAt():
		var prefix [3]byte
		n := 0
		for ; z.i < len(s) && s[z.i] >= 'A' && !z.spaceAt(); z.i++ {
			if n < len(prefix) {
				prefix[n] = s[z.i] | 0x20
			}
			n++
		}
		for _, k := range keywords {
			if string(prefix[:]) == k.prefix && (n <= 3 || k.typ == kwMonth) {
				return dateToken{kind: tokKeyword, word: k.typ, num: k.value, length: n}
			}
		}
		return dateToken{kind: tokKeyword, word: kwInvalid, length: n}
	case z.spaceAt():
		for z.i < len(s) && z.spaceAt() {
			z.i += runeLen(s[z.i:])
		}
		return dateToken{kind: tokSpace}
	case c == '(':
		for depth := 0; ; {
			switch s[z.i] {
			case '(':
				depth++
			case ')':
				depth--
			}
			z.i++
			if depth <= 0 || z.i >= len(s) {
				break
			}
		}
		return dateToken{kind: tokUnknown}
	}
	z.i++
	return dateToken{kind: tokUnknown}
}

// spaceAt reports whether JavaScript whitespace starts at z.i (never in a
// retry-after token; kept so the tokenizer is total).
func (z *dateTokenizer) spaceAt() bool {
	for _, r := range z.s[z.i:] {
		return isJSSpace(r)
	}
	return false
}

func runeLen(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func between(x, lo, hi int) bool { return lo <= x && x <= hi }

// dayFields are up to three day fields and a month name.
type dayFields struct {
	comp  [3]int
	n     int
	month int // a month name's month, or none
	iso   bool
}

func (d *dayFields) add(v int) bool {
	if d.n >= len(d.comp) {
		return false
	}
	d.comp[d.n] = v
	d.n++
	return true
}

// ymd is the year, the 0-based month and the day, or false.
func (d *dayFields) ymd() (year, month, day int, ok bool) {
	if d.n < 1 {
		return 0, 0, 0, false
	}
	for d.n < len(d.comp) {
		d.comp[d.n] = 1
		d.n++
	}
	isDay := func(x int) bool { return between(x, 1, 31) }
	switch {
	case d.month == none && (d.iso || !isDay(d.comp[0])):
		year, month, day = d.comp[0], d.comp[1], d.comp[2]
	case d.month == none:
		month, day, year = d.comp[0], d.comp[1], d.comp[2]
	case !isDay(d.comp[0]):
		month, year, day = d.month, d.comp[0], d.comp[1]
	default:
		month, day, year = d.month, d.comp[0], d.comp[1]
	}
	if !d.iso {
		switch {
		case between(year, 0, 49):
			year += 2000
		case between(year, 50, 99):
			year += 1900
		}
	}
	if !between(month, 1, 12) || !isDay(day) {
		return 0, 0, 0, false
	}
	return year, month - 1, day, true
}

// timeFields are hour, minute, second and millisecond, and an am/pm
// offset.
type timeFields struct {
	comp   [4]int
	n      int
	offset int // 0 (am) or 12 (pm), or none
}

func (t *timeFields) empty() bool { return t.n == 0 }

func (t *timeFields) add(v int) bool {
	if t.n >= len(t.comp) {
		return false
	}
	t.comp[t.n] = v
	t.n++
	return true
}

func (t *timeFields) addFinal(v int) bool {
	if !t.add(v) {
		return false
	}
	t.n = len(t.comp)
	return true
}

func (t *timeFields) expecting(v int) bool {
	return t.n == 1 && between(v, 0, 59) || t.n == 2 && between(v, 0, 59) || t.n == 3 && between(v, 0, 999)
}

// ms is the time of day in ms, or false.
func (t *timeFields) ms() (int, bool) {
	h, m, s, ms := t.comp[0], t.comp[1], t.comp[2], t.comp[3]
	if t.n < 1 {
		h = 0
	}
	if t.n < 2 {
		m = 0
	}
	if t.n < 3 {
		s = 0
	}
	if t.n < 4 {
		ms = 0
	}
	if t.offset != none {
		if !between(h, 0, 12) {
			return 0, false
		}
		h = h%12 + t.offset
	}
	if !between(h, 0, 23) || !between(m, 0, 59) || !between(s, 0, 59) || !between(ms, 0, 999) {
		if h != 24 || m != 0 || s != 0 || ms != 0 {
			return 0, false
		}
	}
	return ((h*60+m)*60+s)*1000 + ms, true
}

// zoneFields are a UTC offset's sign, hours and minutes.
type zoneFields struct{ sign, hour, minute int }

func (z *zoneFields) set(hours int) {
	z.sign = 1
	if hours < 0 {
		z.sign = -1
	}
	z.hour, z.minute = hours*z.sign, 0
}

func (z *zoneFields) expecting(v int) bool {
	return z.hour != none && z.minute == none && between(v, 0, 59)
}

func (z *zoneFields) isUTC() bool { return z.hour == 0 && z.minute == 0 }

// offsetMs is the offset in ms; local is true without one. As in V8, the
// seconds are summed in 32-bit unsigned arithmetic and must stay within a
// small integer (2^31-1).
func (z *zoneFields) offsetMs() (ms float64, local, ok bool) {
	if z.sign == none {
		return 0, true, true
	}
	h, m := z.hour, z.minute
	if h == none {
		h = 0
	}
	if m == none {
		m = 0
	}
	total := uint32(h)*3600 + uint32(m)*60
	if total > math.MaxInt32 {
		return 0, false, false
	}
	sec := float64(total)
	if z.sign < 0 {
		sec = -sec
	}
	return sec * 1000, false, true
}

// readMillis reads the first three significant digits of a fraction.
func readMillis(t dateToken) int {
	n, l := t.num, t.length
	switch {
	case l == 1:
		return n * 100
	case l == 2:
		return n * 10
	case l > 3:
		l = min(l, 9)
		for ; l > 3; l-- {
			n /= 10
		}
	}
	return n
}

// legacyNumber takes the number n of a date in the legacy syntax as a
// time field, a zone's minutes or a day field, by what follows it and what
// is filled already; false when it fits none.
func legacyNumber(z *dateTokenizer, n int, day *dayFields, tm *timeFields, tz *zoneFields) bool {
	switch {
	case z.skip(':'):
		if z.skip(':') {
			if !tm.empty() {
				return false
			}
			tm.add(n)
			tm.add(0)
		} else {
			if !tm.add(n) {
				return false
			}
			z.skip('.')
		}
	case z.skip('.') && tm.expecting(n):
		tm.add(n)
		if z.peek().kind != tokNumber {
			return false
		}
		tm.addFinal(readMillis(z.take())) // a fourth field is dropped
	case tz.expecting(n):
		tz.minute = n
	case tm.expecting(n):
		tm.addFinal(n)
		if p := z.peek(); p.kind != tokEnd && p.kind != tokSpace && !p.isZ() && !p.isSign() {
			return false
		}
	default:
		if !day.add(n) {
			return false
		}
		z.skip('-')
	}
	return true
}

// jsDateParse returns Date.parse(s) and true, or false where it is NaN.
// See the notes above for the forms it accepts.
func jsDateParse(s string) (float64, bool) {
	z := newDateTokenizer(s)
	day := dayFields{month: none}
	tm := timeFields{offset: none}
	tz := zoneFields{sign: none, hour: none, minute: none}
	next := parseISODate(z, &day, &tm, &tz)
	if next.kind == tokInvalid {
		return 0, false
	}
	readNumber := day.n > 0
	for t := next; t.kind != tokEnd; t = z.take() {
		switch {
		case t.kind == tokNumber:
			readNumber = true
			if !legacyNumber(z, t.num, &day, &tm, &tz) {
				return 0, false
			}
		case t.kind == tokKeyword:
			switch {
			case t.word == kwAmPm && !tm.empty():
				tm.offset = t.num
			case t.word == kwMonth:
				day.month = t.num
				z.skip('-')
			case t.word == kwZone && readNumber:
				tz.set(t.num)
			default:
				// A word that is none of these is allowed only before any
				// number, and not right before one.
				if readNumber || z.peek().kind == tokNumber {
					return 0, false
				}
			}
		case t.isSign() && (tz.isUTC() || !tm.empty()):
			tz.sign = 1
			if t.sym == '-' {
				tz.sign = -1
			}
			n, length := 0, 0
			if z.peek().kind == tokNumber {
				nt := z.take()
				n, length = nt.num, nt.length
			}
			readNumber = true
			switch {
			case z.peek().isSymbol(':'):
				tz.hour, tz.minute = n, none
			case length == 1 || length == 2:
				tz.hour, tz.minute = n, 0
			case length == 3 || length == 4:
				tz.hour, tz.minute = n/100, n%100
			default:
				return 0, false
			}
		case (t.isSign() || t.isSymbol(')')) && readNumber:
			return 0, false
		}
	}
	y, m, d, ok := day.ymd()
	if !ok {
		return 0, false
	}
	ms, ok := tm.ms()
	if !ok {
		return 0, false
	}
	off, _, ok := tz.offsetMs()
	if !ok {
		return 0, false
	}
	days, ok := makeDay(y, m, d)
	if !ok {
		return 0, false
	}
	// Local time is taken as UTC (off is 0 then).
	t := days*msPerDay + float64(ms) - off
	if math.Abs(t) > maxTimeMs {
		return 0, false
	}
	return t, true
}

// parseISOZone reads the zone of an ISO time, if it has one, into tz:
// "Z", ±hhmm or ±hh:mm. It reports false for a malformed one.
func parseISOZone(z *dateTokenizer, tz *zoneFields) bool {
	switch p := z.peek(); {
	case p.isZ():
		z.take()
		tz.set(0)
	case p.isSign():
		tz.sign = 1
		if z.take().sym == '-' {
			tz.sign = -1
		}
		if z.peek().isFixedNumber(4) {
			hm := z.take().num
			h, m := hm/100, hm%100
			if !between(h, 0, 23) || !between(m, 0, 59) {
				return false
			}
			tz.hour, tz.minute = h, m
			return true
		}
		if p := z.peek(); !p.isFixedNumber(2) || !between(p.num, 0, 23) {
			return false
		}
		tz.hour = z.take().num
		if !z.skip(':') {
			return false
		}
		if p := z.peek(); !p.isFixedNumber(2) || !between(p.num, 0, 59) {
			return false
		}
		tz.minute = z.take().num
	}
	return true
}

// parseISODate reads the Date Time String Format (stage 1). It returns
// tokEnd when the whole string is one, tokInvalid when the string is NaN,
// else the first token the legacy parser must read.
func parseISODate(z *dateTokenizer, day *dayFields, tm *timeFields, tz *zoneFields) dateToken {
	switch p := z.peek(); {
	case p.isSign():
		sign := z.take()
		if !z.peek().isFixedNumber(6) {
			return sign
		}
		y := z.take().num
		if sign.sym == '-' {
			if y == 0 {
				return sign
			}
			y = -y
		}
		day.add(y)
	case p.isFixedNumber(4):
		day.add(z.take().num)
	default:
		return z.take()
	}
	if z.skip('-') {
		if p := z.peek(); !p.isFixedNumber(2) || !between(p.num, 1, 12) {
			return z.take()
		}
		day.add(z.take().num)
		if z.skip('-') {
			if p := z.peek(); !p.isFixedNumber(2) || !between(p.num, 1, 31) {
				return z.take()
			}
			day.add(z.take().num)
		}
	}
	if p := z.peek(); p.kind != tokKeyword || p.word != kwTimeSeparator {
		if p.kind != tokEnd {
			return z.take()
		}
	} else {
		invalid := dateToken{kind: tokInvalid}
		z.take()
		p := z.peek()
		if !p.isFixedNumber(2) || !between(p.num, 0, 24) {
			return invalid
		}
		h24 := p.num == 24
		tm.add(z.take().num)
		if !z.skip(':') {
			return invalid
		}
		if p := z.peek(); !p.isFixedNumber(2) || !between(p.num, 0, 59) || h24 && p.num > 0 {
			return invalid
		}
		tm.add(z.take().num)
		if z.skip(':') {
			if p := z.peek(); !p.isFixedNumber(2) || !between(p.num, 0, 59) || h24 && p.num > 0 {
				return invalid
			}
			tm.add(z.take().num)
			if z.skip('.') {
				if p := z.peek(); p.kind != tokNumber || h24 && p.num > 0 {
					return invalid
				}
				tm.add(readMillis(z.take()))
			}
		}
		if !parseISOZone(z, tz) || z.peek().kind != tokEnd {
			return invalid
		}
	}
	if tz.hour == none && tm.empty() {
		tz.set(0)
	}
	day.iso = true
	return dateToken{kind: tokEnd}
}

// makeDay is ECMAScript's MakeDay for a year within ±1,000,000 (else NaN),
// a 0-based month (0-11) and a day of the month, which may run past the
// month's end: days since 1970-01-01.
func makeDay(year, month, day int) (float64, bool) {
	if !between(year, -1_000_000, 1_000_000) {
		return 0, false
	}
	return float64(daysFromCivil(int64(year), int64(month)+1, 1) + int64(day) - 1), true
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
