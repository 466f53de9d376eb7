package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// The proxy server's limits (SPEC.md §18.4), each an Options field's
// default.
const (
	// HeaderTimeout bounds reading a request's headers.
	HeaderTimeout = 30 * time.Second
	// MaxHeaderBytes bounds a request's line and headers (net/http
	// answers a larger one 431 itself).
	MaxHeaderBytes = 1 << 20
	// DefaultBodyTimeout is how long a request body may send nothing
	// before it is answered 408 (a body that never ends, or shorter than
	// its Content-Length).
	DefaultBodyTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may stay
	// idle between requests before it is closed.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxConns bounds the connections open at once; a connection
	// over it waits to be accepted until another closes.
	DefaultMaxConns = 1024
)

// Server is an http.Server serving p with its limits: HeaderTimeout and
// MaxHeaderBytes for a request's headers, Options.IdleTimeout for an idle connection (the
// body's is p's own, Options.BodyTimeout). Serve it on Limit's listener.
func (p *Proxy) Server() *http.Server {
	return &http.Server{Handler: p, ReadHeaderTimeout: HeaderTimeout, MaxHeaderBytes: MaxHeaderBytes, IdleTimeout: p.idle}
}

// Limit is ln accepting at most Options.MaxConns connections open at
// once: Accept waits until one closes.
func (p *Proxy) Limit(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, p.maxConns)}
}

// limitListener is a listener with a bounded number of open connections.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// limitConn gives its slot back once, when closed.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// readBody reads r's body up to p.maxBody bytes, each read to send
// something within p.bodyTimeout. An error is the client's answer: 413
// over the limit, 408 when the body stalled, 400 when it cannot be read.
// A body whose Content-Length is within the limit is read into one
// buffer of its size (up to 64 KiB; a larger one grows as it comes), and
// needs no MaxBytesReader: net/http reads no more than Content-Length.
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	rc := http.NewResponseController(w)
	var body io.Reader = r.Body
	size := 512
	if cl := r.ContentLength; cl >= 0 && cl <= p.maxBody {
		size = int(min(cl, 64<<10)) + 1 // and the read that meets the end
	} else {
		body = http.MaxBytesReader(w, r.Body, p.maxBody)
	}
	b := make([]byte, 0, size)
	var err error
	for err == nil { // io.ReadAll's loop, the deadline renewed before each read
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		_ = rc.SetReadDeadline(time.Now().Add(p.bodyTimeout))
		var n int
		n, err = body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
	}
	if err == io.EOF {
		// the last deadline is net/http's to clear: the read that meets
		// the body's end clears it, before net/http waits on the
		// connection for what comes next (TestBodyDeadlineCleared)
		return b, 0, nil
	}
	// the rest of the body is not read: the connection closes after the
	// answer (the deadline, left passed, stops net/http reading on)
	w.Header().Set("connection", "close")
	var tooLarge *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &tooLarge):
		return b, http.StatusRequestEntityTooLarge, fmt.Errorf("request body too large: the limit is %d bytes", p.maxBody)
	case errors.As(err, &ne) && ne.Timeout():
		return b, http.StatusRequestTimeout, fmt.Errorf("request body stalled: nothing for %s after %d bytes", p.bodyTimeout, len(b))
	}
	return b, http.StatusBadRequest, fmt.Errorf("could not read the request body: %v", err)
}
