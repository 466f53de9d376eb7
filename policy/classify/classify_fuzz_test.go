package classify

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// maxFuzzInput caps fuzz inputs: longer messages only slow the fuzzer down
// without reaching new code.
const maxFuzzInput = 64 << 10

// fuzzMessages are realistic provider error messages used as seeds.
var fuzzMessages = []string{
	"",
	`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	`429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization"}}`,
	"429 Too Many Requests: retry-after: 30",
	"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29000. Please try again in 2.5s. retry-after-ms: 2500",
	"You have hit your ChatGPT usage limit (usage_limit_reached). Try again in ~120 min. x-ratelimit-reset: 1771207200",
	"usage_limit_reached: retry-after: Mon, 16 Feb 2026 00:01:00 GMT",
	"Retry-After: 2026-02-16T00:00:30Z",
	"x-ratelimit-reset-ms=1771200005000",
	"prompt is too long: 213462 tokens > 200000 maximum",
	"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens. Please reduce the length of the messages.",
	"400 status code (no body)",
	"413 (no body)",
	"Input token count (1048577) exceeds the maximum number of tokens allowed (1048576).",
	"request_too_large",
	"TypeError: fetch failed",
	"Connection error.",
	"503 Service Unavailable",
	"500 Internal Server Error",
	"401 Unauthorized: invalid x-api-key",
	"invalid tool input at offset 65000",
	"rate\U0001F600limit retry-after:\u00a05",
	"x-ratelimit-reſet: 60 too many to\u212aens",
	"retry-after: 0x1F; retry-after-ms: 007",
}

// FuzzClassify checks that classification never panics and that Classify
// agrees with the predicates it is built from. It also compares the
// retryable and usage-limit regexes with a naive matcher written from the
// JavaScript semantics (ASCII-only case folding, `.?` as one BMP character
// other than a line terminator).
func FuzzClassify(f *testing.F) {
	reasons := []StopReason{StopReasonStop, StopReasonLength, StopReasonToolUse, StopReasonError, StopReasonAborted, ""}
	for i, msg := range fuzzMessages {
		f.Add(uint8(3), msg, int64(0), int64(0), int64(200_000))
		f.Add(uint8(i), msg, int64(150_000), int64(60_000), int64(200_000))
	}
	f.Add(uint8(3), "overloaded", int64(math.MaxInt64), int64(math.MaxInt64), int64(-1))
	f.Fuzz(func(t *testing.T, reason uint8, msg string, input, cacheRead, window int64) {
		if len(msg) > maxFuzzInput {
			t.Skip()
		}
		m := AssistantMessage{
			StopReason:   reasons[int(reason)%len(reasons)],
			ErrorMessage: msg,
			InputTokens:  input, CacheReadTokens: cacheRead,
		}
		c := (*Classifier)(nil).Classify(m, window)
		overflow := isContextOverflow(m, window)
		retryable := isRetryableErrorMessage(msg)
		usageLimit := isUsageLimitErrorMessage(msg)

		if want := naiveRetryable(msg); retryable != want {
			t.Errorf("isRetryableErrorMessage(%q) = %v, naive matcher says %v", msg, retryable, want)
		}
		if want := naiveUsageLimit(msg); usageLimit != want {
			t.Errorf("isUsageLimitErrorMessage(%q) = %v, naive matcher says %v", msg, usageLimit, want)
		}

		switch c {
		case ClassSuccess:
			if !m.IsSuccess() {
				t.Errorf("success for stopReason %q", m.StopReason)
			}
		case ClassAborted:
			if m.StopReason != StopReasonAborted {
				t.Errorf("aborted for stopReason %q", m.StopReason)
			}
		case ClassOverflow:
			if m.StopReason != StopReasonError || !overflow {
				t.Errorf("overflow with stopReason %q, isContextOverflow %v", m.StopReason, overflow)
			}
		case ClassRetryable:
			if m.StopReason != StopReasonError || msg == "" || !retryable || overflow {
				t.Errorf("retryable with stopReason %q, msg %q, retryable %v, overflow %v", m.StopReason, msg, retryable, overflow)
			}
		case ClassFatal:
			if m.StopReason != StopReasonError || overflow || (msg != "" && retryable) {
				t.Errorf("fatal with stopReason %q, msg %q, retryable %v, overflow %v", m.StopReason, msg, retryable, overflow)
			}
		default:
			t.Errorf("Classify returned %v", c)
		}
		if (m.StopReason == StopReasonError) != (c == ClassOverflow || c == ClassRetryable || c == ClassFatal) {
			t.Errorf("stopReason %q classified %v", m.StopReason, c)
		}

		// The usage rule alone decides overflow for anything but an
		// error with a message.
		usageOver := window != 0 && float64(input)+float64(cacheRead) > float64(window)
		if m.StopReason != StopReasonError || msg == "" {
			if overflow != usageOver {
				t.Errorf("isContextOverflow = %v, usage rule says %v", overflow, usageOver)
			}
		} else if usageOver && !overflow {
			t.Errorf("usage over the window but isContextOverflow false")
		}
	})
}

// FuzzParseRetryAfter checks that parseRetryAfterMs never panics, that a
// hint is never negative or NaN, and that no hint means ms == 0.
func FuzzParseRetryAfter(f *testing.F) {
	for _, msg := range fuzzMessages {
		f.Add(msg, int64(1771200000000))
	}
	for _, tc := range retryAfterCases {
		f.Add(tc.msg, tc.now)
	}
	f.Add("retry-after: +275760-09-13T00:00:00Z", int64(math.MinInt64))
	f.Add("x-ratelimit-reset: 99999999999", int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, msg string, nowMs int64) {
		if len(msg) > maxFuzzInput {
			t.Skip()
		}
		ms, ok := parseRetryAfterMs(msg, time.UnixMilli(nowMs))
		if ok && (math.IsNaN(ms) || ms < 0 || math.Signbit(ms)) {
			t.Errorf("parseRetryAfterMs(%q) = %v, true", msg, ms)
		}
		if !ok && ms != 0 {
			t.Errorf("parseRetryAfterMs(%q) = %v, false; want 0", msg, ms)
		}
		// The date and number parsers must also hold up on their own,
		// since the fuzzer rarely builds a whole "retry-after:" prefix.
		if d, isDate := jsDateParse(msg); isDate && (math.IsNaN(d) || math.Abs(d) > 8.64e15) {
			t.Errorf("jsDateParse(%q) = %v", msg, d)
		}
		if n, isNum := jsNumber(msg); isNum && math.IsNaN(n) {
			t.Errorf("jsNumber(%q) = NaN, true", msg)
		}
		ms2, ok2 := parseRetryAfterMs("retry-after: "+msg, time.UnixMilli(nowMs))
		if ok2 && (math.IsNaN(ms2) || ms2 < 0) {
			t.Errorf("parseRetryAfterMs(retry-after: %q) = %v, true", msg, ms2)
		}
	})
}

// naiveRetryable is the retryable regex written out by hand.
func naiveRetryable(s string) bool {
	l := asciiLower(s)
	for _, lit := range []string{"overloaded", "too many requests", "429", "500", "502", "503", "504", "server error", "internal error", "fetch failed", "retry delay"} {
		if strings.Contains(l, lit) {
			return true
		}
	}
	for _, p := range [][2]string{{"rate", "limit"}, {"usage", "limit"}, {"service", "unavailable"}, {"connection", "error"}} {
		if naiveOptionalDot(l, p[0], p[1]) {
			return true
		}
	}
	return false
}

// naiveUsageLimit is the usage-limit regex written out by hand.
func naiveUsageLimit(s string) bool {
	l := asciiLower(s)
	return naiveOptionalDot(l, "usage", "limit") || strings.Contains(l, "usage_limit_reached") || strings.Contains(l, "limit_reached")
}

// naiveOptionalDot reports whether l contains a, then at most one JS `.`
// character (a BMP character other than a line terminator), then b.
func naiveOptionalDot(l, a, b string) bool {
	for i := 0; i <= len(l); {
		j := strings.Index(l[i:], a)
		if j < 0 {
			return false
		}
		rest := l[i+j+len(a):]
		if strings.HasPrefix(rest, b) {
			return true
		}
		r, size := utf8.DecodeRuneInString(rest)
		if size > 0 && r != '\n' && r != '\r' && r != 0x2028 && r != 0x2029 && r < 0x10000 && strings.HasPrefix(rest[size:], b) {
			return true
		}
		i += j + 1
	}
	return false
}

// asciiLower lower-cases ASCII letters only, byte for byte, which is what
// JS non-unicode /i amounts to for ASCII patterns.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
