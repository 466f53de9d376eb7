package classify

import (
	"math/rand"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mustClassifier builds a Classifier or fails the test.
func mustClassifier(t testing.TB, mode string, retryable, nonRetryable []string) *Classifier {
	t.Helper()
	c, err := NewClassifier(mode, retryable, nonRetryable)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// httpReply is an error reply with an HTTP status and headers.
func httpReply(msg string, status int, headers map[string]string) AssistantMessage {
	return AssistantMessage{StopReason: StopReasonError, ErrorMessage: msg, Status: status, Headers: headers}
}

// classificationCorpus gathers the messages of the package's classification
// and retry-after tests, and a few more.
func classificationCorpus() []string {
	msgs := slices.Clone(fuzzMessages)
	for _, c := range overflowCases {
		msgs = append(msgs, c.match, c.noMatch)
	}
	for _, c := range retryAfterCases {
		msgs = append(msgs, c.msg)
	}
	for _, c := range waitHintCases {
		msgs = append(msgs, c.msg)
	}
	return append(msgs,
		"insufficient_quota", "429 quota exceeded", "You exceeded your current quota, please check your plan and billing details.",
		"Your credit balance is too low to access the Anthropic API", "401 Insufficient balance.", "out of budget",
		"prompt used 65000 tokens", "request id req_4295abc", "HTTP 500", "rate\U0001F600limit", "too many requeſts",
		"usage_limit_reached", "4290", "5000", "x500x", "overloaded_error",
	)
}

// httpVariants are the Status/Headers a reply in the corpus is tried with.
var httpVariants = []struct {
	status  int
	headers map[string]string
}{
	{0, nil},
	{0, map[string]string{"x-should-retry": "true"}},
	{400, nil},
	{400, map[string]string{"x-should-retry": "true"}},
	{429, nil},
	{503, nil},
	{503, map[string]string{"x-should-retry": "false"}},
}

// TestClassifierMessageModeIsClassify: in message mode with no patterns
// (the zero value, a nil *Classifier, or NewClassifier("message")), a
// Classifier gives Classify's result on every message of the corpus, with
// every stop reason, window and HTTP variant: Status and Headers are not
// read.
func TestClassifierMessageModeIsClassify(t *testing.T) {
	var nilC *Classifier
	classifiers := map[string]*Classifier{
		"zero":    {},
		"nil":     nilC,
		"message": mustClassifier(t, "message", nil, nil),
		"default": mustClassifier(t, "", nil, nil),
		"unknown": {Mode: "bogus"},
	}
	reasons := []StopReason{StopReasonStop, StopReasonLength, StopReasonToolUse, StopReasonError, StopReasonAborted, ""}
	usages := [][2]int64{{}, {150_000, 60_000}}
	n := 0
	for _, msg := range classificationCorpus() {
		for _, r := range reasons {
			for _, u := range usages {
				for _, w := range []int64{0, 200_000} {
					for _, v := range httpVariants {
						m := AssistantMessage{StopReason: r, ErrorMessage: msg, InputTokens: u[0], CacheReadTokens: u[1], Status: v.status, Headers: v.headers}
						want := (*Classifier)(nil).Classify(m, w)
						for name, c := range classifiers {
							if got := c.Classify(m, w); got != want {
								t.Errorf("%s: (*Classifier)(nil).Classify(%+v, %d) = %v, want %v", name, m, w, got, want)
							}
						}
						n++
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("corpus too small: %d cases", n)
	}
}

// TestClassifierStatusMode pins the status rule on openai-node's
// client-behavior vectors (§10): 408, 409, 429, 500 retry; 400 with
// x-should-retry: true retries; 500 with x-should-retry: false does not;
// 400 does not. Strict mode gives the same on these messages.
func TestClassifierStatusMode(t *testing.T) {
	cases := []struct {
		name string
		m    AssistantMessage
		want Class
	}{
		{"§10 408", httpReply("Request Timeout", 408, nil), ClassRetryable},
		{"§10 409", httpReply("Conflict", 409, nil), ClassRetryable},
		{"§10 429", httpReply("Too Many Requests", 429, nil), ClassRetryable},
		{"§10 500", httpReply("Internal Server Error", 500, nil), ClassRetryable},
		{"§10 400 x-should-retry true", httpReply("Bad Request", 400, map[string]string{"x-should-retry": "true"}), ClassRetryable},
		{"§10 500 x-should-retry false", httpReply("Internal Server Error", 500, map[string]string{"x-should-retry": "false"}), ClassFatal},
		{"§10 400", httpReply("Bad Request", 400, nil), ClassFatal},
		{"529", httpReply("overloaded_error", 529, nil), ClassRetryable},
		{"599", httpReply("", 599, nil), ClassRetryable},
		{"499 is not retried", httpReply("client closed request", 499, nil), ClassFatal},
		{"401", httpReply("invalid x-api-key", 401, nil), ClassFatal},
		// The status decides, against the message.
		{"400 with a retryable message", httpReply("503 upstream overloaded", 400, nil), ClassFatal},
		{"503 with an empty message", httpReply("", 503, nil), ClassRetryable},
		{"503 with a fatal message", httpReply("invalid x-api-key", 503, nil), ClassRetryable},
		// x-should-retry: only exactly true or false, spaces trimmed.
		{"x-should-retry spaced", httpReply("Bad Request", 400, map[string]string{"x-should-retry": " true\t"}), ClassRetryable},
		{"x-should-retry TRUE ignored", httpReply("Bad Request", 400, map[string]string{"x-should-retry": "TRUE"}), ClassFatal},
		{"x-should-retry yes ignored", httpReply("Internal Server Error", 500, map[string]string{"x-should-retry": "yes"}), ClassRetryable},
		{"x-should-retry empty ignored", httpReply("Bad Request", 400, map[string]string{"x-should-retry": ""}), ClassFatal},
		{"X-Should-Retry not looked up", httpReply("Bad Request", 400, map[string]string{"X-Should-Retry": "true"}), ClassFatal},
		// Without a status: the message regex as today, x-should-retry
		// ignored, empty message fatal.
		{"no status, retryable text", httpReply("503 Service Unavailable", 0, nil), ClassRetryable},
		{"no status, x-should-retry ignored", httpReply("Bad Request", 0, map[string]string{"x-should-retry": "true"}), ClassFatal},
		{"no status, empty message", httpReply("", 0, nil), ClassFatal},
		// Overflow first, whatever the status.
		{"overflow with 500", httpReply("prompt is too long: 213462 tokens > 200000 maximum", 500, nil), ClassOverflow},
		{"overflow by usage with 503", AssistantMessage{StopReason: StopReasonError, Status: 503, InputTokens: 300_000}, ClassOverflow},
		// Other stop reasons are not errors.
		{"stop with 500", AssistantMessage{StopReason: StopReasonStop, Status: 500}, ClassSuccess},
		{"aborted with 429", AssistantMessage{StopReason: StopReasonAborted, Status: 429}, ClassAborted},
	}
	for _, mode := range []string{"status", "strict"} {
		c := mustClassifier(t, mode, nil, nil)
		for _, tc := range cases {
			if got := c.Classify(tc.m, 200_000); got != tc.want {
				t.Errorf("%s: %s: (*Classifier)(nil).Classify(%+v) = %v, want %v", mode, tc.name, tc.m, got, tc.want)
			}
		}
	}
	// Status mode without a status keeps the original's false positive.
	if got := mustClassifier(t, "status", nil, nil).Classify(errorReply("prompt used 65000 tokens"), 0); got != ClassRetryable {
		t.Errorf("status mode, no status, 65000: %v, want retryable as in message mode", got)
	}
}

// TestClassifierStrictMode pins strict mode: the quota phrases (codex's
// insufficient_quota §5.1, pi's classifier §4.2/§4.3) are never retryable,
// whatever the status; without a status the numbers match as whole numbers.
func TestClassifierStrictMode(t *testing.T) {
	const codexQuota = `{"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"You exceeded your current quota, please check your plan and billing details."}}`
	cases := []struct {
		name                   string
		m                      AssistantMessage
		strict, status, messag Class
	}{
		{"§5.1 codex insufficient_quota 429", httpReply("429 "+codexQuota, 429, nil), ClassFatal, ClassRetryable, ClassRetryable},
		{"§4.3 429 quota exceeded", httpReply("429 quota exceeded", 0, nil), ClassFatal, ClassRetryable, ClassRetryable},
		{"§4.3 insufficient_quota", errorReply("insufficient_quota"), ClassFatal, ClassFatal, ClassFatal},
		{"§3.3 401 Insufficient balance", httpReply("401 Insufficient balance. Please top up.", 401, nil), ClassFatal, ClassFatal, ClassFatal},
		{"Google quota exceeded 429", httpReply("Google API error (429): Quota exceeded for quota metric. Please retry in 0.05s.", 429, nil), ClassFatal, ClassRetryable, ClassRetryable},
		// pi's classifyProviderRetry lets the status beat the text here
		// (§4.3, uncertain); strict mode's quota rule wins instead.
		{"§4.3 500 quota exceeded", httpReply("quota exceeded", 500, nil), ClassFatal, ClassRetryable, ClassFatal},
		{"quota beats x-should-retry", httpReply("billing hard limit reached", 400, map[string]string{"x-should-retry": "true"}), ClassFatal, ClassRetryable, ClassFatal},
		{"credit balance", httpReply("Your credit balance is too low to access the Anthropic API.", 400, nil), ClassFatal, ClassFatal, ClassFatal},
		{"exceeded your current quota", errorReply("429 You exceeded your current quota"), ClassFatal, ClassRetryable, ClassRetryable},
		{"out of budget", errorReply("503 OUT OF BUDGET"), ClassFatal, ClassRetryable, ClassRetryable},
		{"BILLING upper case", httpReply("BILLING", 503, nil), ClassFatal, ClassRetryable, ClassFatal},
		// Whole numbers, without a status.
		{"65000 is not 500", errorReply("prompt used 65000 tokens"), ClassFatal, ClassRetryable, ClassRetryable},
		{"request id", errorReply("request id req_4295abc"), ClassFatal, ClassRetryable, ClassRetryable},
		{"4290", errorReply("4290"), ClassFatal, ClassRetryable, ClassRetryable},
		{"429 alone", errorReply("429"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"HTTP 500:", errorReply("HTTP 500: oops"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"500ms", errorReply("took 500ms"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"1.503", errorReply("version 1.503"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"(504)", errorReply("Gateway Timeout (504)"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"502 at end", errorReply("status=502"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"words still match", errorReply("Overloaded"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"rate limit", errorReply("Rate limit reached"), ClassRetryable, ClassRetryable, ClassRetryable},
		{"JS .? rules kept", errorReply("rate\U0001F600limit"), ClassFatal, ClassFatal, ClassFatal},
		{"long s kept", errorReply("too many requeſts"), ClassFatal, ClassFatal, ClassFatal},
		// With a status, the status decides (numbers in the text do not).
		{"65000 with 400", httpReply("prompt used 65000 tokens", 400, nil), ClassFatal, ClassFatal, ClassRetryable},
		{"65000 with 503", httpReply("prompt used 65000 tokens", 503, nil), ClassRetryable, ClassRetryable, ClassRetryable},
	}
	strict := mustClassifier(t, "strict", nil, nil)
	status := mustClassifier(t, "status", nil, nil)
	for _, tc := range cases {
		for _, x := range []struct {
			name string
			c    *Classifier
			want Class
		}{{"strict", strict, tc.strict}, {"status", status, tc.status}, {"message", nil, tc.messag}} {
			if got := x.c.Classify(tc.m, 0); got != x.want {
				t.Errorf("%s: %s mode: (*Classifier)(nil).Classify(%q, status %d) = %v, want %v", tc.name, x.name, tc.m.ErrorMessage, tc.m.Status, got, x.want)
			}
		}
	}
}

// TestClassifierPatterns: overflow first, then nonRetryablePatterns, then
// retryablePatterns, then the mode; patterns are case-insensitive and
// non-retryable wins.
func TestClassifierPatterns(t *testing.T) {
	cases := []struct {
		name      string
		mode      string
		retry, no []string
		m         AssistantMessage
		want      Class
	}{
		// §4.3 pi retry.test.ts: "429 quota exceeded" is not retryable,
		// but is with the override quota.?exceeded.
		{"§4.3 quota override", "strict", []string{"quota.?exceeded"}, nil, errorReply("429 quota exceeded"), ClassRetryable},
		{"§4.3 quota no override", "strict", nil, nil, errorReply("429 quota exceeded"), ClassFatal},
		{"retryable pattern beats status", "status", []string{"try later"}, nil, httpReply("Please TRY LATER", 400, nil), ClassRetryable},
		{"retryable pattern in message mode", "message", []string{`^ECONNRESET$`}, nil, errorReply("econnreset"), ClassRetryable},
		{"non-retryable pattern beats message", "message", nil, []string{"moderation"}, errorReply("500 Moderation failed"), ClassFatal},
		{"non-retryable beats status", "status", nil, []string{"moderation"}, httpReply("Moderation failed", 500, nil), ClassFatal},
		{"non-retryable beats x-should-retry", "status", nil, []string{"moderation"}, httpReply("moderation", 400, map[string]string{"x-should-retry": "true"}), ClassFatal},
		{"non-retryable beats retryable", "message", []string{"overloaded"}, []string{"overloaded forever"}, errorReply("overloaded forever"), ClassFatal},
		{"retryable when non-retryable misses", "message", []string{"overloaded"}, []string{"overloaded forever"}, errorReply("overloaded once"), ClassRetryable},
		{"overflow beats retryable pattern", "message", []string{"too long"}, nil, errorReply("prompt is too long: 213462 tokens > 200000 maximum"), ClassOverflow},
		{"overflow beats non-retryable pattern", "message", nil, []string{"too long"}, errorReply("prompt is too long: 213462 tokens > 200000 maximum"), ClassOverflow},
		{"patterns see an empty message", "status", nil, []string{"^$"}, httpReply("", 503, nil), ClassFatal},
		{"pattern on empty message retries", "message", []string{"^$"}, nil, errorReply(""), ClassRetryable},
		{"no match falls to mode", "strict", []string{"nothing"}, []string{"nada"}, errorReply("prompt used 65000 tokens"), ClassFatal},
		{"patterns ignore success", "message", []string{"."}, nil, AssistantMessage{StopReason: StopReasonStop, ErrorMessage: "x"}, ClassSuccess},
		{"patterns ignore aborted", "message", nil, []string{"."}, AssistantMessage{StopReason: StopReasonAborted, ErrorMessage: "x"}, ClassAborted},
		{"Go syntax", "message", []string{`\bE[A-Z]+\b`}, nil, errorReply("socket: eaddrinuse"), ClassRetryable},
	}
	for _, tc := range cases {
		c := mustClassifier(t, tc.mode, tc.retry, tc.no)
		if got := c.Classify(tc.m, 200_000); got != tc.want {
			t.Errorf("%s: (*Classifier)(nil).Classify(%q) = %v, want %v", tc.name, tc.m.ErrorMessage, got, tc.want)
		}
	}
}

func TestParseClassifyMode(t *testing.T) {
	for in, want := range map[string]string{"": ClassifyMessage, "message": ClassifyMessage, "status": ClassifyStatus, "strict": ClassifyStrict} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"Message", "STRICT", "regex", " status"} {
		_, err := ParseMode(in)
		want := `classify "` + in + `": allowed values are "message" (the default), "status" and "strict"`
		if err == nil || err.Error() != want {
			t.Errorf("ParseMode(%q) error = %v, want %q", in, err, want)
		}
	}
}

func TestCompilePatterns(t *testing.T) {
	res, err := CompilePatterns([]string{"rate.?limit", "Quota"})
	if err != nil || len(res) != 2 {
		t.Fatalf("CompilePatterns = %v, %v", res, err)
	}
	if !res[0].MatchString("RATE LIMIT") || !res[1].MatchString("quota!") || res[1].MatchString("quo ta") {
		t.Errorf("patterns do not match case-insensitively: %v", res)
	}
	if res, err := CompilePatterns(nil); res != nil || err != nil {
		t.Errorf("CompilePatterns(nil) = %v, %v", res, err)
	}
	bad := []struct {
		in   []string
		want string
	}{
		{[]string{"ok", "(oops"}, "[1] \"(oops\": error parsing regexp: missing closing ): `(oops`"},
		{[]string{""}, `[0] "": an empty pattern matches every message`},
		{[]string{"a", "b", "x**"}, "[2] \"x**\": error parsing regexp: invalid nested repetition operator: `**`"},
		{[]string{`(?<name>x)`}, ""}, // valid in Go 1.22+: named group
		{[]string{`a)(b`}, "[0] \"a)(b\": error parsing regexp: unexpected ): `a)(b`"},
		{[]string{`\p{Greek`}, "[0] \"\\\\p{Greek\": error parsing regexp: invalid character class range: `\\p{Greek`"},
	}
	for _, tc := range bad {
		_, err := CompilePatterns(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CompilePatterns(%q) = %v, want no error", tc.in, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("CompilePatterns(%q) error = %v, want %s", tc.in, err, tc.want)
		}
	}
	// NewClassifier names the setting.
	if _, err := NewClassifier("strict", []string{"ok"}, []string{"ok", "("}); err == nil || !strings.HasPrefix(err.Error(), `nonRetryablePatterns[1] "(": `) {
		t.Errorf("NewClassifier error = %v, want it to name nonRetryablePatterns[1]", err)
	}
	if _, err := NewClassifier("strict", []string{""}, nil); err == nil || err.Error() != `retryablePatterns[0] "": an empty pattern matches every message` {
		t.Errorf("NewClassifier error = %v, want it to name retryablePatterns[0]", err)
	}
	if _, err := NewClassifier("loose", nil, nil); err == nil || !strings.HasPrefix(err.Error(), `classify "loose": `) {
		t.Errorf("NewClassifier error = %v, want it to name classify", err)
	}
}

// TestRetryableSplit: the strict regex's two parts are the original
// retryable regex's alternatives, words and numbers, nothing more or less.
func TestRetryableSplit(t *testing.T) {
	whole := strings.Split(RetryableSource, "|")
	parts := append(strings.Split(retryableWordsSource, "|"), "429", "500", "502", "503", "504")
	slices.Sort(whole)
	slices.Sort(parts)
	if !slices.Equal(whole, parts) {
		t.Errorf("retryable alternatives %v, strict parts %v", whole, parts)
	}
}

// naiveWholeNumbers reports whether s contains one of the five numbers
// with no ASCII digit on either side, by scanning.
func naiveWholeNumbers(s string) bool {
	isDigit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for _, n := range []string{"429", "500", "502", "503", "504"} {
		for i := 0; i+len(n) <= len(s); i++ {
			if s[i:i+len(n)] == n && !isDigit(i-1) && !isDigit(i+len(n)) {
				return true
			}
		}
	}
	return false
}

// TestIsRetryableWholeNumbers compares the strict regex with a naive
// matcher on seeded random strings of digits and a few letters.
func TestIsRetryableWholeNumbers(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	const alphabet = "0123459 x\n"
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.Intn(9))
		for j := range b {
			b[j] = alphabet[rng.Intn(len(alphabet))]
		}
		s := string(b)
		if got, want := isRetryableWholeNumbers(s), naiveWholeNumbers(s); got != want {
			t.Fatalf("isRetryableWholeNumbers(%q) = %v, naive says %v", s, got, want)
		}
	}
}

// FuzzClassifierModes checks that the modes never panic and relate as
// specified: message mode (the zero Classifier) is Classify; with a
// status, status mode is isRetryableStatus unless overflow; strict
// retryable implies status retryable; without a status, strict is the
// whole-number regex unless a quota phrase.
func FuzzClassifierModes(f *testing.F) {
	for i, msg := range classificationCorpus() {
		f.Add(uint8(3), msg, int64(0), 0, "")
		f.Add(uint8(i), msg, int64(250_000), 503, "false")
		f.Add(uint8(3), msg, int64(0), 400, "true")
	}
	reasons := []StopReason{StopReasonStop, StopReasonLength, StopReasonToolUse, StopReasonError, StopReasonAborted, ""}
	statusC := &Classifier{Mode: ClassifyStatus}
	strictC := &Classifier{Mode: ClassifyStrict}
	f.Fuzz(func(t *testing.T, reason uint8, msg string, input int64, status int, shouldRetry string) {
		if len(msg) > maxFuzzInput {
			t.Skip()
		}
		m := AssistantMessage{StopReason: reasons[int(reason)%len(reasons)], ErrorMessage: msg,
			InputTokens: input, Status: status, Headers: map[string]string{"x-should-retry": shouldRetry}}
		const window = 200_000
		base := (*Classifier)(nil).Classify(m, window)
		if got := (&Classifier{}).Classify(m, window); got != base {
			t.Errorf("message mode %v, Classify %v", got, base)
		}
		st, sc := statusC.Classify(m, window), strictC.Classify(m, window)
		if m.StopReason != StopReasonError || base == ClassOverflow {
			if st != base || sc != base {
				t.Errorf("non-error or overflow: status %v, strict %v, Classify %v", st, sc, base)
			}
			return
		}
		if sc == ClassRetryable && st != ClassRetryable {
			t.Errorf("strict retryable but status mode %v", st)
		}
		if status != 0 {
			if want := isRetryableStatus(status, m.Headers); (st == ClassRetryable) != want {
				t.Errorf("status %d, x-should-retry %q: %v, isRetryableStatus %v", status, shouldRetry, st, want)
			}
		} else {
			if st != base {
				t.Errorf("no status: status mode %v, Classify %v", st, base)
			}
			want := msg != "" && !isQuotaErrorMessage(msg) && (naiveWholeNumbers(msg) || naiveRetryableWords(msg))
			if (sc == ClassRetryable) != want {
				t.Errorf("no status: strict %v, naive %v", sc, want)
			}
		}
	})
}

// naiveRetryableWords is naiveRetryable without the number alternatives.
func naiveRetryableWords(s string) bool {
	return naiveRetryable(asciiDigitRe.ReplaceAllString(s, "#"))
}

// asciiDigitRe matches one ASCII digit.
var asciiDigitRe = regexp.MustCompile(`[0-9]`)

// BenchmarkClassifierModes measures each mode on the corpus.
func BenchmarkClassifierModes(b *testing.B) {
	msgs := classificationCorpus()
	for _, mode := range []string{ClassifyMessage, ClassifyStatus, ClassifyStrict} {
		c := &Classifier{Mode: mode}
		b.Run(string(mode), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.Classify(errorReply(msgs[i%len(msgs)]), 200_000)
			}
		})
	}
}
