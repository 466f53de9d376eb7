// Package replytest holds what the adapters' tests share: an httptest
// handler answering an error as a provider does, one dropping the
// connection, and a reply's classification in the three modes.
package replytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// ErrorResponse answers with status, the request id header (the provider's
// name for it), headers and body (JSON).
func ErrorResponse(idHeader, id string, status int, headers map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set(idHeader, id)
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// DropConnection closes the connection without answering, once it has
// read the request (so that the client sees the close as an EOF, not a
// failed write).
func DropConnection(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.Close()
}

// Classes is how a reply is classified in the three modes, whether it is
// a context overflow, and its wait hint (-1: none).
type Classes struct {
	Message, Status, Strict classify.Class
	Overflow                bool
	HintMs                  float64
}

// Classify classifies m through policy as the Controller does, with the
// model's context window and the time now.
func Classify(t *testing.T, m policy.AssistantMessage, contextWindow int64, now time.Time) Classes {
	t.Helper()
	if err := m.ValidateHTTP(); err != nil {
		t.Fatalf("ValidateHTTP: %v", err)
	}
	var c Classes
	o := classify.ClassifyReply(m, contextWindow, now)
	c.Message, c.Overflow, c.HintMs = o.Class, o.Overflow, -1
	if o.HasWaitHint {
		c.HintMs = o.WaitHintMs
	}
	for _, mode := range []struct {
		name string
		out  *classify.Class
	}{{policy.ClassifyStatus, &c.Status}, {policy.ClassifyStrict, &c.Strict}} {
		cl, err := classify.NewClassifier(mode.name, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		*mode.out = cl.Reply(m, contextWindow, now).Class
	}
	return c
}

// Want is the Classes a test expects: the class in each mode, whether it
// is an overflow, and the wait hint in milliseconds (-1: none).
func Want(message, status, strict classify.Class, overflow bool, hintMs float64) Classes {
	return Classes{Message: message, Status: status, Strict: strict, Overflow: overflow, HintMs: hintMs}
}

// Server is an httptest server that answers every request with its
// handler and counts the requests.
type Server struct {
	*httptest.Server
	Requests atomic.Int32
}

// NewServer starts a Server; it is closed when the test ends.
func NewServer(t *testing.T, handler http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}
