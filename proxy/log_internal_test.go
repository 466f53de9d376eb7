package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestWireLogLineBytes: each line the log writes is json.Marshal's bytes
// and a newline, line after line through the pooled buffers, a long line
// between short ones included.
func TestWireLogLineBytes(t *testing.T) {
	var out, want bytes.Buffer
	l := newWireLog(&out, nil)
	recs := []*Record{
		{Type: "request", Seq: 1, Timestamp: 1.5e12, Method: "POST", Path: "/v1/messages", API: Anthropic, Model: "m<&>",
			Client: map[string]string{"user-agent": "a\u2028b", "x-stainless-retry-count": "2"}, Status: 529,
			Headers: map[string]string{"retry-after": "3", "x-should-retry": "true"}, ErrorType: "overloaded_error", Faults: []string{"latency(10ms)"}},
		{Type: "request", Seq: 2, Error: strings.Repeat("x", 2*maxPooledLine)},
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
