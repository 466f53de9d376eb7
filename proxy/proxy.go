package proxy

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/provider"
	"github.com/ohmypi/retryfsm/wire"
)

// DefaultMaxBodyBytes is the largest request body the proxy reads when
// Options.MaxBodyBytes is 0 (wire.DefaultMaxBodyBytes, 32 MiB).
const DefaultMaxBodyBytes = wire.DefaultMaxBodyBytes

// DefaultText is the text of a canned successful answer.
const DefaultText = "Hello from the retrysim proxy."

// Options configure a Proxy.
type Options struct {
	// Script says how each request is answered.
	Script Script
	// Upstream, when not empty, is the base URL of a real endpoint
	// (e.g. https://api.anthropic.com) that answers every request the
	// script does not fault: a success turn, a request after the last
	// turn and any other path. Streaming is forwarded as it comes.
	Upstream string
	// Transport is the upstream's transport (nil: http.DefaultTransport).
	Transport http.RoundTripper
	// Log receives the wire log, one JSON object per request (Record). nil
	// writes none.
	Log io.Writer
	// LogFailed, when not nil, is called once, at once, with the first
	// error writing Log (a closed pipe, a full disk); the log is then
	// written no more, and Close returns the error too.
	LogFailed func(error)
	// MaxBodyBytes bounds a request's body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// BodyTimeout is how long a request's body may send nothing before it
	// is answered 408 (0: DefaultBodyTimeout); the stall is found within
	// an eighth of it more (one timer checks every body being read).
	BodyTimeout time.Duration
	// IdleTimeout and MaxConns are Server's and Limit's (0:
	// DefaultIdleTimeout, DefaultMaxConns).
	IdleTimeout time.Duration
	MaxConns    int
}

// Proxy answers provider API requests from a Script. It is an
// http.Handler; serve it with net/http (Listen gives the loopback
// default; Server and Limit its limits). Safe for concurrent use; requests are numbered in the order
// they arrive.
type Proxy struct {
	script            Script
	maxBody           int64
	log               *wireLog
	up                *httputil.ReverseProxy
	seq               atomic.Int64
	model             *model
	bodyTimeout, idle time.Duration
	maxConns          int
	stopped           chan struct{} // closed by Stop: the faults' waits end
	stopOnce          sync.Once
	inflight          sync.WaitGroup // the requests being answered, until logged
	hop               string         // this proxy's mark on the requests it forwards (hopHeader)
	bodies            provider.BodyCache
	stalls            *stallWatch // the bodies being read
	date              dateCache   // the answers' Date header
}

// hopHeader marks a request this proxy forwarded: one that comes back
// with its own mark is a forwarding loop. (Canonical, so that looking it
// up allocates nothing.)
const hopHeader = "X-Retrysim-Hop"

// New returns a Proxy for opt. The script is checked (Script.Validate).
func New(opt Options) (*Proxy, error) {
	if err := opt.Script.Validate(); err != nil {
		return nil, err
	}
	p := &Proxy{script: opt.Script, maxBody: opt.MaxBodyBytes, log: newWireLog(opt.Log, opt.LogFailed), stopped: make(chan struct{}),
		bodyTimeout: opt.BodyTimeout, idle: opt.IdleTimeout, maxConns: opt.MaxConns}
	if p.maxBody <= 0 {
		p.maxBody = DefaultMaxBodyBytes
	}
	if p.bodyTimeout <= 0 {
		p.bodyTimeout = DefaultBodyTimeout
	}
	p.stalls = newStallWatch(p.bodyTimeout)
	if p.idle <= 0 {
		p.idle = DefaultIdleTimeout
	}
	if p.maxConns <= 0 {
		p.maxConns = DefaultMaxConns
	}
	if p.script.Text == "" {
		p.script.Text = DefaultText
	}
	if p.script.Fleet != nil {
		p.model = newModel(p.script.Fleet, time.Now())
	}
	if opt.Upstream != "" {
		var id [8]byte
		_, _ = crand.Read(id[:])
		p.hop = hex.EncodeToString(id[:])
		u, err := url.Parse(opt.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("upstream %q: not an http or https URL with a host", opt.Upstream)
		}
		p.up = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(u)
				pr.Out.Host = u.Host
				pr.Out.Header[hopHeader] = append(pr.Out.Header[hopHeader], p.hop)
			},
			FlushInterval: -1,
			Transport:     opt.Transport,
			// a body cut by a fault is the wire log's, not an error to print
			ErrorLog: log.New(io.Discard, "", 0),
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				rec := recordOf(r)
				if r.Context().Err() != nil { // the client left: it gets no answer
					if rec != nil {
						rec.Error = "client gone before the upstream answered"
					}
					return
				}
				if rec != nil {
					rec.Error = "upstream: " + err.Error()
					rec.Status = http.StatusBadGateway
				}
				w.WriteHeader(http.StatusBadGateway)
			},
			ModifyResponse: func(res *http.Response) error {
				if st := stateOf(res.Request); st != nil {
					st.rec.Status = res.StatusCode
					st.rec.Headers = hintHeaders(res.Header)
					st.rec.HeadersMs = msSince(st.start)
					res.Body = st.wrapUpstream(res.Body)
				}
				return nil
			},
		}
	}
	return p, nil
}

// Stop ends the waits of the faults (latency, slow body) of the requests
// in flight and to come, as a departed client ends them: a server being
// shut down calls it first, so that its requests end, logged as stopped.
func (p *Proxy) Stop() { p.stopOnce.Do(func() { close(p.stopped) }) }

// Close waits until the requests being answered are logged, then flushes
// the wire log. The server must have stopped handing it requests (its
// requests either end by themselves or when their contexts end: stop the
// server first, and Stop the faults' waits).
func (p *Proxy) Close() error {
	p.inflight.Wait()
	return p.log.close()
}

// errStopped is a wait's error when the proxy was stopped.
var errStopped = errors.New("proxy stopped")

// wait waits d, or until ctx is done (the client left: ctx.Err()) or the
// proxy is stopped (errStopped).
func (p *Proxy) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-p.stopped:
		return errStopped
	case <-t.C:
		return nil
	}
}

// waitError is what the log says of a wait ended during what: "client
// gone during the latency", "proxy stopped during the slow body".
func waitError(err error, during string) string {
	if errors.Is(err, errStopped) {
		return "proxy stopped " + during
	}
	return "client gone " + during
}

// Requests is the number of requests received so far.
func (p *Proxy) Requests() int { return int(p.seq.Load()) }

type stateKey struct{}

// reqState is what one request's handling shares with the upstream
// callbacks.
type reqState struct {
	rec    *Record
	start  time.Time
	api    API
	known  bool // api is served at the request's path
	faults []Fault
	wait   func(time.Duration) error // Proxy.wait on the request's context
	ctx    context.Context           // the request's
	body   bodyRead                  // its body being read (stallWatch)
	buf    []byte                    // its body's bytes, kept for a later request (recycle)
	out    []byte                    // its answer's body, kept likewise (BodyCache.HTTPReusing)
}

// handling is one request's record and state, in one allocation, used
// again by a later request once its line is written (handlings), its
// client headers' map as the last request left it (clientHeaders).
type handling struct {
	rec    Record
	st     reqState
	client map[string]string
}

var handlings = sync.Pool{New: func() any { return &handling{client: map[string]string{}} }}

// recycle gives h back to the pool once its line is written, unless an
// upstream saw its state (the request forwarded, its context holding
// h), or its map grew past the usual few headers.
func (h *handling) recycle() {
	if h.st.ctx != nil || len(h.client) > len(clientRetryHeaders) {
		return
	}
	h.rec, h.st = Record{}, reqState{buf: kept(h.st.buf), out: kept(h.st.out)}
	handlings.Put(h)
}

// maxKeptBody bounds each body buffer a recycled handling keeps.
const maxKeptBody = 64<<10 + 1

// kept is b emptied, when a recycled handling keeps it: unless large, so
// that the pool holds no more than a usual body each.
func kept(b []byte) []byte {
	if cap(b) > maxKeptBody {
		return nil
	}
	return b[:0]
}

// retryCountKey is x-stainless-retry-count as http.Header holds it.
const retryCountKey = "X-Stainless-Retry-Count"

func stateOf(r *http.Request) *reqState {
	if r == nil {
		return nil
	}
	st, _ := r.Context().Value(stateKey{}).(*reqState)
	return st
}

func recordOf(r *http.Request) *Record {
	if st := stateOf(r); st != nil {
		return st.rec
	}
	return nil
}

func msSince(t time.Time) float64 { return ms(time.Since(t)) }

// ms is d in milliseconds, as the wire log's times are.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// errCut is the error a cut stream ends with.
var errCut = errors.New("retrysim proxy: stream cut")

// ServeHTTP answers one request and logs it: it reads the request, plans
// its answer (plan: a function of the request, its number and its
// arrival), then writes the plan.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.inflight.Add(1)
	defer p.inflight.Done()
	start := time.Now()
	seq := int(p.seq.Add(1))
	h := handlings.Get().(*handling) // its record and state zero: new, or recycled
	rec, st := &h.rec, &h.st
	rec.Type, rec.Seq, rec.Timestamp, rec.Method, rec.Path = "request", seq, epochMs(start), r.Method, r.URL.Path
	st.rec, st.start = rec, start
	defer func() {
		rec.AnswerMs = msSince(start)
		rec.Client = clientHeaders(r.Header, h.client) // only the log reads them: after the answer
		p.log.write(rec)
		h.recycle()
	}()
	st.api, st.known = apiOf(r.URL.Path)
	rec.API = st.api
	if p.hop != "" && slices.Contains(r.Header[hopHeader], p.hop) {
		rec.Error = "forwarding loop: the request came back from the upstream"
		a := errorAnswer(http.StatusLoopDetected, "retrysim proxy: the upstream is this proxy itself (a forwarding loop); give the upstream another address")
		p.writeAnswer(w, r, st, &a, &provider.Request{API: st.api, Seq: seq})
		return
	}
	if !st.known || r.Method != http.MethodPost {
		p.other(w, r, st)
		return
	}
	body, req, ok := p.read(w, r, st)
	if !ok {
		return
	}
	var retryCount string // only the fault model reads it
	if p.model != nil {
		if vs := r.Header[retryCountKey]; len(vs) > 0 {
			retryCount = vs[0] // r.Header.Get's, without canonicalizing the name
		}
	}
	var pl plan
	p.plan(&pl, &req, seq, start, retryCount)
	if pl.release != nil {
		defer pl.release()
	}
	rec.Turn, rec.Fleet = pl.turn, pl.fleet
	st.faults = pl.faults
	if pl.forward {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	p.write(w, r, st, &pl)
}

// other answers a path the proxy does not serve, or a method other than
// POST: the upstream's answer, else 404 or 405 in the provider's shape.
func (p *Proxy) other(w http.ResponseWriter, r *http.Request, st *reqState) {
	if p.up != nil {
		st.rec.Upstream = true
		p.forward(w, r, st)
		return
	}
	if !st.known {
		st.api = Anthropic
		if len(r.URL.Path) > 0 && !strings.Contains(r.URL.Path, "messages") {
			st.api = OpenAIChat
		}
	}
	status := http.StatusNotFound
	msg := fmt.Sprintf("retrysim proxy: no endpoint %s %s (served: POST /v1/messages, /v1/chat/completions, /v1/responses)", r.Method, r.URL.Path)
	if st.known {
		status = http.StatusMethodNotAllowed
	}
	a := errorAnswer(status, msg)
	p.writeAnswer(w, r, st, &a, &provider.Request{API: st.api, Seq: st.rec.Seq})
}

// read reads and parses the request's body; when it cannot, it answers
// and returns false.
func (p *Proxy) read(w http.ResponseWriter, r *http.Request, st *reqState) ([]byte, provider.Request, bool) {
	rec := st.rec
	body, status, err := p.readBody(w, r, &st.body, st.start, st.buf)
	st.buf, rec.BytesIn = body, len(body)
	if err != nil {
		rec.Error = err.Error()
		if status == http.StatusRequestEntityTooLarge {
			rec.Error = fmt.Sprintf("request body over %d bytes", p.maxBody)
		}
		a := errorAnswer(status, err.Error())
		p.writeAnswer(w, r, st, &a, &provider.Request{API: st.api, Seq: rec.Seq})
		return nil, provider.Request{}, false
	}
	req, err := parseRequest(st.api, body)
	if err != nil {
		rec.Error = err.Error()
		a := errorAnswer(http.StatusBadRequest, err.Error())
		p.writeAnswer(w, r, st, &a, &provider.Request{API: st.api, Seq: rec.Seq})
		return nil, provider.Request{}, false
	}
	rec.Model, rec.Stream = req.Model, req.Stream
	return body, provider.Request{API: st.api, Model: req.Model, Stream: req.Stream, Tool: req.Tool, Text: p.script.Text, Seq: rec.Seq, Now: st.start.Unix()}, true
}

// plan is how one request is answered, decided before anything is
// written: the answer, the script's turn (from 1; 0 none), the faults,
// the fault model's kind for the log and release (to call when the
// answer has ended; nil when the model admitted no call), and whether
// the upstream answers instead.
type plan struct {
	req     provider.Request
	answer  provider.Answer
	turn    int
	faults  []Fault
	fleet   string
	release func()
	forward bool
}

// plan sets pl to the answer to request seq arriving at now (its retry count
// starts or continues a prompt of the fault model): the script's turn,
// else the fault model's answer, else the upstream's or a canned stop,
// with the script's faults for seq.
func (p *Proxy) plan(pl *plan, req *provider.Request, seq int, now time.Time, retryCount string) {
	pl.req, pl.answer, pl.faults = *req, provider.Answer{Stop: policy.StopReasonStop}, p.script.faultsFor(seq)
	turn, idx := p.script.turn(seq)
	pl.turn = idx
	switch {
	case turn != nil:
		pl.answer = turnAnswer(req.API, turn)
	case p.model != nil:
		pl.answer, pl.fleet, pl.release = p.model.answer(now, retryCount)
	}
	if hasFault(pl.faults, FaultDrop) {
		pl.answer = provider.Answer{Stop: policy.StopReasonAborted}
	}
	pl.forward = p.up != nil && pl.answer.Stop != policy.StopReasonError && !pl.answer.Dropped()
}

// write performs pl: the latency faults, then a dropped connection, the
// upstream's answer or the planned answer with its faults.
func (p *Proxy) write(w http.ResponseWriter, r *http.Request, st *reqState, pl *plan) {
	rec := st.rec
	for _, f := range pl.faults {
		if f.Kind == FaultLatency {
			addFault(rec, f)
			if err := p.wait(r.Context(), f.Delay); err != nil {
				rec.Error = waitError(err, "during the latency")
				return
			}
		}
	}
	switch {
	case pl.answer.Dropped():
		addFault(rec, Fault{Kind: FaultDrop})
		drop(w)
	case pl.forward: // a success turn, or no turn left: the real endpoint answers
		rec.Upstream = true
		p.forward(w, r, st)
	default:
		p.writeAnswer(w, r, st, &pl.answer, &pl.req)
	}
}

// writeAnswer writes a as HTTP for req, with the request's faults: a slow
// body, a cut, an error event.
func (p *Proxy) writeAnswer(w http.ResponseWriter, r *http.Request, st *reqState, a *provider.Answer, req *provider.Request) {
	rec := st.rec
	res := p.bodies.HTTPReusing(a, *req, st.out)
	if res.Body != nil {
		st.out = res.Body // written before the handler returns: a later request's (recycle)
	}
	h := w.Header()
	now := time.Now()
	h["Date"] = p.date.at(now)  // net/http's, formatted once a second (a script's date header replaces it)
	for i := range res.Header { // h.Set's result, each value a view of res.Header's: no allocation
		h[canonicalKey(res.Header[i][0])] = res.Header[i][1:2:2]
	}
	rec.Status, rec.Headers, rec.ErrorType = res.Status, a.Headers, res.ErrorType
	if a.Stop == policy.StopReasonError {
		rec.ErrorMessage = a.BodyMessage()
	}
	if res.Events != nil {
		p.writeStream(w, r, st, res.Events)
		return
	}
	w.WriteHeader(res.Status)
	rec.HeadersMs = ms(now.Sub(st.start)) // WriteHeader sends nothing: the headers go with the body
	b := res.Body
	cut := res.Status == http.StatusOK && hasFault(st.faults, FaultStreamCut)
	if cut {
		addFault(rec, Fault{Kind: FaultStreamCut})
		b = b[:len(b)/2]
	}
	p.writeBody(r.Context(), w, rec, b, slowOf(st.faults))
	// the answer, whole (its Content-Length set), goes to the client now,
	// not after the wire log line is encoded and written
	flush(w)
	if cut {
		panic(http.ErrAbortHandler)
	}
}

// writeStream writes the events of a successful stream with the faults
// that apply: a cut or an error event after Events events, a delay
// between events.
func (p *Proxy) writeStream(w http.ResponseWriter, r *http.Request, st *reqState, evs [][]byte) {
	rec := st.rec
	w.WriteHeader(http.StatusOK)
	flush(w)
	rec.HeadersMs = msSince(st.start)
	slow := slowOf(st.faults)
	if slow != nil {
		addFault(rec, *slow)
	}
	cutAt, errAt := -1, -1
	for _, f := range st.faults {
		switch f.Kind {
		case FaultStreamCut:
			cutAt = f.Events
		case FaultSSEError:
			errAt = f.Events
		}
	}
	for i := 0; ; i++ {
		if i == errAt {
			addFault(rec, Fault{Kind: FaultSSEError, Events: i})
			_, _ = w.Write(provider.ErrorEvent(st.api, i))
			flush(w)
			return
		}
		if i == cutAt {
			addFault(rec, Fault{Kind: FaultStreamCut, Events: i})
			flush(w)
			panic(http.ErrAbortHandler)
		}
		if i >= len(evs) {
			return
		}
		if slow != nil && i > 0 {
			if err := p.wait(r.Context(), slow.Delay); err != nil {
				rec.Error = waitError(err, "mid-stream")
				return
			}
		}
		if _, err := w.Write(evs[i]); err != nil {
			rec.Error = "client gone mid-stream"
			return
		}
		flush(w)
		rec.Events++
	}
}

// writeBody writes b, in chunks with a pause between them for a slow body.
func (p *Proxy) writeBody(ctx context.Context, w http.ResponseWriter, rec *Record, b []byte, slow *Fault) {
	if slow == nil {
		_, _ = w.Write(b)
		return
	}
	addFault(rec, *slow)
	size := slow.Chunk
	if size <= 0 {
		size = DefaultSlowChunk
	}
	for i := 0; i < len(b); i += size {
		if i > 0 {
			if err := p.wait(ctx, slow.Delay); err != nil {
				rec.Error = waitError(err, "during the slow body")
				return
			}
		}
		if _, err := w.Write(b[i:min(i+size, len(b))]); err != nil {
			return
		}
		flush(w)
	}
}

func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

// drop closes the connection without an answer.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// hintKeys are upstreamHintHeaders' names as a script gives them, by
// their names in http.Header's form.
var hintKeys = func() map[string]string {
	m := map[string]string{}
	for _, kk := range upstreamHintHeaders {
		m[kk[1]] = kk[0]
	}
	return m
}()

// canonicalKey is http.CanonicalHeaderKey(k), without allocating for the
// answers' usual header names: provider.Response's own, matched by a
// switch (a lookup costs more than writing the header), and
// upstreamHintHeaders, those a script gives most.
func canonicalKey(k string) string {
	switch k {
	case "content-type":
		return "Content-Type"
	case "content-length":
		return "Content-Length"
	case "request-id":
		return "Request-Id"
	case "x-request-id":
		return "X-Request-Id"
	case "cache-control":
		return "Cache-Control"
	}
	if c, ok := hintKeys[k]; ok {
		return c
	}
	return http.CanonicalHeaderKey(k)
}

func hasFault(fs []Fault, k FaultKind) bool {
	for _, f := range fs {
		if f.Kind == k {
			return true
		}
	}
	return false
}

func slowOf(fs []Fault) *Fault {
	for i := range fs {
		if fs[i].Kind == FaultSlowBody {
			return &fs[i]
		}
	}
	return nil
}
