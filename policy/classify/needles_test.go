package classify

import (
	"strings"
	"testing"
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
		"Too Many Requests", "unavailable service", "rate\rlimit", "usageſlimit", "connectionKerror"}
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
