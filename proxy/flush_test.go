package proxy_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ohmypi/retryfsm/proxy"
)

// oneConnListener hands out one connection, then waits until closed.
type oneConnListener struct {
	conn net.Conn
	once sync.Once
	done chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.conn })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}
func (l *oneConnListener) Close() error   { close(l.done); return nil }
func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

type blockingLog struct{ started, release chan struct{} }

func (b blockingLog) Write(p []byte) (int, error) {
	b.started <- struct{}{}
	<-b.release
	return len(p), nil
}

// servePipe serves a proxy of opt as retrysim-proxy does (p.Server),
// on one connection: cli is the client's end of an in-memory pipe, for a
// test in a synctest bubble.
func servePipe(t *testing.T, opt proxy.Options) (*proxy.Proxy, *http.Server, net.Conn) {
	t.Helper()
	p, err := proxy.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	srvConn, cli := net.Pipe()
	ln := &oneConnListener{conn: srvConn, done: make(chan struct{})}
	srv := p.Server()
	go func() { _ = srv.Serve(ln) }()
	return p, srv, cli
}

// TestAnswerBeforeLogLine: the client has the whole answer while the
// wire log line is still being written (a slow log costs the client
// nothing), and the line is then written.
func TestAnswerBeforeLogLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lg := blockingLog{started: make(chan struct{}, 1), release: make(chan struct{})}
		p, srv, cli := servePipe(t, proxy.Options{Log: lg})
		const body = `{"model":"m","max_tokens":16,"messages":[]}`
		go func() {
			_, _ = io.WriteString(cli, "POST /v1/messages HTTP/1.1\r\nHost: proxy.test\r\nContent-Type: application/json\r\nContent-Length: 43\r\n\r\n"+body)
		}()
		got := make(chan string, 1)
		go func() {
			res, err := http.ReadResponse(bufio.NewReader(cli), nil)
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			b, _ := io.ReadAll(res.Body)
			got <- res.Status + " " + string(b)
		}()
		synctest.Wait()
		select {
		case <-lg.started:
		default:
			t.Fatal("the log line was not being written")
		}
		select {
		case s := <-got:
			if !strings.HasPrefix(s, "200 OK {") {
				t.Errorf("answer %q", s)
			}
		default:
			t.Error("the client had no answer while the log line was being written")
		}
		close(lg.release)
		_ = srv.Close()
		_ = cli.Close()
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
	})
}
