package wire

import (
	"strings"
	"testing"
)

// TestEncoderBounded: an Encoder keeps the request's part of a usual line
// (the next like it is copied) but not of one over maxRemembered bytes (a
// path of 10 KiB), which it neither copies nor holds on to.
func TestEncoderBounded(t *testing.T) {
	var e Encoder
	usual := &Record{Type: "request", Method: "POST", Path: "/v1/messages", Model: "m", Client: map[string]string{"user-agent": "u"}}
	if _, err := e.Append(nil, usual); err != nil || !e.ok || !e.key.is(usual) {
		t.Fatalf("a usual record not kept (%v)", err)
	}
	long := &Record{Type: "request", Method: "POST", Path: "/" + strings.Repeat("p", 10<<10)}
	if _, err := e.Append(nil, long); err != nil || e.ok || cap(e.request) != 0 || e.key.path != "" {
		t.Errorf("a request part of %d bytes held (%v)", cap(e.request), err)
	}
}
