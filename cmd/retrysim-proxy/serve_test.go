package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/cmd/internal/cli"
)

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUpstreamIsItself: an upstream naming the proxy's own address (its
// IP, localhost or a loopback address, the same port) is refused at
// start, exit status 2, before anything is served.
func TestUpstreamIsItself(t *testing.T) {
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	for _, up := range []string{"http://" + addr, "http://localhost:" + port + "/"} {
		var errOut bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		code := serve(ctx, &cli.ProxyRun{Listen: addr, Upstream: up, Log: &bytes.Buffer{}, Stderr: &errOut, MaxBody: 1 << 20,
			Ready: func(string) { cancel() }})
		cancel()
		if code != 2 || !strings.Contains(errOut.String(), "is this proxy's own address") {
			t.Errorf("--upstream %s: exit %d, stderr %q; want 2 and the loop", up, code, errOut.String())
		}
	}
}

// TestShutdownLogsRequestsInFlight: stopped with three forwarded streams
// in the middle of an hour-long slow body, the proxy ends their waits at
// once, logs each, and exits 0 saying so: the log is whole at exit.
func TestShutdownLogsRequestsInFlight(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("content-type", "text/event-stream")
		_, _ = io.WriteString(w, "event: ping\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.yaml")
	if err := os.WriteFile(script, []byte("faults:\n  - {kind: slow-body, delayMs: 3600000}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log, errOut bytes.Buffer
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var bodies []io.Closer
	code := serve(ctx, &cli.ProxyRun{Script: script, Listen: "127.0.0.1:0", Upstream: up.URL, Log: &log, Stderr: &errOut, MaxBody: 1 << 20,
		Ready: func(addr string) {
			for i := 0; i < 3; i++ {
				res, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true}`))
				if err != nil {
					t.Error(err)
					break
				}
				bodies = append(bodies, res.Body)
				if line, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil || line != "event: ping\n" {
					t.Errorf("stream %d: %q %v", i+1, line, err)
				}
			}
			stop() // as SIGTERM does
		}})
	for _, b := range bodies {
		b.Close()
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(errOut.String(), "3 requests served") {
		t.Fatalf("exit %d, %d log lines, stderr %q; want 0, 3 lines and 3 served", code, len(lines), errOut.String())
	}
	for _, l := range lines {
		if !strings.Contains(l, `"error":"proxy stopped during the slow body"`) {
			t.Errorf("log line %s, want the proxy stopped", l)
		}
	}
}
