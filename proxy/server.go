package proxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
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

// readBody reads r's body up to p.maxBody bytes, none of its reads
// waiting more than p.bodyTimeout (checked by p.stalls, from start). An
// error is the client's answer: 413 over the limit, 408 when the body
// stalled, 400 when it cannot be read. A body whose Content-Length is
// within the limit is read into one buffer of its size (up to 64 KiB; a
// larger one grows as it comes), and needs no MaxBytesReader: net/http
// reads no more than Content-Length. The body is read into buf when it
// is large enough (a recycled request's).
func (p *Proxy) readBody(w http.ResponseWriter, r *http.Request, rd *bodyRead, start time.Time, buf []byte) ([]byte, int, error) {
	var body io.Reader = r.Body
	size := 512
	if cl := r.ContentLength; cl >= 0 && cl <= p.maxBody {
		size = int(min(cl, 64<<10)) + 1 // and the read that meets the end
	} else {
		body = http.MaxBytesReader(w, r.Body, p.maxBody)
	}
	b := slices.Grow(buf[:0], size)
	p.stalls.add(rd, w, start)
	var err error
	for reads := 0; err == nil; reads++ { // io.ReadAll's loop, each read's start noted
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		if reads > 0 {
			rd.began.Store(int64(time.Since(p.stalls.epoch)))
		}
		var n int
		n, err = body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
	}
	if p.stalls.remove(rd) && err == io.EOF {
		// the body ended as it was found stalled: its deadline, passed, is
		// set, and net/http's next read of the connection fails
		err = os.ErrDeadlineExceeded
	}
	if err == io.EOF {
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

// stallWatch finds the request bodies stalled: a read that has waited a
// timeout or more. Instead of a read deadline renewed before each read
// (a runtime timer armed and disarmed for each request, which can wake
// the network poller's thread), one timer checks the bodies being read
// every tick while there are any, and sets a stalled one's read deadline
// in the past, which ends its read with a timeout: a stall is found
// between timeout and timeout + tick after its read began.
type stallWatch struct {
	timeout, tick time.Duration
	epoch         time.Time // the origin of bodyRead.began
	mu            sync.Mutex
	reads         []*bodyRead // being read
	timer         *time.Timer // armed while reads is not empty, or was at its last check
	armed         bool
}

// bodyRead is one body being read: when its current read began
// (since the watch's epoch), the response whose deadline ends it, whether
// it was found stalled. A request's is in its pooled handling.
type bodyRead struct {
	began   atomic.Int64
	w       http.ResponseWriter
	i       int
	stalled bool
}

func newStallWatch(timeout time.Duration) *stallWatch {
	return &stallWatch{timeout: timeout, tick: max(timeout/8, time.Millisecond), epoch: time.Now()}
}

// add notes that w's request body, rd, is being read, its first read
// beginning at start.
func (s *stallWatch) add(rd *bodyRead, w http.ResponseWriter, start time.Time) {
	s.mu.Lock()
	rd.w, rd.i, rd.stalled = w, len(s.reads), false
	rd.began.Store(int64(start.Sub(s.epoch)))
	s.reads = append(s.reads, rd)
	if !s.armed {
		s.armed = true
		if s.timer == nil {
			s.timer = time.AfterFunc(s.tick, s.check)
		} else {
			s.timer.Reset(s.tick)
		}
	}
	s.mu.Unlock()
}

// remove notes that rd's body is read, and says whether it was found
// stalled. After it, rd's response is not touched.
func (s *stallWatch) remove(rd *bodyRead) bool {
	s.mu.Lock()
	last := len(s.reads) - 1
	s.reads[rd.i] = s.reads[last]
	s.reads[rd.i].i = rd.i
	s.reads[last] = nil
	s.reads = s.reads[:last]
	stalled := rd.stalled
	rd.w = nil
	s.mu.Unlock()
	return stalled
}

// check ends the reads that have waited the timeout, and checks again a
// tick later while there are reads.
func (s *stallWatch) check() { s.checkAt(time.Since(s.epoch)) }

// checkAt is check at now (since the watch's epoch).
func (s *stallWatch) checkAt(now time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rd := range s.reads {
		if !rd.stalled && now-time.Duration(rd.began.Load()) >= s.timeout {
			rd.stalled = true
			_ = http.NewResponseController(rd.w).SetReadDeadline(time.Unix(1, 0))
		}
	}
	if s.armed = len(s.reads) > 0; s.armed {
		s.timer.Reset(s.tick)
	}
}

// dateCache is the Date header of the answers written in one second:
// net/http formats it for each answer that has none (about 1,900
// instructions); the proxy formats it once a second. Its value is shared, so
// that setting it allocates nothing: a slice of one string at its
// capacity, which an Add copies before appending to.
type dateCache struct{ last atomic.Pointer[dateValue] }

type dateValue struct {
	sec int64
	h   []string
}

// at is the Date header's value at now, as net/http writes it
// (http.TimeFormat).
func (c *dateCache) at(now time.Time) []string {
	sec := now.Unix()
	if d := c.last.Load(); d != nil && d.sec == sec {
		return d.h
	}
	d := &dateValue{sec: sec, h: []string{now.UTC().Format(http.TimeFormat)}}
	c.last.Store(d)
	return d.h
}
