package classify

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOverflowNeedles: each prefilter needle is a literal part of its
// pattern's source, so a message without it cannot match the pattern.
func TestOverflowNeedles(t *testing.T) {
	srcs := OverflowPatterns()
	if len(srcs) != len(overflowNeedles) {
		t.Fatalf("%d patterns, %d needles", len(srcs), len(overflowNeedles))
	}
	for i, src := range srcs {
		n := overflowNeedles[i]
		lit := strings.NewReplacer(`\(`, "(", `\)`, ")", `\d+`, "", `[_ ]`, " ", "(window|length|size)", "window").Replace(src)
		if n == "too l" {
			lit = "too long"
		}
		if n == "length" || n == "context " || n == "requested token" {
			continue // checked by hand below
		}
		if !strings.Contains(lit, n) {
			t.Errorf("pattern %d %q: needle %q is not a literal of it", i+1, src, n)
		}
	}
	for i, n := range overflowNeedles {
		if !containsAny(n, overflowWords[:]) {
			t.Errorf("pattern %d: needle %q contains none of the overflow words %q", i+1, n, overflowWords)
		}
	}
	for _, m := range []string{"context_length_exceeded", "context length exceeded", "requested tokens exceed context window", "context size exceeded", "requested token count greater than n_ctx"} {
		if !isContextOverflow(AssistantMessage{StopReason: StopReasonError, ErrorMessage: m}, 0) {
			t.Errorf("%q should be an overflow", m)
		}
	}
}

// TestRetryablePrefilter: the prefiltered predicates agree with their bare
// regexes on realistic and tricky messages.
func TestRetryablePrefilter(t *testing.T) {
	msgs := []string{"", "529 overloaded_error", "Rate-Limit hit", "rate😀limit", "ratelimit", "usage\nlimit",
		"Service_Unavailable", "connection-error", "CONNECTION ERROR", "invalid api key", "65000 tokens",
		"limit_reached", "usage_limit_reached", "error", "server error", "fetch failed", "retry delay",
		"Too Many Requests", "unavailable service", "rate\rlimit", "usageſlimit", "connectionKerror",
		"USAGE LIMIT", "usage-limit", "usage\u2028limit", "usage\U0001F600limit", "usagelimit reached", "usage limit_reached",
		"limit reached", "usage", "the limit", "serviceunavailable", "service\nunavailable", "connection\u00a0error",
		"rate limited by usage", "usage: limit", "usage usage limit", "raterate-limit", "error: connection lost",
		`429 {"type":"error","error":{"type":"rate_limit_error","message":"You have reached your usage limit."}} Please try again in 3599s.`,
		`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		"503 Service Unavailable", "Connection error."}
	for _, m := range msgs {
		f := foldASCII(m)
		if got, want := isRetryableErrorMessage(m), retryableRe.MatchString(f); got != want {
			t.Errorf("retryable %q: prefiltered %v, regex %v", m, got, want)
		}
		if got, want := isUsageLimitErrorMessage(m), usageLimitRe.MatchString(f); got != want {
			t.Errorf("usage limit %q: prefiltered %v, regex %v", m, got, want)
		}
	}
}

// TestRetryableAlternatives: the plain literals and the `.?` alternatives
// matched alone are the retryable regex's alternatives, nothing more or
// less; each `.?` alternative's literal prefix, the prefilter that a
// message must contain, is its first word; and the usage-limit regex's
// alternatives are its `.?` one and two that contain limit_reached.
func TestRetryableAlternatives(t *testing.T) {
	whole := strings.Split(RetryableSource, "|")
	parts := append(slices.Clone(retryableLiterals), retryableDotSources[:]...)
	slices.Sort(whole)
	slices.Sort(parts)
	if !slices.Equal(whole, parts) {
		t.Errorf("retryable alternatives %v, literals and `.?` words %v", whole, parts)
	}
	if len(retryableDotRes) != len(retryableDotSources) {
		t.Fatalf("%d regexes, %d sources", len(retryableDotRes), len(retryableDotSources))
	}
	for i, src := range retryableDotSources {
		word, _, ok := strings.Cut(src, ".?")
		if prefix, complete := retryableDotRes[i].LiteralPrefix(); !ok || prefix != word || complete {
			t.Errorf("%q: literal prefix %q (complete %v), want %q", src, prefix, complete, word)
		}
	}
	if usageDotLimitRe.String() != compileJS("usage.?limit").String() {
		t.Errorf("usageDotLimitRe is %q", usageDotLimitRe)
	}
	if got := strings.Split(usageLimitSource, "|"); !slices.Equal(got, []string{"usage.?limit", "usage_limit_reached", "limit_reached"}) {
		t.Errorf("usage-limit alternatives %v", got)
	}
}

// TestHintPrefixes: the hint regexes have the literal prefixes that
// findPrefixed looks for before running them (a regex without one would
// always run, which is correct but not cheaper).
func TestHintPrefixes(t *testing.T) {
	for _, c := range []struct {
		name, prefix string
		re           interface{ LiteralPrefix() (string, bool) }
	}{
		{"retry-after-ms", "retry-after-ms", retryAfterMsRe}, {"retry-after", "retry-after", retryAfterRe},
		{"x-ratelimit-reset-ms", "x-ratelimit-reset-ms", resetMsRe}, {"x-ratelimit-reset", "x-ratelimit-reset", resetRe},
		{"please retry in", "please retry in ", pleaseRetryRe}, {"try again in", "try again in ", tryAgainRe},
		{"retryDelay", `"retrydelay"`, retryDelayRe},
	} {
		if p, complete := c.re.LiteralPrefix(); p != c.prefix || complete {
			t.Errorf("%s: literal prefix %q (complete %v), want %q", c.name, p, complete, c.prefix)
		}
	}
	for _, m := range []string{"retry-after: 5", "RETRY-AFTER-MS=7", "x-ratelimit-reset: 3", "Please retry in 2s", "try again in 1 min", `"retryDelay": "4s"`} {
		if ms, ok := waitHint(AssistantMessage{ErrorMessage: m}, time.Time{}); !ok || ms <= 0 {
			t.Errorf("%q: hint %v %v, want one", m, ms, ok)
		}
	}
}
