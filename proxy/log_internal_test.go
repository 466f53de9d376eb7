package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestWireLogLineBytes: each line the log writes is json.Marshal's bytes
// and a newline, line after line encoded in the log's buffer, a line
// longer than the buffer between short ones included; a usual line
// costs no allocation.
func TestWireLogLineBytes(t *testing.T) {
	var out, want bytes.Buffer
	l := newWireLog(&out, nil)
	recs := []*Record{
		{Type: "request", Seq: 1, Timestamp: 1.5e12, Method: "POST", Path: "/v1/messages", API: Anthropic, Model: "m<&>",
			Client: map[string]string{"user-agent": "a\u2028b", "x-stainless-retry-count": "2"}, Status: 529,
			Headers: map[string]string{"retry-after": "3", "x-should-retry": "true"}, ErrorType: "overloaded_error", Faults: []string{"latency(10ms)"}},
		{Type: "request", Seq: 2, Error: strings.Repeat("x", 3*4096)}, // longer than the log's buffer
		{Type: "request", Seq: 3, AnswerMs: 0.25},
	}
	for _, r := range recs {
		l.write(r)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		want.Write(append(b, '\n'))
	}
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("log\n%s\nwant\n%s", out.String(), want.String())
	}
}

// TestWireLogLineAllocs: a usual line is encoded and written without
// allocating.
func TestWireLogLineAllocs(t *testing.T) {
	l := newWireLog(io.Discard, nil)
	r := &Record{Type: "request", Seq: 12, Timestamp: 1.7e12 + 0.123, Method: "POST", Path: "/v1/messages", API: Anthropic,
		Model: "claude-sonnet-4-5", Client: map[string]string{"user-agent": "Go-http-client/1.1"}, Status: 200, HeadersMs: 0.0123, AnswerMs: 0.0234, BytesIn: 90}
	if n := testing.AllocsPerRun(100, func() { l.write(r) }); n != 0 {
		t.Errorf("%v allocations a line", n)
	}
}

// TestContainsFold: containsFold is strings.EqualFold tried at every
// offset, for any header name (arbitrary bytes, the Kelvin sign and the
// long s, which fold to ASCII k and s).
func TestContainsFold(t *testing.T) {
	every := func(s, sub string) bool {
		for i := 0; i+len(sub) <= len(s); i++ {
			if strings.EqualFold(s[i:i+len(sub)], sub) {
				return true
			}
		}
		return false
	}
	rapid.Check(t, func(t *rapid.T) {
		parts := rapid.SliceOf(rapid.SampledFrom([]string{"Idem", "IDEMPOTENCY", "idempotency", "potency", "-", "x", "\u212a", "\u017f", "\xff", "İ"})).Draw(t, "parts")
		s := strings.Join(parts, "")
		for _, sub := range []string{"idempotency", "key", "s"} {
			if got, want := containsFold(s, sub), every(s, sub); got != want {
				t.Fatalf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
			}
		}
	})
	h := http.Header{"X-Idempotency-Key": {"a"}, "Idempotency-Key": {"b"}, "x-my-IDEMPOTENCY": {"c"}, "User-Agent": {"u"}, "Accept": {"*/*"}}
	want := map[string]string{"x-idempotency-key": "a", "idempotency-key": "b", "x-my-idempotency": "c", "user-agent": "u"}
	if got := clientHeaders(h, nil); !maps.Equal(got, want) {
		t.Errorf("clientHeaders = %v, want %v", got, want)
	}
}

// TestClientHeadersOnePass: clientHeaders' one pass keeps what looking up
// each of clientRetryHeaders, then every name with "idempotency", keeps
// (the later winning), for any headers: the kept names in their
// canonical form or another, empty values, idempotency names in any
// case, other headers (no two of one name in different cases: which of
// them the log keeps is the map's order); in a new map, or in one
// holding the last drawn request's (a pooled handling's); nil when none
// is kept.
func TestClientHeadersOnePass(t *testing.T) {
	twoPasses := func(h http.Header) map[string]string {
		var m map[string]string
		set := func(k, v string) {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = v
		}
		for _, k := range clientRetryHeaders {
			if vs := h[http.CanonicalHeaderKey(k)]; len(vs) > 0 && vs[0] != "" {
				set(k, vs[0])
			}
		}
		for k, vs := range h {
			if strings.Contains(strings.ToLower(k), "idempotency") && len(vs) > 0 {
				set(strings.ToLower(k), vs[0])
			}
		}
		return m
	}
	var names []string
	for _, k := range clientRetryHeaders {
		names = append(names, k, http.CanonicalHeaderKey(k))
	}
	names = append(names, "X-My-Idempotency", "IDEMPOTENCY", "Content-Type", "Accept", "User-agent")
	reused := map[string]string{} // a pooled handling's, emptied after each request
	rapid.Check(t, func(t *rapid.T) {
		h := http.Header{}
		for _, k := range rapid.SliceOfDistinct(rapid.SampledFrom(names), strings.ToLower).Draw(t, "names") {
			h[k] = rapid.SliceOfN(rapid.SampledFrom([]string{"", "2", "Go-http-client/1.1"}), 0, 2).Draw(t, k)
		}
		want := twoPasses(h)
		if got := clientHeaders(h, nil); !maps.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%v: clientHeaders = %v, want %v", h, got, want)
		}
		before := maps.Clone(reused)
		if got := clientHeaders(h, reused); !maps.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%v: clientHeaders in a map holding %v = %v, want %v", h, before, got, want)
		}
	})
}
