package proxy

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ohmypi/retryfsm/wire"
)

// Record is one line of the wire log: wire.Record, where audit reads it
// without linking this package's HTTP server.
type Record = wire.Record

func addFault(r *Record, f Fault) { r.Faults = append(r.Faults, f.String()) }

// clientRetryHeaders are the request headers the wire log keeps: the
// Stainless SDKs' retry count, timeout and identity, idempotency keys.
var clientRetryHeaders = []string{
	"x-stainless-retry-count", "x-stainless-timeout", "idempotency-key", "x-stainless-lang",
	"x-stainless-package-version", "x-stainless-runtime", "x-client-request-id", "user-agent",
}

// clientRetryNames are clientRetryHeaders by their names in http.Header's
// form, so that one pass over a request's headers finds them, and
// clientRetryFirst their first bytes in that form: a name starting with
// another is not looked up (Content-Type, Accept-Encoding, ...).
var clientRetryNames, clientRetryFirst = func() (map[string]string, *[256]bool) {
	m := make(map[string]string, len(clientRetryHeaders))
	var first [256]bool
	for _, k := range clientRetryHeaders {
		c := http.CanonicalHeaderKey(k)
		m[c] = k
		first[c[0]] = true
	}
	return m, &first
}()

// clientHeaders are the headers of h the wire log keeps, by lower-case
// name: the first non-empty value of each of clientRetryHeaders, and the
// first value of any header whose name has "idempotency" in any case,
// set in m (nil: a new map); nil when there are none. m may hold an
// earlier request's (a pooled handling's, most often the same client's
// same headers): an entry found again with its value is left as it is,
// and m is emptied and read again only when it holds a name h has not.
// One pass over h: a request has a few headers, the list eight.
func clientHeaders(h http.Header, m map[string]string) map[string]string {
	fresh := len(m) == 0
	n := 0 // the names kept, each now in m with its value
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		var name string
		var kept bool
		if len(k) > 0 && clientRetryFirst[k[0]] {
			name, kept = clientRetryNames[k]
			kept = kept && vs[0] != ""
		}
		if len(k) >= len("idempotency") && containsFold(k, "idempotency") {
			name, kept = strings.ToLower(k), true
		}
		if !kept {
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		if v, had := m[name]; !had || v != vs[0] {
			m[name] = vs[0]
		}
		n++
	}
	if !fresh && n != len(m) { // an earlier request's names are left (or one name came twice)
		clear(m)
		return clientHeaders(h, m)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// containsFold reports whether s contains the lower-case ASCII sub in
// any case. Only an ASCII letter folds to an ASCII letter other than k
// and s, so a match starts where the byte is sub's first in either case:
// EqualFold is tried only there.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

func epochMs(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }

// wireLog writes records as JSON lines, one at a time, each flushed: the
// log holds no more than one line in memory and is whole when the
// process is stopped. At the first write error it writes no more and
// calls failed (when not nil) once, at once.
type wireLog struct {
	mu     sync.Mutex
	enc    wire.Encoder
	w      *bufio.Writer
	err    error
	failed func(error)
}

func newWireLog(w io.Writer, failed func(error)) *wireLog {
	if w == nil {
		return &wireLog{}
	}
	return &wireLog{w: bufio.NewWriter(w), failed: failed}
}

// write writes r's line (wire.Encoder: json.Marshal's bytes, the
// request's part copied from the last line's when it is the same) and a
// newline, encoded in place in the log's buffer, which is empty after
// each line's flush: a line of the usual size costs no allocation and no
// copy, a longer one its own buffer, held no longer than its write.
func (l *wireLog) write(r *Record) {
	if l.w == nil {
		return
	}
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return
	}
	b, err := l.enc.Append(l.w.AvailableBuffer(), r)
	if err == nil {
		if _, err = l.w.Write(append(b, '\n')); err == nil {
			err = l.w.Flush()
		}
		l.err = err
	} else {
		err = nil // a line that cannot be encoded is not written (json.Marshal's error)
	}
	l.mu.Unlock()
	if err != nil && l.failed != nil {
		l.failed(err)
	}
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
