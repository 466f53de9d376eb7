package main

import (
	"bytes"
	"context"
	"net"
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
