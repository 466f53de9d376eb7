package proxy_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
)

// limitedServer serves p as retrysim-proxy does: p.Server on p.Limit.
func limitedServer(t *testing.T, p *proxy.Proxy) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: p.Limit(ln), Config: p.Server()}
	srv.Start()
	t.Cleanup(srv.Close)
	return ln.Addr().String()
}

// rawConn dials addr; a read waits at most 10 s (a bound, not a pause:
// what the test waits for comes well before).
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// TestBodyStalled: a body that sends nothing for the body timeout (one
// shorter than its Content-Length, a chunked body that never ends) is
// answered 408 in the provider's shape and logged, its connection closed.
func TestBodyStalled(t *testing.T) {
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Log: &log, BodyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	addr := limitedServer(t, p)
	for _, req := range []string{
		"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\"",
		"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
	} {
		c := rawConn(t, addr)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%q: %v (no answer)", req, err)
		}
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 408 || !strings.Contains(string(b), `"type":"timeout_error","message":"request body stalled: nothing for 50ms after`) {
			t.Errorf("%q: %d %s, want 408 and the stall", req, res.StatusCode, b)
		}
	}
	p.Close()
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 2 || recs[0].Status != 408 || !strings.HasPrefix(recs[0].Error, "request body stalled") {
		t.Errorf("wire log %+v", recs)
	}
}

// TestIdleConnectionClosed: a keep-alive connection idle for the idle
// timeout after its answer is closed by the proxy.
func TestIdleConnectionClosed(t *testing.T) {
	p, err := proxy.New(proxy.Options{IdleTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, limitedServer(t, p))
	const body = `{"model":"m"}`
	if _, err := io.WriteString(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n"+body); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	res, err := http.ReadResponse(r, nil)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("%v %v", res, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection: read %v, want EOF (closed by the proxy)", err)
	}
}

// TestMaxConns: over MaxConns connections open at once, a new one is not
// served until another closes.
func TestMaxConns(t *testing.T) {
	p, err := proxy.New(proxy.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	addr := limitedServer(t, p)
	const req = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
	var conns []net.Conn
	for i := 0; i < 3; i++ {
		c := rawConn(t, addr)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	readers := make([]*bufio.Reader, 3)
	for i := 0; i < 2; i++ {
		readers[i] = bufio.NewReader(conns[i])
		if res, err := http.ReadResponse(readers[i], nil); err != nil || res.StatusCode != 200 {
			t.Fatalf("connection %d: %v %v", i+1, res, err)
		}
	}
	// the third waits in the listen queue: nothing within 100 ms (a
	// bound: the two others were answered at once)
	_ = conns[2].SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	readers[2] = bufio.NewReader(conns[2])
	if _, err := readers[2].Peek(1); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third connection served over the cap: %v", err)
	}
	if got := p.Requests(); got != 2 {
		t.Errorf("%d requests received, want 2", got)
	}
	conns[0].Close()
	_ = conns[2].SetReadDeadline(time.Now().Add(10 * time.Second))
	if res, err := http.ReadResponse(readers[2], nil); err != nil || res.StatusCode != 200 {
		t.Fatalf("third connection after one closed: %v %v", res, err)
	}
}

// TestHeadersBounded: request headers over MaxHeaderBytes are refused
// (431) before the handler.
func TestHeadersBounded(t *testing.T) {
	p, err := proxy.New(proxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, limitedServer(t, p))
	big := strings.Repeat("a", proxy.MaxHeaderBytes+4096)
	if _, err := io.WriteString(c, "POST /v1/messages HTTP/1.1\r\nHost: x\r\nX-Big: "+big+"\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || res.StatusCode != 431 || p.Requests() != 0 {
		t.Errorf("%v %v, %d requests; want 431 and none handled", res, err, p.Requests())
	}
}

// deadlineListener's connections note the read deadlines their server
// sets: the last one (readDeadline), and those in the future when set
// (futureDeadlines).
type deadlineListener struct {
	net.Listener
	mu     sync.Mutex
	last   time.Time
	future []time.Time // the deadlines set in the future when set
}

func (l *deadlineListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &deadlineConn{Conn: c, l: l}, nil
}

func (l *deadlineListener) futureDeadlines() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.future)
}

func (l *deadlineListener) readDeadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

type deadlineConn struct {
	net.Conn
	l *deadlineListener
}

func (c *deadlineConn) SetReadDeadline(t time.Time) error {
	c.l.mu.Lock()
	c.l.last = t
	if t.After(time.Now()) {
		c.l.future = append(c.l.future, t)
	}
	c.l.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

// logWriter calls check at each write of the wire log.
type logWriter struct {
	bytes.Buffer
	check func()
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.check()
	return w.Buffer.Write(b)
}

// TestBodySetsNoDeadline: a body read whole sets no read deadline on its
// connection (its stall is watched by one timer for all bodies, not by a
// deadline armed for each request), so none is set while the answer
// waits (a latency of an hour, ended by Stop: logged as stopped, not as
// a client gone, which a deadline passing under net/http's wait on the
// connection would make it) nor while its wire log line is written.
func TestBodySetsNoDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dl := &deadlineListener{Listener: ln}
	log := &logWriter{}
	log.check = func() {
		if d := dl.readDeadline(); !d.IsZero() {
			t.Errorf("a wire log line written with the read deadline %v set", d)
		}
	}
	p, err := proxy.New(proxy.Options{Log: log, BodyTimeout: time.Minute,
		Script: proxy.Script{Faults: []proxy.Fault{{Request: 2, Kind: proxy.FaultLatency, Delay: time.Hour}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: dl, Config: &http.Server{Handler: p}}
	srv.Start()
	defer srv.Close()
	defer p.Stop() // before the server's Close, which waits for request 2
	post := func() (*http.Response, error) {
		return srv.Client().Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
	}
	res, err := post() // request 1: answered at once
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	done := make(chan error, 1)
	go func() { // request 2: waits an hour
		res, err := post()
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	for p.Requests() < 2 {
		runtime.Gosched()
	}
	p.Stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f := dl.futureDeadlines(); len(f) > 0 {
		t.Errorf("read deadlines set in the future: %v (want none: net/http sets only zero and past ones here)", f)
	}
	srv.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 2 || recs[0].Error != "" || recs[1].Error != "proxy stopped during the latency" {
		t.Errorf("wire log %+v, want request 1 answered, request 2 stopped", recs)
	}
}
