package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
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
	// MaxBodyBytes bounds a request's body (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
}

// Proxy answers provider API requests from a Script. It is an
// http.Handler; serve it with net/http (Listen gives the loopback
// default). Safe for concurrent use; requests are numbered in the order
// they arrive.
type Proxy struct {
	script  Script
	maxBody int64
	log     *wireLog
	up      *httputil.ReverseProxy
	seq     atomic.Int64
	model   *model
}

// New returns a Proxy for opt. The script is checked (Script.Validate).
func New(opt Options) (*Proxy, error) {
	if err := opt.Script.Validate(); err != nil {
		return nil, err
	}
	p := &Proxy{script: opt.Script, maxBody: opt.MaxBodyBytes, log: newWireLog(opt.Log)}
	if p.maxBody <= 0 {
		p.maxBody = DefaultMaxBodyBytes
	}
	if p.script.Text == "" {
		p.script.Text = DefaultText
	}
	if p.script.Fleet != nil {
		p.model = newModel(p.script.Fleet, time.Now())
	}
	if opt.Upstream != "" {
		u, err := url.Parse(opt.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("upstream %q: not an http or https URL with a host", opt.Upstream)
		}
		p.up = &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(u)
				pr.Out.Host = u.Host
			},
			FlushInterval: -1,
			Transport:     opt.Transport,
			// a body cut by a fault is the wire log's, not an error to print
			ErrorLog: log.New(io.Discard, "", 0),
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				rec := recordOf(r)
				if rec != nil {
					rec.Error = "upstream: " + err.Error()
					rec.Status = http.StatusBadGateway
				}
				w.WriteHeader(http.StatusBadGateway)
			},
			ModifyResponse: func(res *http.Response) error {
				if st := stateOf(res.Request); st != nil {
					st.rec.Status = res.StatusCode
					st.rec.HeadersMs = msSince(st.start)
					res.Body = st.wrapUpstream(res.Body)
				}
				return nil
			},
		}
	}
	return p, nil
}

// Close flushes the wire log. The proxy must not serve requests after it.
func (p *Proxy) Close() error { return p.log.close() }

// Requests is the number of requests received so far.
func (p *Proxy) Requests() int { return int(p.seq.Load()) }

type stateKey struct{}

// reqState is what one request's handling shares with the upstream
// callbacks.
type reqState struct {
	rec    *Record
	start  time.Time
	api    API
	faults []Fault
}

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

func msSince(t time.Time) float64 { return float64(time.Since(t)) / float64(time.Millisecond) }

// errCut is the error a cut stream ends with.
var errCut = errors.New("retrysim proxy: stream cut")

// ServeHTTP answers one request and logs it.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	seq := int(p.seq.Add(1))
	rec := &Record{Type: "request", Seq: seq, Timestamp: epochMs(start), Method: r.Method, Path: r.URL.Path, Client: clientHeaders(r.Header)}
	defer func() {
		rec.AnswerMs = msSince(start)
		p.log.write(rec)
	}()
	api, known := apiOf(r.URL.Path)
	rec.API = api
	if !known || r.Method != http.MethodPost {
		if p.up != nil {
			rec.Upstream = true
			p.forward(w, r, &reqState{rec: rec, start: start, api: api}, nil)
			return
		}
		if !known {
			api = Anthropic
			if len(r.URL.Path) > 0 && !bytes.Contains([]byte(r.URL.Path), []byte("messages")) {
				api = OpenAIChat
			}
		}
		status := http.StatusNotFound
		msg := fmt.Sprintf("retrysim proxy: no endpoint %s %s (served: POST /v1/messages, /v1/chat/completions, /v1/responses)", r.Method, r.URL.Path)
		if known {
			status = http.StatusMethodNotAllowed
		}
		p.writeError(w, r, rec, start, api, status, nil, msg, nil)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, p.maxBody))
	rec.BytesIn = len(body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			rec.Error = fmt.Sprintf("request body over %d bytes", p.maxBody)
			p.writeError(w, r, rec, start, api, http.StatusRequestEntityTooLarge, nil,
				fmt.Sprintf("request body too large: the limit is %d bytes", p.maxBody), nil)
			return
		}
		rec.Error = "reading the request body: " + err.Error()
		return
	}
	req, err := parseRequest(api, body)
	if err != nil {
		rec.Error = err.Error()
		p.writeError(w, r, rec, start, api, http.StatusBadRequest, nil, err.Error(), nil)
		return
	}
	rec.Model, rec.Stream = req.Model, req.Stream
	turn, idx := p.script.turn(seq)
	rec.Turn = idx
	faults := p.script.faultsFor(seq)
	st := &reqState{rec: rec, start: start, api: api, faults: faults}

	for _, f := range faults {
		if f.Kind == FaultLatency {
			addFault(rec, f)
			if sleep(r.Context(), f.Delay) != nil {
				rec.Error = "client gone during the latency"
				return
			}
		}
	}
	if turn == nil && p.model != nil {
		m, kind, release := p.model.answer(time.Now(), r.Header.Get("x-stainless-retry-count"))
		if release != nil {
			defer release()
		}
		rec.Fleet = kind
		switch {
		case m.StopReason == policy.StopReasonError && m.Status == 0: // a connection error
			turn = &scenario.Turn{StopReason: policy.StopReasonAborted}
		case m.StopReason == policy.StopReasonError:
			turn = &scenario.Turn{StopReason: m.StopReason, Status: m.Status, Headers: m.Headers, ErrorMessage: providerMessage(m.ErrorMessage, m.Status)}
		default:
			turn = &scenario.Turn{StopReason: m.StopReason}
		}
	}
	if hasFault(faults, FaultDrop) || (turn != nil && turn.StopReason == policy.StopReasonAborted) {
		addFault(rec, Fault{Kind: FaultDrop})
		drop(w)
		return
	}
	if turn != nil && turn.StopReason == policy.StopReasonError {
		status := turn.Status
		if status == 0 {
			status = defaultStatus(turn.ErrorMessage)
		}
		msg := turn.ErrorMessage
		if msg == "" {
			msg = statusText(api, status)
		}
		p.writeError(w, r, rec, start, api, status, turn.Headers, msg, faults)
		return
	}
	if p.up != nil { // a success turn, or no turn left: the real endpoint answers
		rec.Upstream = true
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		p.forward(w, r, st, faults)
		return
	}
	kind := "stop"
	var headers map[string]string
	if turn != nil {
		kind = string(turn.StopReason)
		headers = turn.Headers
	}
	id := fmt.Sprintf("retrysim%06d", seq)
	s := &success{api: api, id: id, model: req.Model, kind: kind, text: p.script.Text, tool: req.Tool, input: 12, output: 8, now: start.Unix()}
	if turn != nil && turn.Usage.Input > 0 {
		s.input = int(turn.Usage.Input)
	}
	h := w.Header()
	for k, v := range headers {
		h.Set(k, v)
	}
	h.Set(requestIDHeader(api), "req_"+id)
	rec.Status = http.StatusOK
	rec.Headers = headers
	if req.Stream {
		h.Set("content-type", "text/event-stream; charset=utf-8")
		h.Set("cache-control", "no-cache")
		p.writeStream(w, r, st, s.events(), faults)
		return
	}
	h.Set("content-type", "application/json")
	b := s.body()
	h.Set("content-length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	rec.HeadersMs = msSince(start)
	cut := hasFault(faults, FaultStreamCut)
	if cut {
		addFault(rec, Fault{Kind: FaultStreamCut})
		b = b[:len(b)/2]
	}
	writeBody(r.Context(), w, rec, b, slowOf(faults))
	if cut {
		flush(w)
		panic(http.ErrAbortHandler)
	}
}

// writeError writes the provider's error response.
func (p *Proxy) writeError(w http.ResponseWriter, r *http.Request, rec *Record, start time.Time, api API, status int, headers map[string]string, msg string, faults []Fault) {
	id := fmt.Sprintf("req_retrysim%06d", rec.Seq)
	h := w.Header()
	for k, v := range headers {
		h.Set(k, v)
	}
	typ := errorType(api, status)
	b := errorBody(api, typ, msg, id)
	h.Set(requestIDHeader(api), id)
	h.Set("content-type", "application/json")
	h.Set("content-length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	rec.Status, rec.Headers, rec.ErrorType, rec.ErrorMessage = status, headers, typ, msg
	rec.HeadersMs = msSince(start)
	writeBody(r.Context(), w, rec, b, slowOf(faults))
}

// writeStream writes the events of a successful stream with the faults
// that apply: a cut or an error event after Events events, a delay
// between events.
func (p *Proxy) writeStream(w http.ResponseWriter, r *http.Request, st *reqState, evs []event, faults []Fault) {
	rec := st.rec
	w.WriteHeader(http.StatusOK)
	flush(w)
	rec.HeadersMs = msSince(st.start)
	slow := slowOf(faults)
	if slow != nil {
		addFault(rec, *slow)
	}
	cutAt, errAt := -1, -1
	for _, f := range faults {
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
			_, _ = w.Write(sseErrorEvent(st.api, i).bytes())
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
		if slow != nil && i > 0 && sleep(r.Context(), slow.Delay) != nil {
			rec.Error = "client gone mid-stream"
			return
		}
		if _, err := w.Write(evs[i].bytes()); err != nil {
			rec.Error = "client gone mid-stream"
			return
		}
		flush(w)
		rec.Events++
	}
}

// forward sends the request upstream; the stream faults apply to its answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, st *reqState, faults []Fault) {
	if hasFault(faults, FaultStreamCut) || hasFault(faults, FaultSSEError) {
		r.Header.Del("Accept-Encoding") // events are counted on the plain bytes
	}
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	p.up.ServeHTTP(w, r)
}

// wrapUpstream applies the stream faults and the slow body to an
// upstream answer's body.
func (st *reqState) wrapUpstream(body io.ReadCloser) io.ReadCloser {
	c := &eventCutter{ReadCloser: body, api: st.api, rec: st.rec, cutAt: -1, errAt: -1}
	for _, f := range st.faults {
		switch f.Kind {
		case FaultStreamCut:
			c.cutAt = f.Events
		case FaultSSEError:
			c.errAt = f.Events
		case FaultSlowBody:
			c.slow = f.Delay
			addFault(st.rec, f)
		}
	}
	return c
}

// eventCutter passes an upstream body through, counting server-sent
// events (a blank line ends one), cutting it or appending an error event
// after the given count, and pausing between reads for a slow body.
type eventCutter struct {
	io.ReadCloser
	api          API
	rec          *Record
	cutAt, errAt int
	slow         time.Duration
	seen         int
	lastNL       bool
	out          []byte
	buf          [16 << 10]byte
	end          error
	reads        int
}

func (c *eventCutter) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.end != nil {
			return 0, c.end
		}
		if c.slow > 0 && c.reads > 0 {
			time.Sleep(c.slow)
		}
		c.reads++
		n, err := c.ReadCloser.Read(c.buf[:])
		chunk := c.buf[:n]
		c.out = append(c.out[:0], chunk...)
		if c.cutAt == 0 || c.errAt == 0 {
			c.out = c.out[:0]
			c.stop()
			continue
		}
	scan:
		for i, b := range chunk {
			switch b {
			case '\n':
				if c.lastNL {
					c.seen++
					c.rec.Events = c.seen
					if c.seen == c.cutAt || c.seen == c.errAt {
						c.out = c.out[:i+1]
						c.stop()
						break scan
					}
				}
				c.lastNL = true
				continue
			case '\r':
				continue
			}
			c.lastNL = false
		}
		if c.end == nil && err != nil {
			c.end = err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// stop ends the body at the current count: an error event, or a cut.
func (c *eventCutter) stop() {
	if c.seen == c.errAt {
		addFault(c.rec, Fault{Kind: FaultSSEError, Events: c.seen})
		c.out = append(c.out, sseErrorEvent(c.api, c.seen).bytes()...)
		c.end = io.EOF
		return
	}
	addFault(c.rec, Fault{Kind: FaultStreamCut, Events: c.seen})
	c.end = errCut
}

// writeBody writes b, in chunks with a pause between them for a slow body.
func writeBody(ctx context.Context, w http.ResponseWriter, rec *Record, b []byte, slow *Fault) {
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
		if i > 0 && sleep(ctx, slow.Delay) != nil {
			rec.Error = "client gone during the slow body"
			return
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

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
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
