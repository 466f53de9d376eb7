package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDateCacheOncePerSecond: the Date header's value is formatted once
// a second, in UTC as net/http writes it, and shared (no allocation)
// within the second; its slice is at its capacity, so that an Add copies
// it rather than writing into the shared array.
func TestDateCacheOncePerSecond(t *testing.T) {
	var c dateCache
	t0 := time.Date(2026, 12, 5, 17, 0, 0, 0, time.FixedZone("CET", 3600))
	first := c.at(t0)
	if want := []string{"Sat, 05 Dec 2026 16:00:00 GMT"}; fmt.Sprint(first) != fmt.Sprint(want) || cap(first) != 1 {
		t.Errorf("at %v: %q (cap %d), want %q at its capacity", t0, first, cap(first), want)
	}
	if allocs := testing.AllocsPerRun(100, func() { c.at(t0.Add(999 * time.Millisecond)) }); allocs != 0 {
		t.Errorf("%v allocations within the second, want 0", allocs)
	}
	if same := c.at(t0.Add(999 * time.Millisecond)); &same[0] != &first[0] {
		t.Error("a new value within the same second")
	}
	if next := c.at(t0.Add(time.Second)); next[0] != "Sat, 05 Dec 2026 16:00:01 GMT" {
		t.Errorf("the next second: %q", next)
	}
}

// TestBodyBufferKept: a request's body is read into the buffer its
// recycled handling kept when it is large enough (else into a new one),
// a handling keeps its buffers (the body read, the answer's body)
// emptied unless over maxKeptBody, and request after request each
// answer is its own and each line logs its own body, whatever the sizes
// of the bodies before it.
func TestBodyBufferKept(t *testing.T) {
	p, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := func(body string, buf []byte) []byte {
		r := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(body))
		b, _, err := p.readBody(httptest.NewRecorder(), r, &bodyRead{}, time.Now(), buf)
		if err != nil || string(b) != body {
			t.Fatalf("read %q, %v; want %q", b, err, body)
		}
		return b
	}
	buf := make([]byte, 7, 64)
	if b := read(`{"model":"m"}`, buf); &b[:1][0] != &buf[:1][0] {
		t.Error("a body that fits was not read into the kept buffer")
	}
	if b := read(strings.Repeat("x", 100), buf); &b[:1][0] == &buf[:1][0] {
		t.Error("a body larger than the kept buffer was read into it")
	}

	for _, c := range []struct {
		capacity int
		kept     bool
	}{{64, true}, {maxKeptBody, true}, {maxKeptBody + 1, false}} {
		h := &handling{client: map[string]string{}}
		h.st.buf, h.st.out = make([]byte, 5, c.capacity), make([]byte, 7, c.capacity)
		h.recycle()
		for _, b := range [][]byte{h.st.buf, h.st.out} {
			if kept := b != nil; kept != c.kept || kept && (len(b) != 0 || cap(b) != c.capacity) {
				t.Errorf("a buffer of %d bytes: kept %v (len %d, cap %d), want kept %v, emptied", c.capacity, kept, len(b), cap(b), c.kept)
			}
		}
	}

	var log bytes.Buffer
	p, err = New(Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	models := []string{strings.Repeat("a", 200), "b", strings.Repeat("c", 250), "d"}
	for _, m := range models {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{"model":"`+m+`","max_tokens":1,"messages":[]}`)))
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"model":"`+m+`"`) {
			t.Fatalf("model %.10s...: %d %s", m, w.Code, w.Body)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&log)
	for i, m := range models {
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		if want := len(`{"model":"","max_tokens":1,"messages":[]}`) + len(m); rec.Model != m || rec.BytesIn != want {
			t.Errorf("line %d: model %.10s... (%d bytes in), want %.10s... (%d)", i+1, rec.Model, rec.BytesIn, m, want)
		}
	}
}
