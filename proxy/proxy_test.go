package proxy_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// upstreamEvents is what the fake upstream streams.
var upstreamEvents = []string{
	"event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
	"event: ping\ndata: {\"type\":\"ping\"}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\"}\n\n",
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
}

// fakeUpstream is a loopback server that records the bodies it gets and
// answers JSON, or its events for a streaming request.
func fakeUpstream(t *testing.T) (*httptest.Server, *[]string) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
		if bytes.Contains(b, []byte(`"stream":true`)) {
			w.Header().Set("content-type", "text/event-stream")
			for _, ev := range upstreamEvents {
				_, _ = io.WriteString(w, ev)
				w.(http.Flusher).Flush()
			}
			return
		}
		w.Header().Set("x-upstream", "yes")
		_, _ = io.WriteString(w, `{"upstream":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func post(t *testing.T, url, body string) (*http.Response, string, error) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res, string(b), err
}

// TestUpstream: with an upstream, the script's error turns are the
// proxy's, success turns, requests after the last turn and other paths
// are forwarded unchanged (streams as they come), and the stream faults
// apply to forwarded streams.
func TestUpstream(t *testing.T) {
	up, got := fakeUpstream(t)
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Upstream: up.URL, Log: &log, Script: proxy.Script{
		Turns:  []scenario.Turn{proxytest.ErrTurn(529, "Overloaded", map[string]string{"retry-after": "1"}), proxytest.OkTurn()},
		Faults: []proxy.Fault{{Request: 4, Kind: proxy.FaultStreamCut, Events: 2}, {Request: 5, Kind: proxy.FaultSSEError, Events: 1}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	const body = `{"model":"claude","max_tokens":5,"messages":[]}`
	res, b, err := post(t, srv.URL+"/v1/messages", body)
	if err != nil || res.StatusCode != 529 || res.Header.Get("retry-after") != "1" || !strings.Contains(b, `"overloaded_error"`) {
		t.Fatalf("request 1: %v %v %q, want the scripted 529", err, res, b)
	}
	for i := 2; i <= 3; i++ {
		res, b, err = post(t, srv.URL+"/v1/messages", body)
		if err != nil || res.StatusCode != 200 || b != `{"upstream":true}` || res.Header.Get("x-upstream") != "yes" {
			t.Fatalf("request %d: %v %v %q, want the upstream's answer", i, err, res, b)
		}
	}
	stream := `{"model":"claude","stream":true}`
	_, b, err = post(t, srv.URL+"/v1/messages", stream)
	if err == nil || b != strings.Join(upstreamEvents[:2], "") {
		t.Errorf("request 4 (cut after 2 events): %v, %q", err, b)
	}
	_, b, err = post(t, srv.URL+"/v1/messages", stream)
	if err != nil || !strings.HasPrefix(b, upstreamEvents[0]+"event: error\ndata: ") || !strings.Contains(b, "overloaded_error") || strings.Contains(b, "message_stop") {
		t.Errorf("request 5 (error event after 1): %v, %q", err, b)
	}
	_, b, err = post(t, srv.URL+"/v1/messages", stream)
	if err != nil || b != strings.Join(upstreamEvents, "") {
		t.Errorf("request 6 (a stream forwarded whole): %v, %q", err, b)
	}
	r, err := http.Get(srv.URL + "/v1/models")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("GET /v1/models: %v %v", err, r)
	}
	r.Body.Close()
	srv.Close()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if len(*got) != 6 || (*got)[0] != "POST /v1/messages "+body || (*got)[5] != "GET /v1/models " {
		t.Errorf("the upstream got %q", *got)
	}
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 7 || recs[0].Upstream || !recs[1].Upstream || recs[3].Events != 2 || len(recs[3].Faults) != 1 || recs[4].Faults[0] != "sse-error after 1 events" {
		t.Errorf("wire log %+v", recs)
	}
}

// TestRequestErrors: a body over the limit is 413, a body that is not
// JSON 400, another path 404 and another method 405, each in the
// provider's error shape and logged.
func TestRequestErrors(t *testing.T) {
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{MaxBodyBytes: 100, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"POST", "/v1/messages", `{"model":"` + strings.Repeat("x", 200) + `"}`, 413, `{"type":"error","error":{"type":"request_too_large","message":"request body too large: the limit is 100 bytes"}`},
		{"POST", "/v1/chat/completions", strings.Repeat("x", 101), 413, `{"error":{"message":"request body too large: the limit is 100 bytes","type":"invalid_request_error"`},
		{"POST", "/v1/responses", `not json`, 400, `"type":"invalid_request_error"`},
		{"POST", "/v1/embeddings", `{}`, 404, `no endpoint POST /v1/embeddings`},
		{"GET", "/v1/messages", ``, 405, `"type":"invalid_request_error"`},
	} {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body)))
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s %s: %d %s, want %d and %s", tc.method, tc.path, w.Code, w.Body, tc.status, tc.want)
		}
	}
	recs := proxytest.ReadLog(t, log.Bytes())
	if len(recs) != 5 || recs[0].Status != 413 || recs[0].Error != "request body over 100 bytes" || recs[2].Status != 400 {
		t.Errorf("wire log %+v", recs)
	}
}

// TestBadBodies: a body that cannot be read, or is not a JSON object, or
// has a field of the wrong type, is 400 in the provider's shape with a
// message a person can read (no Go type), and logged with its status.
func TestBadBodies(t *testing.T) {
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body io.Reader
		want string
	}{
		{strings.NewReader(`null`), `request body is not a JSON object of the anthropic-messages API: it is null`},
		{strings.NewReader(`[]`), `request body is not a JSON object of the anthropic-messages API: it is an array`},
		{strings.NewReader(` "x"`), `it is a string`},
		{strings.NewReader(`{"model":5}`), `request body: model is a number (allowed: a string)`},
		{strings.NewReader(`{"model":"m","stream":"yes"}`), `request body: stream is a string (allowed: true or false)`},
		{strings.NewReader(`{"model":"m","tools":{}}`), `request body: tools is an object (allowed: a list)`},
		{strings.NewReader(`{"model":`), `request body is not valid JSON: unexpected end of JSON input`},
		{strings.NewReader(`{"model" 1}`), `request body is not valid JSON at byte 10: invalid character '1' after object key`},
		{iotest.ErrReader(errors.New("unexpected EOF")), `could not read the request body: unexpected EOF`},
	} {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", tc.body))
		b := w.Body.String()
		if w.Code != 400 || !strings.Contains(b, `"type":"invalid_request_error"`) || !strings.Contains(b, tc.want) || strings.Contains(b, "Go ") || strings.Contains(b, "struct") {
			t.Errorf("%d %s, want 400 and %q", w.Code, b, tc.want)
		}
	}
	p.Close()
	for i, r := range proxytest.ReadLog(t, log.Bytes()) {
		if r.Status != 400 || r.ErrorType != "invalid_request_error" || r.Error == "" {
			t.Errorf("log line %d: %+v, want status 400 and the error", i+1, r)
		}
	}
}

// TestEchoBounded: the model and the tool name a request gives are echoed
// in the answer and the log only up to proxy.MaxNameBytes: a longer one is
// 400 in the provider's shape, its message and log line short.
func TestEchoBounded(t *testing.T) {
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("m", 1<<20)
	for _, tc := range []struct{ body, want string }{
		{`{"model":"` + long + `"}`, `model: 1048576 bytes long (at most 256)`},
		{`{"model":"m","tools":[{"name":"` + long + `"}]}`, `tools[0].name: 1048576 bytes long (at most 256)`},
		{`{"model":"m","tools":[{"function":{"name":"` + long + `"}}]}`, `tools[0].function.name: 1048576 bytes long (at most 256)`},
	} {
		w := httptest.NewRecorder()
		p.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(tc.body)))
		if w.Code != 400 || !strings.Contains(w.Body.String(), tc.want) || w.Body.Len() > 1000 {
			t.Errorf("%.40s...: %d %.300s, want 400 and %q", tc.body, w.Code, w.Body, tc.want)
		}
	}
	p.Close()
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if len(l) > 2000 {
			t.Errorf("a wire log line of %d bytes: %.300s", len(l), l)
		}
	}
	// one at the limit is echoed
	name := strings.Repeat("n", proxy.MaxNameBytes)
	w := httptest.NewRecorder()
	p2, _ := proxy.New(proxy.Options{})
	p2.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{"model":"`+name+`"}`)))
	if w.Code != 200 || !strings.Contains(w.Body.String(), name) {
		t.Errorf("a model of %d bytes: %d %.200s", len(name), w.Code, w.Body)
	}
}

// TestLoadScript: a proxy script reads its scenario's turns (relative to
// itself) and its faults; a scenario file is a script of its turns.
func TestLoadScript(t *testing.T) {
	write := proxytest.Files(t)
	sc := write("s.yaml", "turns:\n  - {stopReason: error, errorMessage: x, status: 503}\n  - {stopReason: stop}\n")
	s, err := proxy.LoadScript(sc)
	if err != nil || len(s.Turns) != 2 || s.Turns[0].Status != 503 || s.Faults != nil {
		t.Fatalf("scenario file: %+v, %v", s, err)
	}
	ps := write("p.yaml", "scenario: s.yaml\nrepeat: true\ntext: hi there\nfaults:\n  - {request: 2, kind: latency, delayMs: 250}\n  - {kind: slow-body, delayMs: 10, chunk: 8}\n  - {request: 3, kind: stream-cut, events: 4}\n")
	s, err = proxy.LoadScript(ps)
	want := []proxy.Fault{{Request: 2, Kind: proxy.FaultLatency, Delay: 250e6}, {Kind: proxy.FaultSlowBody, Delay: 10e6, Chunk: 8}, {Request: 3, Kind: proxy.FaultStreamCut, Events: 4}}
	if err != nil || len(s.Turns) != 2 || !s.Repeat || s.Text != "hi there" || len(s.Faults) != 3 {
		t.Fatalf("proxy script: %+v, %v", s, err)
	}
	for i, f := range want {
		if s.Faults[i] != f {
			t.Errorf("fault %d: %+v, want %+v", i, s.Faults[i], f)
		}
	}
	for text, msg := range map[string]string{
		"faults:\n  - {kind: latency, delayMs: -1}\n": `p.yaml:2:30: faults[0].delayMs: "-1" is not allowed (allowed: an integer from 0 to 3600000)`,
		"faults:\n  - {request: 1}\n":                 `p.yaml:2:5: faults[0]: kind is required`,
		"faults: {}\n":                                `p.yaml:1:9: faults: not a list`,
		"scenario: nope.yaml\n":                       `p.yaml:1:11: scenario: `,
		"scenario: \"\"\n":                            `p.yaml:1:11: scenario: empty (allowed: a scenario file's path, relative to the script)`,
		"fleet: \" \"\n":                              `p.yaml:1:8: fleet: empty (allowed: a fleet file's path, relative to the script)`,
		"repeat: yes please\n":                        `p.yaml:1:9: repeat: "yes please" is not true or false`,
		"text: a\ntext: b\n":                          `p.yaml:2:1: text: duplicate key`,
		"- a\n":                                       `p.yaml:1:1: a script is a mapping`,
		"faults:\n  - {kind: drop, evnets: 1}\n":      `p.yaml:2:18: faults[0]: unknown key "evnets" (allowed: request, kind, delayMs, events, chunk); did you mean events?`,
	} {
		_, err := proxy.LoadScript(write("p.yaml", text))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %s", text, err, msg)
		}
	}
}

// TestWireLogMemoryBounded: the proxy keeps nothing per request: the heap
// after 20 000 requests is within 1 MB of its size after 2 000.
func TestWireLogMemoryBounded(t *testing.T) {
	p, err := proxy.New(proxy.Options{Log: io.Discard, Script: proxy.Script{Turns: []scenario.Turn{proxytest.ErrTurn(529, "Overloaded", nil), proxytest.OkTurn()}, Repeat: true}})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"model":"m","max_tokens":5,"messages":[]}`)
	heapAfter := func(n int) uint64 {
		for i := 0; i < n; i++ {
			w := httptest.NewRecorder()
			p.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", bytes.NewReader(body)))
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	small := heapAfter(2000)
	large := heapAfter(18000)
	if large > small+1<<20 {
		t.Errorf("heap %d after 20 000 requests, %d after 2 000", large, small)
	}
	if p.Requests() != 20000 {
		t.Errorf("%d requests", p.Requests())
	}
}

// countingTransport counts the round trips and refuses those past max.
type countingTransport struct {
	n, max int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n++
	if c.n > c.max {
		return nil, errors.New("too many round trips")
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestUpstreamLoop: a proxy whose upstream is itself answers the request
// that comes back to it 508, once, instead of forwarding it again.
func TestUpstreamLoop(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	var log bytes.Buffer
	tr := &countingTransport{max: 5}
	p, err := proxy.New(proxy.Options{Upstream: "http://" + srv.Listener.Addr().String(), Transport: tr, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = p
	srv.Start()
	defer srv.Close()
	res, b, err := post(t, srv.URL+"/v1/messages", `{"model":"m"}`)
	if err != nil || res.StatusCode != 508 || !strings.Contains(b, "forwarding loop") {
		t.Fatalf("%v %v %s, want 508 and the loop", err, res, b)
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	srv.Close()
	p.Close()
	if tr.n != 1 {
		t.Errorf("%d round trips upstream, want 1", tr.n)
	}
	// the request that came back (seq 2) ends first, but its line can
	// come after the first request's: its answer is flushed before its
	// line is written, and the first request's line is written as that
	// answer arrives
	recs := proxytest.ReadLog(t, log.Bytes())
	slices.SortFunc(recs, func(a, b proxy.Record) int { return a.Seq - b.Seq })
	if len(recs) != 2 || recs[1].Status != 508 || !strings.Contains(recs[1].Error, "forwarding loop") || recs[0].Status != 508 || !recs[0].Upstream {
		t.Errorf("wire log %+v", recs)
	}
}

// TestForwardsToItself: which upstreams name the address listened on.
func TestForwardsToItself(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8787}
	any := &net.TCPAddr{IP: net.IPv6unspecified, Port: 80}
	for _, tc := range []struct {
		up   string
		addr net.Addr
		want bool
	}{
		{"http://127.0.0.1:8787", lo, true},
		{"http://localhost:8787/v1", lo, true},
		{"http://127.0.0.1:8788", lo, false},
		{"https://api.anthropic.com", lo, false},
		{"http://[::1]:8787", lo, false}, // another socket
		{"http://localhost", any, true},
		{"http://0.0.0.0:80", any, true},
		{"https://localhost", any, false},
		{"", lo, false},
	} {
		if got := proxy.ForwardsToItself(tc.up, tc.addr); got != tc.want {
			t.Errorf("ForwardsToItself(%q, %v) = %v, want %v", tc.up, tc.addr, got, tc.want)
		}
	}
}
