package proxy

import (
	"net/http"
	"testing"
)

// TestCanonicalKey: canonicalKey is http.CanonicalHeaderKey, for the
// answers' usual names and any other.
func TestCanonicalKey(t *testing.T) {
	for _, k := range []string{"content-type", "content-length", "cache-control", "request-id", "x-request-id", "retry-after",
		"retry-after-ms", "x-ratelimit-reset", "x-ratelimit-reset-ms", "x-should-retry", "anthropic-ratelimit-requests-reset", "X-Odd_Name", "bad name"} {
		if got, want := canonicalKey(k), http.CanonicalHeaderKey(k); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", k, got, want)
		}
	}
}
