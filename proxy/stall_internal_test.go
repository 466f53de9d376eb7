package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// endsStalled is a body whose one read, once it has waited the timeout,
// is found stalled by the watch, and then returns the whole body and
// io.EOF: a body ending just as it is found stalled.
type endsStalled struct {
	p    *Proxy
	body *strings.Reader
}

func (b endsStalled) Read(buf []byte) (int, error) {
	b.p.stalls.checkAt(time.Since(b.p.stalls.epoch) + time.Hour) // an hour after the read began
	return b.body.Read(buf)
}

// TestBodyEndsAsStalled: a body that ends as the stall watch finds it
// stalled is answered as stalled (its connection's deadline, set in the
// past, would fail net/http's next read), and the watch is left with no
// read.
func TestBodyEndsAsStalled(t *testing.T) {
	p, err := New(Options{BodyTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const body = `{"model":"m"}`
	r := httptest.NewRequest("POST", "/v1/messages", endsStalled{p, strings.NewReader(body)})
	r.ContentLength = -1 // read to its end
	w := httptest.NewRecorder()
	b, status, err := p.readBody(w, r, &bodyRead{}, time.Now(), nil)
	if status != http.StatusRequestTimeout || err == nil || !strings.Contains(err.Error(), "request body stalled: nothing for 1s after 13 bytes") || string(b) != body {
		t.Errorf("status %d, error %v, body %q; want 408, stalled after 13 bytes", status, err, b)
	}
	if w.Header().Get("connection") != "close" {
		t.Errorf("headers %v, want connection: close", w.Header())
	}
	p.stalls.mu.Lock()
	defer p.stalls.mu.Unlock()
	if len(p.stalls.reads) != 0 {
		t.Errorf("%d reads left in the watch", len(p.stalls.reads))
	}
}
