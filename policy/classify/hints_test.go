package classify

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// pythonNowMs is the time the Anthropic Python SDK's
// test_parse_retry_after_header mocks: Fri, 29 Sep 2023 16:26:37 GMT.
const pythonNowMs = 1696004797000

// waitHintCases pin waitHint. The origin of each upstream vector is given
// as the section of /work/shared/reference/profiles.md; where the upstream
// value differs from ours, the comment says why. now 0 is retryTestNowMs
// (Mon, 16 Feb 2026 00:00:00 GMT); want NaN is no hint.
var waitHintCases = []struct {
	name    string
	msg     string
	headers map[string]string
	now     int64
	want    float64
}{
	// §3.3 oh-my-pi (agent-session-retry-cap.test.ts).
	{"§3.3 Google quota Please retry in", "Google API error (429): Quota exceeded for quota metric 'Generate Content API requests per minute'. Please retry in 0.05s.", nil, 0, 50},
	{"§3.3 retry-after-ms in text", "429 This request would exceed your account's rate limit. retry-after-ms=11180000", nil, 0, 11180000},
	{"§3.3 503 retry-after-ms", "503 service unavailable: overloaded_error retry-after-ms=50", nil, 0, 50},
	{"§3.3 rate limit retry-after-ms", "rate limit exceeded retry-after-ms=200", nil, 0, 200},

	// §5.1 codex (codex-api/src/sse/responses.rs).
	{"§5.1 try again in 28ms", "Rate limit reached for gpt-5.1 in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 100. Please try again in 28ms. Visit https://platform.openai.com/account/rate-limits to learn more.", nil, 0, 28},
	{"§5.1 try again in 1.898s", "Rate limit reached for gpt-5.1 in organization org-x on tokens per min (TPM): Limit 30000, Used 30000, Requested 100. Please try again in 1.898s. Visit https://platform.openai.com/account/rate-limits to learn more.", nil, 0, 1898},
	{"§5.1 azure Try again in 35 seconds", "Rate limit exceeded. Try again in 35 seconds.", nil, 0, 35000},
	{"§5.1 response.failed 11.054s", "Rate limit reached for gpt-5.1. Please try again in 11.054s. Visit https://platform.openai.com/account/rate-limits to learn more.", nil, 0, 11054},

	// §7.1 gemini-cli classifyGoogleError (googleQuotaErrors.test.ts).
	// waitHint reports the hint only; gemini's terminal thresholds (over
	// 300 s) are not its business.
	{"§7.1 Please retry in 44.097740004s", "You have exhausted your capacity on this model. Please retry in 44.097740004s", nil, 0, 44097.740004},
	{"§7.1 Please retry in 900.2ms", "Quota exceeded. Please retry in 900.2ms", nil, 0, 900.2},
	{"§7.1 retryDelay 45.123s", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay": "45.123s"}]}}`, nil, 0, 45123},
	{"§7.1 retryDelay 56s", `{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "56s"}`, nil, 0, 56000},
	{"§7.1 retryDelay 300s", `"retryDelay": "300s"`, nil, 0, 300000},
	{"§7.1 retryDelay 301s", `"retryDelay": "301s"`, nil, 0, 301000},
	// Float arithmetic as in gemini's parseFloat(s)*1000 (≈539.48 there).
	{"§7.1 Cloud Code 0.539477544s", `"retryDelay": "0.539477544s"`, nil, 0, 539.4775440000001},
	{"§7.1 Cloud Code 600s", `"retryDelay": "600s"`, nil, 0, 600000},
	{"§7.1 Resource exhausted 5s", "Resource exhausted. Please retry in 5s", nil, 0, 5000},
	{"§7.1 Resource exhausted 400s", "Resource exhausted. Please retry in 400s", nil, 0, 400000},

	// §6.1 opencode (test/session/retry.test.ts), header hints.
	{"§6.1 retry-after-ms 1500", "", map[string]string{"retry-after-ms": "1500"}, 0, 1500},
	{"§6.1 retry-after 30", "", map[string]string{"retry-after": "30"}, 0, 30000},
	{"§6.1 http-date now+20s", "", map[string]string{"retry-after": "Mon, 16 Feb 2026 00:00:20 GMT"}, 0, 20000},
	{"§6.1 not-a-number", "", map[string]string{"retry-after": "not-a-number"}, 0, math.NaN()},
	{"§6.1 Invalid Date String", "", map[string]string{"retry-after": "Invalid Date String"}, 0, math.NaN()},
	// opencode ignores a past date (backoff); waitHint clamps it to 0,
	// as the original's parser does.
	{"§6.1 past date is 0", "", map[string]string{"retry-after": "Sun, 15 Feb 2026 23:59:55 GMT"}, 0, 0},
	{"§6.1 retry-after 50", "", map[string]string{"retry-after": "50"}, 0, 50000},
	{"§6.1 retry-after-ms 700000", "", map[string]string{"retry-after-ms": "700000"}, 0, 700000},

	// §10 openai-node and §11 Vercel AI SDK.
	{"§10 http-date now+5s", "", map[string]string{"retry-after": "Mon, 16 Feb 2026 00:00:05 GMT"}, 0, 5000},
	{"§10 retry-after-ms 0 wins over retry-after", "", map[string]string{"retry-after-ms": "0", "retry-after": "Mon, 16 Feb 2026 00:00:05 GMT"}, 0, 0},
	{"§11 both headers", "", map[string]string{"retry-after-ms": "3000", "retry-after": "10"}, 0, 3000},
	{"§11 retry-after 5", "", map[string]string{"retry-after": "5"}, 0, 5000},
	// The AI SDK ignores a negative hint; waitHint clamps it to 0.
	{"§11 negative ms is 0", "", map[string]string{"retry-after-ms": "-1000"}, 0, 0},

	// §9.2 Anthropic Python dates, at its mocked time.
	{"§9.2 date now+20s", "", map[string]string{"retry-after": "Fri, 29 Sep 2023 16:26:57 GMT"}, pythonNowMs, 20000},
	{"§9.2 date now", "", map[string]string{"retry-after": "Fri, 29 Sep 2023 16:26:37 GMT"}, pythonNowMs, 0},
	{"§9.2 date now-10s", "", map[string]string{"retry-after": "Fri, 29 Sep 2023 16:26:27 GMT"}, pythonNowMs, 0},
	{"§9.2 bad weekday", "", map[string]string{"retry-after": "Zun, 29 Sep 2023 16:26:27 GMT"}, pythonNowMs, math.NaN()},

	// §4.3 pi google-gemini-cli-retry-delay.test.ts; pi adds 1000 ms of
	// padding, waitHint does not.
	{"§4.3 header beats body", "Please retry in 1s", map[string]string{"retry-after": "5"}, 0, 5000},
	{"§4.3 http-date now+12s", "", map[string]string{"retry-after": "Mon, 16 Feb 2026 00:00:12 GMT"}, 0, 12000},
	{"§4.3 x-ratelimit-reset epoch now+20s", "", map[string]string{"x-ratelimit-reset": "1771200020"}, 0, 20000},
	{"§4.3 x-ratelimit-reset-after is not read", "", map[string]string{"x-ratelimit-reset-after": "30"}, 0, math.NaN()},

	// Header order and validity.
	{"bad retry-after-ms falls to retry-after", "", map[string]string{"retry-after-ms": "soon", "retry-after": "2"}, 0, 2000},
	{"empty retry-after-ms falls through", "", map[string]string{"retry-after-ms": "", "x-ratelimit-reset": "3"}, 0, 3000},
	{"retry-after beats x-ratelimit-reset-ms", "", map[string]string{"retry-after": "1", "x-ratelimit-reset-ms": "5"}, 0, 1000},
	{"reset-ms beats reset", "", map[string]string{"x-ratelimit-reset-ms": "250", "x-ratelimit-reset": "60"}, 0, 250},
	{"headers beat text rule 1", "retry-after-ms: 9", map[string]string{"x-ratelimit-reset": "60"}, 0, 60000},
	{"bad headers fall to text", "retry-after-ms: 9", map[string]string{"retry-after": "later"}, 0, 9},
	{"upper-case name is not looked up", "", map[string]string{"Retry-After": "5"}, 0, math.NaN()},
	{"spaces and tabs trimmed", "", map[string]string{"retry-after": " \t7 "}, 0, 7000},
	{"fraction and exponent", "", map[string]string{"retry-after": "1.5e1"}, 0, 15000},
	{"leading dot", "", map[string]string{"retry-after-ms": ".5"}, 0, 0.5},
	{"unit suffix is not a number", "", map[string]string{"retry-after": "7s"}, 0, math.NaN()},
	{"Infinity is not a number", "", map[string]string{"retry-after-ms": "Infinity"}, 0, math.NaN()},
	{"NaN is not a number", "", map[string]string{"retry-after-ms": "NaN"}, 0, math.NaN()},
	{"hex is not a number", "", map[string]string{"retry-after-ms": "0x10"}, 0, math.NaN()},
	{"huge is clamped", "", map[string]string{"retry-after-ms": "1e400"}, 0, MaxWaitHintMs},
	{"huge seconds clamped", "", map[string]string{"retry-after": "99999999999999999999999999999999999"}, 0, MaxWaitHintMs},
	{"negative seconds is 0", "", map[string]string{"retry-after": "-10"}, 0, 0},
	{"negative zero is 0", "", map[string]string{"retry-after": "-0"}, 0, 0},
	{"RFC 850 date", "", map[string]string{"retry-after": "Monday, 16-Feb-26 00:00:30 GMT"}, 0, 30000},
	{"asctime date", "", map[string]string{"retry-after": "Mon Feb 16 00:00:45 2026"}, 0, 45000},
	{"ISO date is not an HTTP date", "", map[string]string{"retry-after": "2026-02-16T00:00:30Z"}, 0, math.NaN()},
	{"reset-ms epoch", "", map[string]string{"x-ratelimit-reset-ms": "1771200005000"}, 0, 5000},
	{"reset-ms epoch past is 0", "", map[string]string{"x-ratelimit-reset-ms": "1771199995000"}, 0, 0},
	{"reset-ms 1e12 is a duration", "", map[string]string{"x-ratelimit-reset-ms": "1000000000000"}, 0, 1e12},
	{"reset-ms fraction", "", map[string]string{"x-ratelimit-reset-ms": "1.5"}, 0, 1.5},
	{"reset 1e9 is a duration", "", map[string]string{"x-ratelimit-reset": "1000000000"}, 0, 1e12},
	{"reset epoch past is 0", "", map[string]string{"x-ratelimit-reset": "1000000001"}, 0, 0},
	{"reset fraction", "", map[string]string{"x-ratelimit-reset": "1.5"}, 0, 1500},
	{"reset negative is 0", "", map[string]string{"x-ratelimit-reset": "-5"}, 0, 0},

	// Text: the original's parser first, then the three patterns in order.
	{"original rule 2 before please retry", "retry-after: 2; Please retry in 5s", nil, 0, 2000},
	{"original rule 4 before try again", "Try again in 5s. x-ratelimit-reset: 60", nil, 0, 60000},
	{"original rule 2 falls through", "retry-after: soon, please retry in 2s", nil, 0, 2000},
	{"original Infinity clamped", "retry-after: Infinity", nil, 0, MaxWaitHintMs},
	{"please retry before try again", "try again in 1s; Please retry in 5s", nil, 0, 5000},
	{"try again before retryDelay", `"retryDelay": "9s", try again in 3s`, nil, 0, 3000},
	{"please retry before retryDelay", `Please retry in 44.097740004s. {"retryDelay": "44s"}`, nil, 0, 44097.740004},
	{"first match of a pattern", "Please retry in 2s, or please retry in 9s", nil, 0, 2000},
	{"PLEASE RETRY upper case", "PLEASE RETRY IN 2MS", nil, 0, 2},
	{"please retry zero", "Please retry in 0s", nil, 0, 0},
	{"please retry no space before unit", "please retry in 5 s", nil, 0, math.NaN()},
	{"please retry no leading dot", "please retry in .5s", nil, 0, math.NaN()},
	{"please retry minutes unknown", "please retry in 5min", nil, 0, math.NaN()},
	{"TRY AGAIN upper case", "TRY AGAIN IN 4S", nil, 0, 4000},
	{"try again 5 ms", "try again in 5 ms", nil, 0, 5},
	{"try again milliseconds", "try again in 500 milliseconds", nil, 0, 500},
	{"try again sec", "try again in 5 sec", nil, 0, 5000},
	{"try again m", "try again in 2m", nil, 0, 120000},
	{"try again min", "try again in 2 min", nil, 0, 120000},
	{"try again minutes", "Try again in 2 minutes.", nil, 0, 120000},
	{"try again minute", "try again in 1 minute", nil, 0, 60000},
	{"try again h", "try again in 2h", nil, 0, 7_200_000},
	{"try again hours", "try again in 1.5 hours", nil, 0, 5_400_000},
	{"try again two spaces", "try again in 5  s", nil, 0, math.NaN()},
	{"try again tilde", "Try again in ~120 min.", nil, 0, math.NaN()},
	{"try again no unit", "try again in 5", nil, 0, math.NaN()},
	{"try again later", "Please try again later.", nil, 0, math.NaN()},
	{"try again huge", "try again in " + strings.Repeat("9", 400) + " hours", nil, 0, MaxWaitHintMs},
	{"retryDelay compact JSON", `{"retryDelay":"45s"}`, nil, 0, 45000},
	{"retryDelay whitespace", "\"retryDelay\" \n:\t \"2.5s\"", nil, 0, 2500},
	{"retryDelay case", `"RetryDelay": "5s"`, nil, 0, 5000},
	{"retryDelay ms unit", `"retryDelay": "900ms"`, nil, 0, math.NaN()},
	{"retryDelay number", `"retryDelay": 5`, nil, 0, math.NaN()},
	{"retryDelay unquoted key", `retryDelay: "5s"`, nil, 0, math.NaN()},

	// No hint.
	{"empty", "", nil, 0, math.NaN()},
	{"plain error", "503 Service Unavailable", nil, 0, math.NaN()},
	{"empty headers", "overloaded", map[string]string{}, 0, math.NaN()},
}

func TestWaitHint(t *testing.T) {
	for _, tc := range waitHintCases {
		t.Run(tc.name, func(t *testing.T) {
			m := AssistantMessage{StopReason: StopReasonError, ErrorMessage: tc.msg, Headers: tc.headers}
			got, ok := waitHint(m, hintNow(tc.now))
			checkHint(t, fmt.Sprintf("waitHint(%q, %v)", tc.msg, tc.headers), got, ok, tc.want)
		})
	}
}

// TestWaitHintKeepsOriginalParser: for a message alone, waitHint agrees
// with parseRetryAfterMs wherever the original's parser finds a hint (up to
// the clamp of +Inf), so the credential-switch path and the wait hint read
// the same text the same way.
func TestWaitHintKeepsOriginalParser(t *testing.T) {
	for _, tc := range retryAfterCases {
		want, wantOK := parseRetryAfterMs(tc.msg, hintNow(tc.now))
		if !wantOK {
			continue
		}
		got, ok := waitHint(AssistantMessage{ErrorMessage: tc.msg}, hintNow(tc.now))
		if !ok || got != math.Min(want, MaxWaitHintMs) {
			t.Errorf("%s: waitHint(%q) = %v, %v; parseRetryAfterMs gives %v", tc.name, tc.msg, got, ok, want)
		}
	}
}

// TestWaitHintStopReason: waitHint reads a reply whatever its stop reason.
func TestWaitHintStopReason(t *testing.T) {
	for _, r := range []StopReason{StopReasonStop, StopReasonError, StopReasonAborted, ""} {
		m := AssistantMessage{StopReason: r, Headers: map[string]string{"retry-after": "3"}}
		if got, ok := waitHint(m, time.UnixMilli(retryTestNowMs)); !ok || got != 3000 {
			t.Errorf("stopReason %q: waitHint = %v, %v; want 3000, true", r, got, ok)
		}
	}
}

// TestMaxWaitHintMs: the clamp converts to a time.Duration without
// overflow, and one more millisecond would not.
func TestMaxWaitHintMs(t *testing.T) {
	d := time.Duration(MaxWaitHintMs) * time.Millisecond
	if d <= 0 || d > math.MaxInt64 || d/time.Millisecond != time.Duration(MaxWaitHintMs) {
		t.Errorf("MaxWaitHintMs = %v overflows a Duration (%v)", MaxWaitHintMs, d)
	}
	if float64(math.MaxInt64)/1e6-MaxWaitHintMs >= 1 {
		t.Errorf("MaxWaitHintMs = %v is not the largest whole ms in a Duration", MaxWaitHintMs)
	}
}

// TestParseHeaderRetryAfterPython pins parseHeaderRetryAfter on the
// Anthropic Python SDK's test_parse_retry_after_header (§9.2): the raw
// values, then the SDK's window (a hint is used only if 0 < t <= 60 s,
// else the 0.5 s backoff) applied to them, which gives the SDK's expected
// delays.
func TestParseHeaderRetryAfterPython(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		value    string
		raw      float64 // NaN: not ok
		sdkDelay float64 // seconds, the SDK's expectation
	}{
		{"20", 20000, 20},
		{"0", 0, 0.5},
		{"-10", -10000, 0.5},
		{"60", 60000, 60},
		{"61", 61000, 0.5},
		{"99999999999999999999999999999999999", 1e38, 0.5},
		{"", nan, 0.5},
		{"Fri, 29 Sep 2023 16:26:57 GMT", 20000, 20},
		{"Fri, 29 Sep 2023 16:26:37 GMT", 0, 0.5},
		{"Fri, 29 Sep 2023 16:26:27 GMT", -10000, 0.5},
		{"Fri, 29 Sep 2023 16:27:37 GMT", 60000, 60},
		{"Fri, 29 Sep 2023 16:27:38 GMT", 61000, 0.5},
		{"Zun, 29 Sep 2023 16:26:27 GMT", nan, 0.5},
	}
	now := time.UnixMilli(pythonNowMs)
	for _, tc := range cases {
		raw, ok := parseHeaderRetryAfter(tc.value, now)
		if math.IsNaN(tc.raw) {
			if ok || raw != 0 {
				t.Errorf("parseHeaderRetryAfter(%q) = %v, %v; want not ok", tc.value, raw, ok)
			}
		} else if !ok || raw != tc.raw {
			t.Errorf("parseHeaderRetryAfter(%q) = %v, %v; want %v, true", tc.value, raw, ok, tc.raw)
		}
		delay := 0.5
		if ok && raw > 0 && raw <= 60000 {
			delay = raw / 1000
		}
		if delay != tc.sdkDelay {
			t.Errorf("Python window on %q: %v s, the SDK expects %v s", tc.value, delay, tc.sdkDelay)
		}
	}
}

// TestParseHeaderRetryAfterMs: a decimal number of ms, unclamped.
func TestParseHeaderRetryAfterMs(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		value string
		want  float64
	}{
		{"10", 10}, {"0", 0}, {"-1000", -1000}, {"2.5", 2.5}, {" 7\t", 7}, {"1e3", 1000}, {"+4", 4},
		{"1e400", math.Inf(1)}, {"-1e400", math.Inf(-1)},
		{"", nan}, {" ", nan}, {"Infinity", nan}, {"inf", nan}, {"NaN", nan}, {"0x1F", nan},
		{"1_000", nan}, {"10ms", nan}, {"1 0", nan}, {".", nan}, {"1e", nan}, {"\u00a010", nan},
	}
	for _, tc := range cases {
		got, ok := parseHeaderRetryAfterMs(tc.value)
		if math.IsNaN(tc.want) {
			if ok || got != 0 {
				t.Errorf("parseHeaderRetryAfterMs(%q) = %v, %v; want not ok", tc.value, got, ok)
			}
			continue
		}
		if !ok || got != tc.want {
			t.Errorf("parseHeaderRetryAfterMs(%q) = %v, %v; want %v, true", tc.value, got, ok, tc.want)
		}
	}
}

func TestValidateHTTP(t *testing.T) {
	cases := []struct {
		m       AssistantMessage
		wantErr string // "" for nil
	}{
		{AssistantMessage{}, ""},
		{AssistantMessage{Status: 429, Headers: map[string]string{"retry-after": "5", "x-should-retry": "true"}}, ""},
		{AssistantMessage{Status: 100}, ""},
		{AssistantMessage{Status: 599}, ""},
		{AssistantMessage{Status: 99}, "status 99: want 0 (unknown) or an HTTP status 100-599"},
		{AssistantMessage{Status: 600}, "status 600: want 0 (unknown) or an HTTP status 100-599"},
		{AssistantMessage{Status: -1}, "status -1: want 0 (unknown) or an HTTP status 100-599"},
		{AssistantMessage{Headers: map[string]string{"Retry-After": "5"}}, `headers: name "Retry-After" has upper-case letters; names are lower-case ("retry-after")`},
		{AssistantMessage{Headers: map[string]string{"": "5"}}, "headers: empty header name"},
		{AssistantMessage{Headers: map[string]string{"retry after": "5"}}, `headers: name "retry after" has ' ' at byte 5; a name is letters, digits and !#$%&'*+-.^_` + "`|~"},
		{AssistantMessage{Headers: map[string]string{"b-Bad": "", "a-Bad": ""}}, `headers: name "a-Bad" has upper-case letters; names are lower-case ("a-bad")`},
	}
	for _, tc := range cases {
		err := tc.m.ValidateHTTP()
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("ValidateHTTP(%+v) = %v, want nil", tc.m, err)
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("ValidateHTTP(%+v) = %v, want %q", tc.m, err, tc.wantErr)
		}
	}
}

// FuzzWaitHint checks that waitHint and the header parsers never panic,
// that a hint is never negative, NaN or above MaxWaitHintMs, and that no
// hint means ms == 0.
func FuzzWaitHint(f *testing.F) {
	for _, tc := range waitHintCases {
		h := tc.headers
		f.Add(tc.msg, h["retry-after-ms"], h["retry-after"], h["x-ratelimit-reset-ms"], h["x-ratelimit-reset"], uint8(0xff), tc.now)
	}
	for _, msg := range fuzzMessages {
		f.Add(msg, "", "", "", "", uint8(0), int64(retryTestNowMs))
	}
	f.Add("", "", "Fri, 31 Dec 9999 23:59:59 GMT", "", "", uint8(2), int64(math.MinInt64))
	f.Add("", "", "", "1e308", "1e308", uint8(12), int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, msg, ram, ra, rrm, rr string, present uint8, nowMs int64) {
		if len(msg) > maxFuzzInput {
			t.Skip()
		}
		h := map[string]string{}
		for i, kv := range [][2]string{{"retry-after-ms", ram}, {"retry-after", ra}, {"x-ratelimit-reset-ms", rrm}, {"x-ratelimit-reset", rr}} {
			if present&(1<<i) != 0 {
				h[kv[0]] = kv[1]
			}
		}
		now := time.UnixMilli(nowMs)
		ms, ok := waitHint(AssistantMessage{ErrorMessage: msg, Headers: h}, now)
		if ok && (math.IsNaN(ms) || ms < 0 || math.Signbit(ms) || ms > MaxWaitHintMs) {
			t.Errorf("waitHint(%q, %v) = %v, true", msg, h, ms)
		}
		if !ok && ms != 0 {
			t.Errorf("waitHint(%q, %v) = %v, false; want 0", msg, h, ms)
		}
		for _, v := range []string{ram, ra, rrm, rr, msg} {
			if x, ok := parseHeaderRetryAfter(v, now); math.IsNaN(x) || (!ok && x != 0) {
				t.Errorf("parseHeaderRetryAfter(%q) = %v, %v", v, x, ok)
			}
			if x, ok := parseHeaderRetryAfterMs(v); math.IsNaN(x) || (!ok && x != 0) {
				t.Errorf("parseHeaderRetryAfterMs(%q) = %v, %v", v, x, ok)
			}
		}
		// The text patterns alone, since the fuzzer rarely builds a whole
		// prefix: append the message to each.
		for _, p := range []string{"please retry in ", "try again in ", `"retryDelay": "`} {
			x, ok := waitHint(AssistantMessage{ErrorMessage: p + msg}, now)
			if ok && (math.IsNaN(x) || x < 0 || x > MaxWaitHintMs) {
				t.Errorf("waitHint(%q) = %v, true", p+msg, x)
			}
		}
	})
}

// BenchmarkWaitHint measures waitHint on the table's replies.
func BenchmarkWaitHint(b *testing.B) {
	now := time.UnixMilli(retryTestNowMs)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tc := waitHintCases[i%len(waitHintCases)]
		waitHint(AssistantMessage{ErrorMessage: tc.msg, Headers: tc.headers}, now)
	}
}
