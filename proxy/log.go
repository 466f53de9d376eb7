package proxy

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Record is one line of the wire log (SPEC.md §18.3): a request, the
// retry headers its client sent and the answer given. Fields are only
// ever added, after these.
type Record struct {
	// Type is "request".
	Type string `json:"type"`
	// Seq numbers the requests from 1 in arrival order.
	Seq int `json:"seq"`
	// Timestamp is the request's arrival, epoch ms (fraction: µs).
	Timestamp float64 `json:"timestamp"`
	// Method and Path are the request's.
	Method string `json:"method"`
	Path   string `json:"path"`
	// API is the endpoint served ("" for another path).
	API API `json:"api,omitempty"`
	// Model and Stream are the request body's.
	Model  string `json:"model,omitempty"`
	Stream bool   `json:"stream"`
	// Client holds the retry headers the client sent, by lower-case name
	// (x-stainless-retry-count, x-stainless-timeout, idempotency-key, ...).
	Client map[string]string `json:"client,omitempty"`
	// Turn is the script's turn that answered (from 1; 0: none).
	Turn int `json:"turn"`
	// Upstream is true when the real endpoint answered.
	Upstream bool `json:"upstream,omitempty"`
	// Status is the answer's HTTP status (0: none, the connection dropped).
	Status int `json:"status"`
	// Headers are the script's headers on the answer (retry-after, ...).
	Headers map[string]string `json:"headers,omitempty"`
	// ErrorType and ErrorMessage are an error answer's.
	ErrorType    string `json:"errorType,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Faults are the wire faults applied, as Fault.String names them.
	Faults []string `json:"faults,omitempty"`
	// Events is the number of stream events sent.
	Events int `json:"events,omitempty"`
	// HeadersMs is the time from arrival to the answer's headers; AnswerMs
	// to the answer's end (a dropped connection: its close).
	HeadersMs float64 `json:"headersMs"`
	AnswerMs  float64 `json:"answerMs"`
	// BytesIn is the request body's size.
	BytesIn int `json:"bytesIn"`
	// Error is what went wrong on the proxy's side (a body over the
	// limit, the client gone, the upstream unreachable).
	Error string `json:"error,omitempty"`
	// Fleet is the fault model's answer (a fleet kind: "529", "429",
	// "network", ..., or "ok"), when the model answered.
	Fleet string `json:"fleet,omitempty"`
}

func (r *Record) addFault(f Fault) { r.Faults = append(r.Faults, f.String()) }

// Dropped reports whether the connection was closed before an answer.
func (r *Record) Dropped() bool {
	for _, f := range r.Faults {
		if f == string(FaultDrop) {
			return true
		}
	}
	return false
}

// End is the epoch ms at which the answer ended.
func (r *Record) End() float64 { return r.Timestamp + r.AnswerMs }

// clientRetryHeaders are the request headers the wire log keeps: the
// Stainless SDKs' retry count, timeout and identity, idempotency keys.
var clientRetryHeaders = []string{
	"x-stainless-retry-count", "x-stainless-timeout", "idempotency-key", "x-stainless-lang",
	"x-stainless-package-version", "x-stainless-runtime", "x-client-request-id", "user-agent",
}

func clientHeaders(h http.Header) map[string]string {
	var m map[string]string
	for _, k := range clientRetryHeaders {
		if v := h.Get(k); v != "" {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = v
		}
	}
	for k, vs := range h {
		if lk := strings.ToLower(k); strings.Contains(lk, "idempotency") && len(vs) > 0 {
			if m == nil {
				m = map[string]string{}
			}
			m[lk] = vs[0]
		}
	}
	return m
}

func epochMs(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }

// wireLog writes records as JSON lines, one at a time, each flushed: the
// log holds no more than one line in memory and is whole when the
// process is stopped.
type wireLog struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func newWireLog(w io.Writer) *wireLog {
	if w == nil {
		return &wireLog{}
	}
	return &wireLog{w: bufio.NewWriter(w)}
}

func (l *wireLog) write(r *Record) {
	if l.w == nil {
		return
	}
	b, err := json.Marshal(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || l.err != nil {
		return
	}
	b = append(b, '\n')
	if _, err := l.w.Write(b); err != nil {
		l.err = err
		return
	}
	l.err = l.w.Flush()
}

func (l *wireLog) close() error {
	if l.w == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	return l.w.Flush()
}
