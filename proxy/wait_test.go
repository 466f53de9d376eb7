package proxy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
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
		_, _ = io.Copy(io.Discard, r.Body)
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

// TestUpstreamFailuresLogged: an upstream answer cut after its headers is
// logged with the upstream's error (the client saw a cut body, not a
// success), and a client that leaves while the upstream is still silent
// is logged as gone, with no status, not as a 502 it never received.
func TestUpstreamFailuresLogged(t *testing.T) {
	arrived := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)        // then the server sees the request end
		if r.URL.Path == "/v1/chat/completions" { // silent until the request ends
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		w.Header().Set("content-type", "text/event-stream")
		_, _ = io.WriteString(w, upstreamEvents[0])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection reset after the headers
	}))
	defer up.Close()
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Upstream: up.URL, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	res, _, err := post(t, srv.URL+"/v1/messages", `{"model":"m","stream":true}`)
	if err == nil {
		t.Errorf("a cut upstream answer read whole: %v", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m"}`))
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Errorf("the request ended by its client was answered %d", res.StatusCode)
	}
	srv.Close()
	p.Close()
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 2 {
		t.Fatalf("%d log lines, want 2", len(recs))
	}
	if r := recs[0]; r.Status != 200 || !strings.HasPrefix(r.Error, fmt.Sprintf("upstream: the answer was cut after %d bytes: ", len(upstreamEvents[0]))) {
		t.Errorf("cut upstream answer logged %+v, want 200 and the upstream's cut", r)
	}
	if r := recs[1]; r.Status != 0 || r.Error != "client gone before the upstream answered" {
		t.Errorf("client gone logged %+v, want status 0 and the client gone", r)
	}
}

// TestUpstreamErrorLogged: a forwarded error answer is logged with the
// retry hints of its headers and its body's error type and message, as a
// scripted one is, so that an audit reads its retry-after.
func TestUpstreamErrorLogged(t *testing.T) {
	const body = `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("retry-after", "1")
		w.Header().Set("x-should-retry", "true")
		w.Header().Set("x-upstream-other", "not kept")
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(529)
		_, _ = io.WriteString(w, body)
	}))
	defer up.Close()
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Upstream: up.URL, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	res, b, err := post(t, srv.URL+"/v1/messages", `{"model":"m"}`)
	if err != nil || res.StatusCode != 529 || b != body || res.Header.Get("retry-after") != "1" {
		t.Fatalf("%v %v %q, want the upstream's 529 as it came", err, res, b)
	}
	srv.Close()
	p.Close()
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 1 {
		t.Fatalf("%d log lines", len(recs))
	}
	r := recs[0]
	if r.Status != 529 || fmt.Sprint(r.Headers) != "map[retry-after:1 x-should-retry:true]" || r.ErrorType != "overloaded_error" || r.ErrorMessage != "Overloaded" {
		t.Errorf("logged %+v, want 529, the retry headers, overloaded_error and its message", r)
	}
}
