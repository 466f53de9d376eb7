package classify

import (
	"math"
	"strings"
	"testing"
)

func errorReply(s string) AssistantMessage {
	return AssistantMessage{StopReason: StopReasonError, ErrorMessage: s}
}

func TestClassifyClassString(t *testing.T) {
	cases := []struct {
		c    Class
		want string
	}{
		{ClassSuccess, "success"},
		{ClassRetryable, "retryable"},
		{ClassOverflow, "overflow"},
		{ClassFatal, "fatal"},
		{ClassAborted, "aborted"},
		{Class(42), "Class(42)"},
		{Class(-1), "Class(-1)"},
	}
	for _, tc := range cases {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("Class(%d).String() = %q, want %q", int(tc.c), got, tc.want)
		}
	}
	if ClassSuccess != 0 {
		t.Errorf("ClassSuccess = %d, want the zero value", ClassSuccess)
	}
}

// messageCase is a message and whether a predicate on it holds.
type messageCase struct {
	name string
	msg  string
	want bool
}

// checkMessages checks is on each case's message; call is how errors
// write the call, its %q the message ("isRetryableErrorMessage(%q)").
func checkMessages(t *testing.T, call string, is func(msg string) bool, cases []messageCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := is(tc.msg); got != tc.want {
				t.Errorf(call+" = %v, want %v", tc.msg, got, tc.want)
			}
		})
	}
}

func TestIsRetryableErrorMessage(t *testing.T) {
	cases := []messageCase{
		// One matching message per alternative.
		{"overloaded", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, true},
		{"rate_limit", "rate_limit_error: slow down", true},
		{"rate-limit", "rate-limit hit", true},
		{"ratelimit", "ratelimited by upstream", true},
		{"rate limit", "Rate limit reached for gpt-4o", true},
		{"rate.limit", "rate.limit", true},
		{"rate nbsp limit", "rate\u00a0limit", true},
		{"usage_limit", "usage_limit_reached", true},
		{"usage.limit", "usage.limit", true},
		{"usage limit", "You have hit your usage limit", true},
		{"usagelimit", "usagelimit", true},
		{"too many requests", "429 Too Many Requests", true},
		{"429", "status 429", true},
		{"500", "HTTP 500", true},
		{"502", "502 Bad Gateway", true},
		{"503", "error 503", true},
		{"504", "504 Gateway Timeout", true},
		{"service_unavailable", "service_unavailable", true},
		{"service unavailable", "Service Unavailable", true},
		{"serviceunavailable", "ServiceUnavailable", true},
		{"server error", "Internal Server Error", true},
		{"internal error", "internal error occurred", true},
		{"connection-error", "connection-error", true},
		{"connection error", "Connection error.", true},
		{"connectionerror", "ConnectionError", true},
		{"fetch failed", "TypeError: fetch failed", true},
		{"retry delay", "retry delay exceeded", true},

		// Case-insensitivity.
		{"upper OVERLOADED", "OVERLOADED", true},
		{"mixed RaTe LiMiT", "RaTe LiMiT", true},
		{"upper FETCH FAILED", "FETCH FAILED", true},

		// The digit alternatives have no word boundaries: "65000"
		// contains "500". The original has this false positive and it is
		// kept on purpose.
		{"false positive 65000", "prompt used 65000 tokens", true},
		{"false positive request id", "request id req_4295abc", true},

		// Not retryable.
		{"empty", "", false},
		{"auth", "401 Unauthorized: invalid x-api-key", false},
		{"bad request", "400 Bad Request: messages.0.content is required", false},
		{"overflow text", "prompt is too long: 213462 tokens > 200000 maximum", false},
		{"rate then two chars", "rate__limit", false},
		{"rate newline limit", "rate\nlimit", false},
		{"rate CR limit", "rate\rlimit", false},
		{"rate LS limit", "rate\u2028limit", false},
		{"rate PS limit", "rate\u2029limit", false},
		// An astral character is two UTF-16 code units, so JS `.?`
		// cannot match it.
		{"rate emoji limit", "rate\U0001F600limit", false},
		{"digits split", "4 2 9", false},
		{"server_error", "server_error", false},
		{"fetch-failed", "fetch-failed", false},
		// JS /i does not fold U+017F (long s) to "s".
		{"long s", "too many requeſts", false},
		{"long s service", "ſervice unavailable", false},
		{"long s server", "ſerver error", false},
		{"long s usage", "uſage limit", false},
	}
	checkMessages(t, "isRetryableErrorMessage(%q)", isRetryableErrorMessage, cases)
}

func TestIsUsageLimitErrorMessage(t *testing.T) {
	cases := []struct {
		msg  string
		want bool
	}{
		{"usage limit", true},
		{"Usage_Limit", true},
		{"usage-limit", true},
		{"usagelimit", true},
		{"usage_limit_reached", true},
		{"USAGE_LIMIT_REACHED", true},
		{"limit_reached", true},
		{"The rate_limit_reached error", true},
		{"codex: you have reached your usage limit, retry-after: 3600", true},
		{"", false},
		{"usage  limit", false},
		{"limit reached", false},
		{"limit-reached", false},
		{"rate limit", false},
		{"uſage limit", false},
		{"usage\nlimit", false},
		{"usage\U0001F600limit", false},
		// "limit_reached" still matches when "usage" is spelled with a long s.
		{"uſage_limit_reached", true},
	}
	for _, tc := range cases {
		if got := isUsageLimitErrorMessage(tc.msg); got != tc.want {
			t.Errorf("isUsageLimitErrorMessage(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
}

// overflowCases has, for each of the 21 patterns in order, a message that
// matches it and one that matches no pattern at all.
var overflowCases = []struct {
	match, noMatch string
}{
	{"prompt is too long: 213462 tokens > 200000 maximum", "prompt is too short"},
	{"Input is too long for requested model.", "input is long for requested model"},
	{"The input exceeds the context window of this model", "exceeds the window"},
	{"Input token count (1048577) exceeds the maximum number of tokens allowed", "input token count\nexceeds the maximum"},
	{"maximum prompt length is 131072", "maximum prompt length is unknown"},
	{"Please reduce the length of the messages or completion.", "reduce the length of the message"},
	{"This model's maximum context length is 128000 tokens. However, you requested 130000", "maximum context length is 128000 words"},
	{"Request exceeds the limit of 32768", "exceeds the limit of many"},
	{"the request exceeds the available context size, try increasing it", "exceeds the available context"},
	{"requested tokens (9000) exceed context window of 8192", "requested tokens\nexceed context window"},
	{"context length exceeded", "context\nlength exceeded"},
	{"prompt is way too large for the context", "prompt too large\ncontext"},
	{"requested token count exceeds n_ctx", "requested tokens fit in n_ctx"},
	{"This request is greater than the context length", "greater than the context"},
	{"Error: context window exceeds limit", "context window near limit"},
	{"exceeded model token limit", "exceeded model limit"},
	{"error code: context_length_exceeded", "context-length-exceeded"},
	{"Too many tokens in request", "too many to\u212aens"}, // Kelvin sign is not k in JS /i
	{"token limit exceeded for this deployment", "token limit not exceeded"},
	{`{"type":"request_too_large"}`, "request too large"},
	{"400 status code (no body)", "Error: 400 (no body)"},
}

func TestOverflowPatterns(t *testing.T) {
	pats := OverflowPatterns()
	if len(pats) != 21 {
		t.Fatalf("OverflowPatterns() has %d patterns, want 21", len(pats))
	}
	if len(overflowCases) != len(pats) {
		t.Fatalf("test table has %d cases for %d patterns", len(overflowCases), len(pats))
	}
	if pats[0] != "prompt is too long" || pats[20] != `^4(00|13)\s*(status code)?\s*\(no body\)` {
		t.Errorf("unexpected first/last pattern: %q, %q", pats[0], pats[20])
	}
	pats[0] = "changed"
	if OverflowPatterns()[0] != "prompt is too long" {
		t.Error("overflowPatterns returns shared storage")
	}
	for i, tc := range overflowCases {
		if !overflowRes[i].MatchString(foldASCII(tc.match)) {
			t.Errorf("pattern %d %q does not match %q", i+1, overflowSources[i], tc.match)
		}
		if !isContextOverflow(errorReply(tc.match), 0) {
			t.Errorf("isContextOverflow(error %q) = false, want true", tc.match)
		}
		if isContextOverflow(errorReply(tc.noMatch), 0) {
			t.Errorf("isContextOverflow(error %q) = true, want false (pattern %d)", tc.noMatch, i+1)
		}
	}
}

func TestOverflowPatternDetails(t *testing.T) {
	cases := []messageCase{
		{"400 no body", "400 (no body)", true},
		{"413 no body", "413 (no body)", true},
		{"413 status code no body", "413 status code (no body)", true},
		{"no spaces", "400status code(no body)", true},
		{"case", "400 STATUS CODE (NO BODY)", true},
		{"nbsp is JS whitespace", "400\u00a0(no body)", true},
		{"tab and spaces", "413 \t status code  (no body) trailing", true},
		{"anchored: leading space", " 400 (no body)", false},
		{"anchored: leading text", "Error 400 (no body)", false},
		{"401", "401 (no body)", false},
		{"NEL is not JS whitespace", "400\u0085(no body)", false},
		{"missing parens", "400 no body", false},
		{"dot-star spans astral chars", "input token count \U0001F600 exceeds the maximum", true},
		{"dot-star stops at LS", "input token count\u2028exceeds the maximum", false},
		{"dot-star stops at CR", "requested tokens\rexceed context size", false},
		{"requested token singular", "Requested token count 5000 greater than n_ctx", true},
		{"context size too small", "context size too small for prompt", true},
		{"context window overflow", "context window overflow", true},
		{"input too large n_ctx", "input is too large to fit in n_ctx", true},
		{"context_length_exceeded mixed", "context length_exceeded", true},
		{"digits required", "maximum context length is tokens", false},
		{"long s", "prompt iſ too long", false},
	}
	checkMessages(t, "isContextOverflow(error %q)", func(msg string) bool { return isContextOverflow(errorReply(msg), 0) }, cases)
}

func TestIsContextOverflowCases(t *testing.T) {
	cases := []struct {
		name   string
		m      AssistantMessage
		window int64
		want   bool
	}{
		{"case 1 needs stopReason error", AssistantMessage{StopReason: StopReasonStop, ErrorMessage: "prompt is too long"}, 0, false},
		{"case 1 ignores aborted", AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "prompt is too long"}, 0, false},
		{"case 1 needs a message", AssistantMessage{StopReason: StopReasonError}, 0, false},
		{"usage strictly greater", AssistantMessage{StopReason: StopReasonError, InputTokens: 100, CacheReadTokens: 1}, 100, true},
		{"usage equal is not overflow", AssistantMessage{StopReason: StopReasonError, InputTokens: 60, CacheReadTokens: 40}, 100, false},
		{"window 0 disables usage rule", AssistantMessage{StopReason: StopReasonError, InputTokens: 150_000, CacheReadTokens: 60_000}, 0, false},
		{"usage rule ignores stopReason stop", AssistantMessage{StopReason: StopReasonStop, InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, true},
		{"usage rule ignores stopReason aborted", AssistantMessage{StopReason: StopReasonAborted, InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, true},
		{"usage rule ignores stopReason toolUse", AssistantMessage{StopReason: StopReasonToolUse, InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, true},
		{"usage under window", AssistantMessage{StopReason: StopReasonStop, InputTokens: 150_000, CacheReadTokens: 60_000}, 210_000, false},
		{"cacheRead counts", AssistantMessage{StopReason: StopReasonStop, CacheReadTokens: 201}, 200, true},
		{"529 over window", AssistantMessage{StopReason: StopReasonError, ErrorMessage: "529 overloaded_error", InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, true},
		// JS `if (contextWindow)` is truthy for a negative number.
		{"negative window is truthy", AssistantMessage{StopReason: StopReasonStop}, -1, true},
		// The sum is float64 as in JS, so it cannot wrap around.
		{"huge usage does not wrap", AssistantMessage{StopReason: StopReasonStop, InputTokens: math.MaxInt64, CacheReadTokens: math.MaxInt64}, 1, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := isContextOverflow(tc.m, tc.window); got != tc.want {
				t.Errorf("isContextOverflow(%+v, %d) = %v, want %v", tc.m, tc.window, got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name   string
		m      AssistantMessage
		window int64
		want   Class
	}{
		{"stop", AssistantMessage{StopReason: StopReasonStop}, 200_000, ClassSuccess},
		{"toolUse", AssistantMessage{StopReason: StopReasonToolUse}, 200_000, ClassSuccess},
		{"length", AssistantMessage{StopReason: StopReasonLength}, 200_000, ClassSuccess},
		{"unknown stop reason", AssistantMessage{StopReason: "weird"}, 0, ClassSuccess},
		{"empty stop reason", AssistantMessage{}, 0, ClassSuccess},
		{"stop with retryable-looking message", AssistantMessage{StopReason: StopReasonStop, ErrorMessage: "overloaded"}, 0, ClassSuccess},
		// The usage rule makes isContextOverflow true for a success, but
		// Classify leaves that to the compaction hand-off.
		{"stop over window is success", AssistantMessage{StopReason: StopReasonStop, InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, ClassSuccess},
		{"aborted", AssistantMessage{StopReason: StopReasonAborted}, 0, ClassAborted},
		{"aborted over window", AssistantMessage{StopReason: StopReasonAborted, InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, ClassAborted},
		{"aborted with retryable message", AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "429"}, 0, ClassAborted},
		{"retryable 529", errorReply(`529 {"type":"error","error":{"type":"overloaded_error"}}`), 200_000, ClassRetryable},
		{"retryable rate limit", errorReply("Rate limit reached"), 0, ClassRetryable},
		{"retryable false positive 65000", errorReply("invalid tool input at offset 65000"), 0, ClassRetryable},
		{"529 over window is overflow", AssistantMessage{StopReason: StopReasonError, ErrorMessage: "529 overloaded", InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, ClassOverflow},
		{"prompt too long is overflow", errorReply("prompt is too long: 213462 tokens > 200000 maximum"), 200_000, ClassOverflow},
		{"overflow wins over 500", errorReply("prompt is too long: 265000 tokens > 200000 maximum"), 200_000, ClassOverflow},
		{"413 no body", errorReply("413 status code (no body)"), 0, ClassOverflow},
		{"fatal", errorReply("401 invalid x-api-key"), 200_000, ClassFatal},
		{"empty message fatal", AssistantMessage{StopReason: StopReasonError}, 200_000, ClassFatal},
		{"empty message over window is overflow", AssistantMessage{StopReason: StopReasonError, InputTokens: 150_000, CacheReadTokens: 60_000}, 200_000, ClassOverflow},
		{"empty message, window unknown", AssistantMessage{StopReason: StopReasonError, InputTokens: 150_000, CacheReadTokens: 60_000}, 0, ClassFatal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := (*Classifier)(nil).Classify(tc.m, tc.window); got != tc.want {
				t.Errorf("(*Classifier)(nil).Classify(%+v, %d) = %v, want %v", tc.m, tc.window, got, tc.want)
			}
		})
	}
	// The message that is both overflow and retryable-looking.
	m := errorReply("prompt is too long: 265000 tokens > 200000 maximum")
	if !isRetryableErrorMessage(m.ErrorMessage) {
		t.Errorf("%q should match the retryable regex (265000 contains 500)", m.ErrorMessage)
	}
	// A success over the window: the predicate says overflow, Classify success.
	s := AssistantMessage{StopReason: StopReasonStop, InputTokens: 150_000, CacheReadTokens: 60_000}
	if !isContextOverflow(s, 200_000) || (*Classifier)(nil).Classify(s, 200_000) != ClassSuccess {
		t.Errorf("stop reply over window: isContextOverflow=%v Classify=%v, want true, success",
			isContextOverflow(s, 200_000), (*Classifier)(nil).Classify(s, 200_000))
	}
}

func TestClassifyTranslateJS(t *testing.T) {
	got := translateJS(`a.?b\s[^\s,;]+(\d)`)
	want := `a` + jsDotBMP + `?b[` + jsSpaceSet + `][^` + jsSpaceSet + `,;]+([0-9])`
	if got != want {
		t.Errorf("translateJS = %q, want %q", got, want)
	}
	if got := translateJS(`X.*y`); got != `x`+jsDot+`*y` {
		t.Errorf("translateJS(x.*y) = %q", got)
	}
	// Syntax outside the supported subset must not be translated silently.
	for _, src := range []string{`a.`, `a.b`, `\bword`, `(?:x)`, `a{2}`, `x$`, `[a-z]`, `é`, `a\`, `[ab`, `a|^b`} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("translateJS(%q) did not panic", src)
				}
			}()
			translateJS(src)
		}()
	}
}

func TestOverflowJSWhitespace(t *testing.T) {
	// Every character of JS \s separates "400" from "(no body)"; a few
	// characters that RE2 or Unicode call spaces but JS does not, do not.
	for _, r := range []rune{'\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2000, 0x2005, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF} {
		msg := "400" + string(r) + "(no body)"
		if !isContextOverflow(errorReply(msg), 0) {
			t.Errorf("U+%04X should count as JS whitespace", r)
		}
		if !isJSSpace(r) {
			t.Errorf("isJSSpace(U+%04X) = false", r)
		}
	}
	for _, r := range []rune{0x85, 0x180E, 0x200B, 0x2060, 'x'} {
		msg := "400" + string(r) + "(no body)"
		if isContextOverflow(errorReply(msg), 0) {
			t.Errorf("U+%04X should not count as JS whitespace", r)
		}
		if isJSSpace(r) {
			t.Errorf("isJSSpace(U+%04X) = true", r)
		}
	}
}

func TestClassifyFoldASCII(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"ABC xyz", "abc xyz"},
		{"Retry-After: Infinity", "retry-after: infinity"},
		// Only A-Z: the Kelvin sign, long s, dotted I and invalid bytes stay.
		{"\u212a\u017f\u0130\xff\u00c9Z", "\u212a\u017f\u0130\xff\u00c9z"},
	}
	for _, tc := range cases {
		if got := foldASCII(tc.in); got != tc.want {
			t.Errorf("foldASCII(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRetryableLongMessage(t *testing.T) {
	// A long body with the match at the end still matches.
	msg := strings.Repeat("x", 100_000) + " Overloaded"
	if !isRetryableErrorMessage(msg) {
		t.Error("match at the end of a long message not found")
	}
}
