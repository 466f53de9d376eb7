// Package proxytest serves a proxy in memory for tests, with a fake
// clock's waits (testing/synctest), and reads its wire log: the helpers
// the proxy's own tests and the real SDKs' tests (module
// github.com/ohmypi/retryfsm/adapters) share.
package proxytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/scenario"
)

// pipeListener is an in-memory listener: inside a synctest bubble its
// connections (net.Pipe) block durably, so the SDKs' real waits
// (time.After) run on the bubble's fake clock.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	srv, cli := net.Pipe()
	select {
	case l.conns <- srv:
		return cli, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "proxy.test:80" }

// Served is a proxy served in memory, and its wire log.
type Served struct {
	// Proxy is the proxy served.
	Proxy *proxy.Proxy
	// Client reaches it (its transport dials the in-memory listener).
	Client *http.Client
	// URL is its base URL for an SDK: http://proxy.test.
	URL string
	log *bytes.Buffer
	srv *http.Server
	tr  *http.Transport
}

// Serve serves a proxy for sc over an in-memory listener: inside a
// testing/synctest bubble its connections block durably, so an SDK's real
// waits run on the bubble's fake clock. Call Close.
func Serve(t testing.TB, sc proxy.Script) *Served {
	t.Helper()
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Script: sc, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	l := newPipeListener()
	srv := &http.Server{Handler: p, ErrorLog: nil}
	go func() { _ = srv.Serve(l) }()
	tr := &http.Transport{DialContext: l.dial, DisableCompression: true}
	return &Served{Proxy: p, Client: &http.Client{Transport: tr}, URL: "http://proxy.test", log: &log, srv: srv, tr: tr}
}

// Close stops the server and returns the wire log's records and bytes.
func (s *Served) Close(t testing.TB) ([]proxy.Record, []byte) {
	t.Helper()
	s.tr.CloseIdleConnections()
	if err := s.srv.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Fatal(err)
	}
	if err := s.Proxy.Close(); err != nil {
		t.Fatal(err)
	}
	raw := bytes.Clone(s.log.Bytes())
	return ReadLog(t, raw), raw
}

// ReadLog reads a wire log's records, failing t on a line that is not one.
func ReadLog(t testing.TB, log []byte) []proxy.Record {
	t.Helper()
	var recs []proxy.Record
	for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		if line == "" {
			continue
		}
		var r proxy.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("wire log line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// AuditWire audits a wire log under profile (no slack) and returns its
// findings and summary.
func AuditWire(t testing.TB, profile string, log []byte) ([]audit.Finding, audit.WireSummary) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	var fs []audit.Finding
	sum, err := a.AuditWire(bytes.NewReader(log), audit.WireOptions{Slack: -1}, func(f audit.Finding) { fs = append(fs, f) })
	if err != nil {
		t.Fatal(err)
	}
	return fs, sum
}

// ErrTurn is an error turn with a status and headers.
func ErrTurn(status int, msg string, headers map[string]string) scenario.Turn {
	return scenario.Turn{StopReason: policy.StopReasonError, Status: status, ErrorMessage: msg, Headers: headers}
}

// OkTurn is a successful turn.
func OkTurn() scenario.Turn { return scenario.Turn{StopReason: policy.StopReasonStop} }

// Gaps are the waits between each answer's end and the next request, ms.
func Gaps(recs []proxy.Record) []float64 {
	var out []float64
	for i := 1; i < len(recs); i++ {
		out = append(out, recs[i].Timestamp-recs[i-1].End())
	}
	return out
}

// Files returns a writer of files into a fresh temporary folder (removed
// when t ends): write(name, text) writes the file and returns its path,
// for the scripts, scenarios and fleet files a test loads.
func Files(t testing.TB) (write func(name, text string) string) {
	t.Helper()
	dir := t.TempDir()
	return func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
}
