package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
)

// slowUpstream is a proxy forwarding to an upstream that streams one
// event and then nothing until its request ends, with a slow body of an
// hour between reads on every request, served on loopback.
func slowUpstream(t *testing.T) (*proxy.Proxy, *httptest.Server, *bytes.Buffer) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("content-type", "text/event-stream")
		_, _ = io.WriteString(w, upstreamEvents[0])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(up.Close)
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Upstream: up.URL, Log: &log, Script: proxy.Script{
		Faults: []proxy.Fault{{Kind: proxy.FaultSlowBody, Delay: time.Hour}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv, &log
}

// startStream sends a streaming request and reads its first event.
func startStream(t *testing.T, ctx context.Context, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/messages", strings.NewReader(`{"model":"m","stream":true}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "event: message_start") {
		t.Fatalf("first line %q, %v", line, err)
	}
	return res
}

// TestSlowBodyFollowsTheClient: a forwarded answer's slow body stops
// waiting when its client leaves; the request is logged at once, as the
// client's departure, not later as a success.
func TestSlowBodyFollowsTheClient(t *testing.T) {
	p, srv, log := slowUpstream(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := startStream(t, ctx, srv.URL)
	cancel()
	res.Body.Close()
	srv.Close() // waits for the handler: it ends when its client leaves
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 1 || recs[0].Error != "client gone during the slow body" {
		t.Errorf("wire log %+v, want the client gone", recs)
	}
}

// TestStopEndsTheWaits: Stop ends the faults' waits of the requests in
// flight (three streams with a slow body of an hour), which are logged
// as stopped; Close returns once each is logged.
func TestStopEndsTheWaits(t *testing.T) {
	p, srv, log := slowUpstream(t)
	for i := 0; i < 3; i++ {
		res := startStream(t, context.Background(), srv.URL)
		defer res.Body.Close()
	}
	p.Stop()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 3 {
		t.Fatalf("%d log lines, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Error != "proxy stopped during the slow body" {
			t.Errorf("log line %+v, want the proxy stopped", r)
		}
	}
}
