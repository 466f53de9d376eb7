package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/provider"
)

// forward sends the request upstream; the stream faults apply to its answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, st *reqState) {
	if hasFault(st.faults, FaultStreamCut) || hasFault(st.faults, FaultSSEError) {
		r.Header.Del("Accept-Encoding") // events are counted on the plain bytes
	}
	st.wait = func(d time.Duration) error { return p.wait(r.Context(), d) }
	st.ctx = r.Context()
	r = r.WithContext(context.WithValue(r.Context(), stateKey{}, st))
	p.up.ServeHTTP(w, r)
}

// wrapUpstream applies the stream faults and the slow body to an
// upstream answer's body.
func (st *reqState) wrapUpstream(body io.ReadCloser) io.ReadCloser {
	c := &eventCutter{ReadCloser: body, api: st.api, rec: st.rec, cutAt: -1, errAt: -1, wait: st.wait, ctx: st.ctx,
		keepError: st.rec.Status >= 400}
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
	wait         func(time.Duration) error // the slow body's pause
	ctx          context.Context           // the request's
	bytes        int                       // read from the upstream
	keepError    bool                      // an error answer: its body is kept (errBody) for the log
	errBody      []byte
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
			if err := c.wait(c.slow); err != nil {
				c.rec.Error = waitError(err, "during the slow body")
				return 0, err
			}
		}
		c.reads++
		n, err := c.ReadCloser.Read(c.buf[:])
		c.bytes += n
		if c.keepError {
			c.keepErrorBody(c.buf[:n], err)
		}
		if err != nil && err != io.EOF && c.rec.Error == "" {
			if c.ctx.Err() != nil {
				c.rec.Error = "client gone mid-answer"
			} else {
				c.rec.Error = fmt.Sprintf("upstream: the answer was cut after %d bytes: %v", c.bytes, err)
			}
		}
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

// maxErrorBody bounds the error body kept of an upstream's answer.
const maxErrorBody = 64 << 10

// keepErrorBody keeps an upstream error answer's body and, at its end,
// logs its error type and message (Anthropic's and OpenAI's bodies both
// carry {"error":{"type","message"}}); a body too large or not that JSON
// (compressed, say) logs none.
func (c *eventCutter) keepErrorBody(b []byte, err error) {
	if len(c.errBody)+len(b) > maxErrorBody {
		c.keepError, c.errBody = false, nil
		return
	}
	c.errBody = append(c.errBody, b...)
	if err != io.EOF {
		return
	}
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(c.errBody, &body) == nil {
		c.rec.ErrorType, c.rec.ErrorMessage = clip(body.Error.Type), clip(body.Error.Message)
	}
	c.keepError, c.errBody = false, nil
}

// clip shortens s to at most MaxNameBytes*4 bytes for the log.
func clip(s string) string {
	if max := MaxNameBytes * 4; len(s) > max {
		return strings.ToValidUTF8(s[:max], "") + "..."
	}
	return s
}

// upstreamHintHeaders are the headers of an upstream's answer the wire log
// keeps: those the retry layers read a wait or a decision from (package
// policy's hints: retry-after-ms, retry-after, x-ratelimit-reset-ms,
// x-ratelimit-reset, x-should-retry).
// Each is given canonical, as http.Header holds it, then as logged.
var upstreamHintHeaders = [][2]string{{"Retry-After-Ms", "retry-after-ms"}, {"Retry-After", "retry-after"},
	{"X-Ratelimit-Reset-Ms", "x-ratelimit-reset-ms"}, {"X-Ratelimit-Reset", "x-ratelimit-reset"}, {"X-Should-Retry", "x-should-retry"}}

// hintHeaders are h's upstreamHintHeaders by lower-case name (nil: none).
func hintHeaders(h http.Header) map[string]string {
	var m map[string]string
	for _, kk := range upstreamHintHeaders {
		if vs := h[kk[0]]; len(vs) > 0 && vs[0] != "" {
			k, v := kk[1], vs[0]
			if m == nil {
				m = map[string]string{}
			}
			m[k] = clip(v)
		}
	}
	return m
}

// stop ends the body at the current count: an error event, or a cut.
func (c *eventCutter) stop() {
	if c.seen == c.errAt {
		addFault(c.rec, Fault{Kind: FaultSSEError, Events: c.seen})
		c.out = append(c.out, provider.ErrorEvent(c.api, c.seen)...)
		c.end = io.EOF
		return
	}
	addFault(c.rec, Fault{Kind: FaultStreamCut, Events: c.seen})
	c.end = errCut
}

// ForwardsToItself reports whether upstream names addr, the address a
// proxy listens on: the same port (80 or 443 when the URL gives none), and
// addr's IP, or "localhost" for a loopback addr, or for an addr on every
// interface a loopback or unspecified address or "localhost". Such an
// upstream would send every request back to the proxy.
func ForwardsToItself(upstream string, addr net.Addr) bool {
	u, err := url.Parse(upstream)
	ta, ok := addr.(*net.TCPAddr)
	if err != nil || !ok {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if port != strconv.Itoa(ta.Port) {
		return false
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	switch {
	case ip != nil && ip.Equal(ta.IP):
		return true
	case ta.IP.IsUnspecified():
		return strings.EqualFold(host, "localhost") || (ip != nil && (ip.IsLoopback() || ip.IsUnspecified()))
	}
	return strings.EqualFold(host, "localhost") && ta.IP.IsLoopback()
}
