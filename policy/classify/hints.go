package classify

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MaxWaitHintMs is the largest hint waitHint returns: the largest whole
// number of milliseconds a time.Duration holds (about 292 years). Larger
// hints, +Inf included, are clamped to it, so a hint always converts to a
// time.Duration without overflow and still exceeds any sensible ceiling.
const MaxWaitHintMs = float64(math.MaxInt64 / int64(time.Millisecond))

// The headers waitHint reads, in the order it reads them.
const (
	headerRetryAfterMs    = "retry-after-ms"
	headerRetryAfter      = "retry-after"
	headerRateLimitResetM = "x-ratelimit-reset-ms"
	headerRateLimitReset  = "x-ratelimit-reset"
	headerShouldRetry     = "x-should-retry"
)

// The three text patterns waitHint knows beyond the original's parser, in
// the order they are tried. They run on foldASCII(text), so their letters
// are lower case and match either case; <n> is a decimal number without
// sign or exponent.
var (
	pleaseRetryRe = regexp.MustCompile(`please retry in ([0-9]+(?:\.[0-9]+)?)(ms|s)`)
	tryAgainRe    = regexp.MustCompile(`try again in ([0-9]+(?:\.[0-9]+)?) ?(ms|milliseconds|s|sec|seconds|m|min|minutes|h|hours)`)
	retryDelayRe  = regexp.MustCompile(`"retrydelay"[ \t\r\n]*:[ \t\r\n]*"([0-9]+(?:\.[0-9]+)?)s"`)
)

// hintUnitMs is the length in milliseconds of each unit the text patterns
// capture.
var hintUnitMs = map[string]float64{
	"ms": 1, "milliseconds": 1,
	"s": 1000, "sec": 1000, "seconds": 1000,
	"m": 60_000, "min": 60_000, "minutes": 60_000,
	"h": 3_600_000, "hours": 3_600_000,
}

// waitHint returns the wait in milliseconds that the reply m asks for, for
// the retryAfter.use modes floor and replace, with now the reply's (virtual)
// time. The first of these sources that yields a value wins; a header that
// is missing or whose value does not parse is skipped:
//
//  1. Header retry-after-ms: a decimal number of milliseconds
//     (parseHeaderRetryAfterMs).
//  2. Header retry-after: a decimal number of seconds, or an HTTP date, which
//     is relative to now (parseHeaderRetryAfter).
//  3. Header x-ratelimit-reset-ms: a decimal number N, an epoch in ms if
//     N > 1e12 (N - now), else a duration in ms (N).
//  4. Header x-ratelimit-reset: a decimal number S, an epoch in s if
//     S > 1e9 (S*1000 - now), else a duration in s (S*1000).
//  5. The message text, by the original's five-rule parseRetryAfterMs.
//  6. The text "please retry in <n>(ms|s)", no space before the unit.
//  7. The text "try again in <n> ?(ms|milliseconds|s|sec|seconds|m|min|
//     minutes|h|hours)": at most one space before the unit; m, min and
//     minutes are minutes. What follows the unit is not looked at, so
//     "1 minute" is 60000 ms (and "5 months" reads as 5 minutes).
//  8. The text `"retryDelay": "<n>s"` (Google's RetryInfo in JSON), with
//     any JSON whitespace around the colon.
//
// Header names are the lower-case keys of m.Headers (see ValidateHTTP); a
// header value may have spaces or tabs around it. A decimal number is
// [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?; Infinity, NaN,
// hexadecimal and trailing text are not numbers. In rules 6 to 8, <n> is
// digits with an optional fraction, the text is matched ASCII
// case-insensitively and only the first match of each pattern counts.
// Arithmetic is float64 as in JavaScript (n times the unit's length).
//
// A hint is clamped to [0, MaxWaitHintMs]: a negative value or a time in the
// past is 0, as in the original's parser, and a huge or infinite one is
// MaxWaitHintMs. So when ok is true, ms is neither negative nor NaN. waitHint
// reads m.Headers and m.ErrorMessage whatever m's stop reason.
func waitHint(m AssistantMessage, now time.Time) (ms float64, ok bool) {
	return waitHintFolded(m, foldASCII(m.ErrorMessage), now)
}

// waitHintFolded is waitHint of m, with folded foldASCII(m.ErrorMessage).
func waitHintFolded(m AssistantMessage, folded string, now time.Time) (ms float64, ok bool) {
	if ms, ok := headerWaitHint(m.Headers, now); ok {
		return clampHint(ms)
	}
	if ms, ok := parseRetryAfterFolded(m.ErrorMessage, folded, now); ok {
		return clampHint(ms)
	}
	if ms, ok := textWaitHint(folded); ok {
		return clampHint(ms)
	}
	return 0, false
}

// clampHint clamps a hint to [0, MaxWaitHintMs]. A NaN, which no rule
// produces, would count as no hint.
func clampHint(ms float64) (float64, bool) {
	if math.IsNaN(ms) {
		return 0, false
	}
	return math.Min(math.Max(0, ms), MaxWaitHintMs), true
}

// headerWaitHint applies waitHint's header rules 1 to 4, unclamped.
func headerWaitHint(h map[string]string, now time.Time) (float64, bool) {
	if v, present := h[headerRetryAfterMs]; present {
		if ms, ok := parseHeaderRetryAfterMs(v); ok {
			return ms, true
		}
	}
	if v, present := h[headerRetryAfter]; present {
		if ms, ok := parseHeaderRetryAfter(v, now); ok {
			return ms, true
		}
	}
	nowMs := float64(now.UnixMilli())
	if v, present := h[headerRateLimitResetM]; present {
		if n, ok := headerNumber(v); ok {
			if n > 1_000_000_000_000 {
				return n - nowMs, true
			}
			return n, true
		}
	}
	if v, present := h[headerRateLimitReset]; present {
		if s, ok := headerNumber(v); ok {
			if s > 1_000_000_000 {
				return s*1000 - nowMs, true
			}
			return s * 1000, true
		}
	}
	return 0, false
}

// textWaitHint applies waitHint's text rules 6 to 8, unclamped, to the
// text whose foldASCII is folded.
func textWaitHint(folded string) (float64, bool) {
	if m := findPrefixed(pleaseRetryRe, folded); m != nil {
		return decimalNumber(m[1]) * hintUnitMs[m[2]], true
	}
	if m := findPrefixed(tryAgainRe, folded); m != nil {
		return decimalNumber(m[1]) * hintUnitMs[m[2]], true
	}
	if m := findPrefixed(retryDelayRe, folded); m != nil {
		return decimalNumber(m[1]) * 1000, true
	}
	return 0, false
}

// decimalNumber is the value of a string of digits with an optional
// fraction, as the patterns capture it; one too long for float64 is +Inf.
func decimalNumber(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// headerNumber parses a header value as a decimal number (see waitHint),
// after trimming spaces and tabs. Out-of-range values are ±Inf or ±0, as
// strconv.ParseFloat gives them; the result is never NaN.
func headerNumber(v string) (float64, bool) {
	v = strings.Trim(v, " \t")
	if !isJSDecimalLiteral(v) {
		return 0, false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// parseHeaderRetryAfterMs parses the value of a retry-after-ms header: a
// decimal number of milliseconds ([+-]? (digits [. digits?] | . digits)
// ([eE] [+-]? digits)?) with optional spaces or tabs around it. The value is
// returned as is, unclamped, so that a caller can apply its own window (the
// OpenAI SDK takes only 0 <= t <= 60000): it may be negative, or ±Inf for a
// number out of float64's range, but never NaN. ok is false for anything
// else, the empty string included.
func parseHeaderRetryAfterMs(value string) (ms float64, ok bool) {
	return headerNumber(value)
}

// parseHeaderRetryAfter parses the value of a retry-after header at time
// now: a decimal number of seconds (as in parseHeaderRetryAfterMs; the
// result is seconds*1000 in float64), or else an HTTP date in one of the
// three forms net/http.ParseTime reads (RFC 1123 "Fri, 29 Sep 2023 16:26:57
// GMT", RFC 850, asctime), whose result is date - now in ms, with now taken
// as float64(now.UnixMilli()) as parseRetryAfterMs does. Spaces and tabs
// around the value are ignored.
//
// The value is unclamped: negative for a negative number or a past date,
// ±Inf for a number out of range, never NaN. ok is false when the value is
// neither a number nor an HTTP date (an ISO 8601 date is not one).
func parseHeaderRetryAfter(value string, now time.Time) (ms float64, ok bool) {
	if s, ok := headerNumber(value); ok {
		return s * 1000, true
	}
	text := strings.Trim(value, " \t")
	for _, layout := range httpDateLayouts {
		if t, err := time.Parse(layout, text); err == nil {
			return float64(t.UnixMilli()) - float64(now.UnixMilli()), true
		}
	}
	return 0, false
}

// httpDateLayouts are the three forms of an HTTP date, in the order
// net/http.ParseTime tries them (http.TimeFormat, RFC 850, asctime):
// written here so that policy, the library core, does not link net/http
// and its TLS stack for one date (TestHTTPDateAsNetHTTP, in the proxy's
// module, holds them equal).
var httpDateLayouts = [...]string{"Mon, 02 Jan 2006 15:04:05 GMT", time.RFC850, time.ANSIC}

// ValidateHTTP reports what is wrong with m's HTTP fields, or nil: Status
// must be 0 (unknown) or 100-599, and each header name a non-empty HTTP
// token (RFC 9110: letters, digits and !#$%&'*+-.^_`|~) without upper-case
// letters, since waitHint and Classifier look headers up by lower-case name.
// Header values are not checked. Of several bad names, the first in byte
// order is reported.
func (m AssistantMessage) ValidateHTTP() error {
	if m.Status != 0 && (m.Status < 100 || m.Status > 599) {
		return fmt.Errorf("status %d: want 0 (unknown) or an HTTP status 100-599", m.Status)
	}
	names := make([]string, 0, len(m.Headers))
	for name := range m.Headers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" {
			return errors.New(`headers: empty header name`)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			switch {
			case c >= 'A' && c <= 'Z':
				return fmt.Errorf("headers: name %q has upper-case letters; names are lower-case (%q)", name, foldASCII(name))
			case !isTokenChar(c):
				return fmt.Errorf("headers: name %q has %q at byte %d; a name is letters, digits and !#$%%&'*+-.^_`|~", name, c, i)
			}
		}
	}
	return nil
}

// isTokenChar reports whether c is an RFC 9110 tchar.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
