package classify

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
)

// needlePatterns are patterns of the shapes the profiles' lists have
// (policy/retry/profile.go) and some made to trip a prefilter up.
var needlePatterns = []string{
	"overloaded", "rate.?limit", "too many requests", "429", "service.?unavailable", "timed? out",
	"ENOTFOUND", "ERR_SSL_.*BAD_RECORD_MAC", "(^|[^0-9])429([^0-9]|$)", "usage.?limit", ".",
	"per ?day", "limit: 0([^0-9]|$)", `^\s*\{[\s\S]*\}\s*$`, "Connection reset by server",
	`\b(APIConnectionError|APIError|RateLimitError|Timeout)\b`, "GoUsageLimitError|FreeUsageLimitError",
	"ſ", "K", "(?-i)ABC", "a|b*", "x{2,}", "(ab)+c", "(?:ab)?", "", "caf\u00e9", "[a-c]at", "rate|", "a{0,3}bc",
}

// needleMessages are texts the patterns are tried on: the fuzz seeds, the
// fleet's replies, and texts with the cases and characters that fold.
var needleMessages = append(slices.Clone(fuzzMessages),
	`429 {"type":"error","error":{"type":"rate_limit_error","message":"You have reached your usage limit."}} Please try again in 3599s.`,
	`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	"S", "s", "\u017f", "k", "\u212a", "abc", "ABC", "aBc", "xx", "ababc", "bc", "CAFÉ", "café", "bat", "RATE", "timed out", "TIME OUT",
	"apierror: x", "xAPIErrorx", "GoUsageLimitError", "limit: 0", "limit: 01", "{}", " { } ", "per day", "perday", "429", "a429b", "")

// TestPatternNeedles: the needles of some patterns, and that matchesAny
// with its prefilter agrees with the patterns' regexes on every text.
func TestPatternNeedles(t *testing.T) {
	for _, c := range []struct {
		src  string
		want []string
	}{
		{"overloaded", []string{"overloaded"}},
		{"rate.?limit", []string{"limit"}},
		{"(^|[^0-9])429([^0-9]|$)", []string{"429"}},
		{`\b(APIError|Timeout)\b`, []string{"apierror", "timeout"}},
		{"(?-i)ABC", []string{"abc"}},
		{"(ab)+c", []string{"ab"}},
		{".", nil}, {"a|b*", nil}, {"(?:ab)?", nil}, {"caf\u00e9", nil},
	} {
		res, err := CompilePatterns([]string{c.src})
		if err != nil {
			t.Fatal(err)
		}
		if got := patternNeedles(res[0]); !slices.Equal(got, c.want) {
			t.Errorf("%q: needles %q, want %q", c.src, got, c.want)
		}
	}
	for _, p := range needlePatterns {
		checkPrefilter(t, p, needleMessages)
	}
}

// checkPrefilter compares matchesAny of pattern p (compiled as
// CompilePatterns compiles it) with its regex on each message.
func checkPrefilter(t *testing.T, p string, msgs []string) {
	t.Helper()
	res, err := CompilePatterns([]string{p})
	if err != nil || len(res) != 1 {
		return
	}
	for _, m := range msgs {
		if got, want := matchesAny(res, m, foldASCII(m), isASCII(m)), res[0].MatchString(m); got != want {
			t.Errorf("pattern %q on %q: prefiltered %v, regex %v (needles %q)", p, m, got, want, patternNeedles(res[0]))
		}
	}
}

// FuzzPatternNeedles: for any pattern and text, matchesAny with its
// prefilter agrees with the pattern's regex.
func FuzzPatternNeedles(f *testing.F) {
	for i, p := range needlePatterns {
		f.Add(p, needleMessages[i%len(needleMessages)])
	}
	f.Fuzz(func(t *testing.T, p, m string) {
		if len(p) > 200 || len(m) > maxFuzzInput {
			t.Skip()
		}
		checkPrefilter(t, p, []string{m})
	})
}

// TestPatternNeedlesCacheBounded: the needles of at most maxCachedNeedles
// patterns are kept; a pattern past the bound still gets its needles.
func TestPatternNeedlesCacheBounded(t *testing.T) {
	count := func() int64 {
		var n int64
		needlesBySource.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	defer func(m int64) { maxCachedNeedles = m }(maxCachedNeedles)
	maxCachedNeedles = before + 5
	for i := range 50 {
		re := regexp.MustCompile(fmt.Sprintf("(?i)bounded needle %d", i))
		if got, want := patternNeedles(re), []string{fmt.Sprintf("bounded needle %d", i)}; !slices.Equal(got, want) {
			t.Fatalf("pattern %d: needles %q, want %q", i, got, want)
		}
	}
	if n := count(); n > before+5 || cachedNeedles.Load() != n {
		t.Errorf("%d patterns' needles kept (counted %d), want at most %d", n, cachedNeedles.Load(), before+5)
	}
}
