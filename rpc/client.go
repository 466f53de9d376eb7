package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/ohmypi/retryfsm/internal/lines"
)

// DefaultTimeout bounds a call whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// closeGrace is how long Close waits for the server to end on its own
// after its input is closed, before killing it (or closing the stream).
const closeGrace = 5 * time.Second

// maxResponseLine bounds a line read from the server.
const maxResponseLine = 16 << 20

// Errors a call can return (test with errors.Is). A command that the
// server answered with success:false gives a *ResponseError instead.
var (
	// ErrTimeout: no response before the call's deadline.
	ErrTimeout = errors.New("rpc: timeout waiting for the response")
	// ErrServerExited: the server's output ended (the process exited)
	// before the response came.
	ErrServerExited = errors.New("rpc: the server exited")
	// ErrClosed: the client was closed.
	ErrClosed = errors.New("rpc: client closed")
	// ErrNotSent: the call gave up (or the input was closed) before its
	// line was handed to the writer, so the server never sees the
	// command. It comes with the reason (ErrTimeout, context.Canceled,
	// ErrClosed, ...). A failed call without it may have reached the
	// server, which may still act on it.
	ErrNotSent = errors.New("rpc: the command was not sent")
)

// errInputClosed is the reason of a call made after CloseInput.
var errInputClosed = errors.New("rpc: the server's input was closed (CloseInput)")

// ResponseError is a response with success:false.
type ResponseError struct {
	ID      string // the request id ("req_<n>")
	Command string // the response's "command"
	Message string // the response's "error"
}

// Error implements error.
func (e *ResponseError) Error() string {
	return fmt.Sprintf("rpc: %s (id %s) failed: %s", e.Command, e.ID, e.Message)
}

// Response is one response line.
type Response struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"` // always "response"
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    json.RawMessage `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Event is one line from the server that answers no call of this client:
// a session event ("agent_start", "message_end", "auto_retry_start", ...)
// or a response to a line sent with SendRaw.
type Event struct {
	Type string          // the line's "type"
	Raw  json.RawMessage // the whole line, without its newline
}

// Decode unmarshals the event's line into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Raw, v) }

// Message is a message as the events carry it: message_end's "message" (an
// assistant message) and each of agent_end's "messages" (the run's: a
// prompt's user message, then its assistant messages). Decode an event
// into struct{ Message Message } or struct{ Messages []Message }.
type Message struct {
	Role         string    `json:"role"`                   // "user" or "assistant"
	StopReason   string    `json:"stopReason,omitempty"`   // assistant
	ErrorMessage string    `json:"errorMessage,omitempty"` // assistant, on an error or abort
	Content      []Content `json:"content"`
	API          string    `json:"api,omitempty"`      // assistant
	Provider     string    `json:"provider,omitempty"` // assistant
	Model        string    `json:"model,omitempty"`    // assistant
	Usage        *Usage    `json:"usage,omitempty"`    // assistant
	Timestamp    int64     `json:"timestamp"`          // Unix ms on the session's clock
}

// Content is a block of a message's content.
type Content struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// Usage is an assistant message's token usage (the simulator reports the
// reply's input and cacheRead; the rest is 0).
type Usage struct {
	Input       int64 `json:"input"`
	Output      int64 `json:"output"`
	CacheRead   int64 `json:"cacheRead"`
	CacheWrite  int64 `json:"cacheWrite"`
	TotalTokens int64 `json:"totalTokens"`
	Cost        Cost  `json:"cost"`
}

// Cost is a usage's cost.
type Cost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// Client speaks the JSON lines protocol to one server. Its methods are
// safe for concurrent use; calls are answered in the order the server
// handles them.
//
// One goroutine writes the lines, one at a time, in the order the calls
// hand them over. A call waits for its turn, for its write and for its
// response within its context's deadline (or the client's timeout when
// the context has none), so a server that stops reading its input blocks
// no call past its own deadline. A call that gives up before the writer
// took its line never sends it (its error matches ErrNotSent); the
// response to a call that gave up after its line was taken is dropped.
//
// Events arrive in order on Events, and are queued without bound, so a
// slow reader never blocks responses. The queue holds what the server
// wrote and the caller has not received yet; the server writes events
// only because of commands (a prompt and the retries it causes, an
// advance, an abort). A caller bounds the queue by receiving from Events
// as it goes (in a goroutine of its own if need be, dropping what it does
// not need) or by waiting for each prompt_resolved before the next prompt
// or advance, which keeps at most one prompt's events queued.
type Client struct {
	w      io.Writer
	r      io.Reader
	cmd    *exec.Cmd   // nil for NewClient
	stderr *tailBuffer // nil for NewClient

	mu        sync.Mutex
	nextID    int
	pending   map[string]chan Response
	gaveUp    map[string]bool // sent calls that gave up: their responses are dropped
	endErr    error           // set when the server's output has ended
	closed    bool
	timeout   time.Duration
	inputDone bool

	lines    chan *outLine // hands a line to the writer (unbuffered)
	inputEnd chan struct{} // closed by CloseInput: the writer stops
	writeEnd chan struct{} // closed when the writer has finished

	events  chan Event
	queue   []Event
	qclosed bool
	qwake   chan struct{} // signalled when the queue grows or closes
	stop    chan struct{} // closed by Close: stop delivering events
	readEnd chan struct{} // closed when the reader has finished
	pumpEnd chan struct{} // closed when the event pump has finished
	waitErr error         // the process's exit status
}

// Start spawns "path rpc args..." (a retrysim binary) and returns a client
// speaking to it over its stdin and stdout; its stderr is kept (the last
// 4 KiB) for error messages. The process is killed when ctx is done.
// Close it with Close.
func Start(ctx context.Context, path string, args ...string) (*Client, error) {
	cmd := exec.CommandContext(ctx, path, append([]string{"rpc"}, args...)...)
	cmd.WaitDelay = closeGrace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	tail := &tailBuffer{max: 4 << 10}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("rpc: starting %s: %w", path, err)
	}
	c := newClient(stdout, stdin)
	c.cmd, c.stderr = cmd, tail
	c.run()
	return c, nil
}

// NewClient returns a client speaking to a server that reads w and writes
// r. Close closes w (when it is an io.Closer) and, if r does not end within
// a few seconds, r (when it is an io.Closer).
func NewClient(r io.Reader, w io.Writer) *Client {
	c := newClient(r, w)
	c.run()
	return c
}

func newClient(r io.Reader, w io.Writer) *Client {
	return &Client{
		r: r, w: w,
		pending: make(map[string]chan Response),
		gaveUp:  make(map[string]bool),
		timeout: DefaultTimeout,
		events:  make(chan Event),
		qwake:   make(chan struct{}, 1),
		stop:    make(chan struct{}),
		readEnd: make(chan struct{}),
		pumpEnd: make(chan struct{}),

		lines:    make(chan *outLine),
		inputEnd: make(chan struct{}),
		writeEnd: make(chan struct{}),
	}
}

func (c *Client) run() {
	go c.read()
	go c.pump()
	go c.write()
}

// SetTimeout changes the timeout of calls whose context has no deadline,
// and of SendRaw (DefaultTimeout at first).
func (c *Client) SetTimeout(d time.Duration) {
	c.mu.Lock()
	c.timeout = d
	c.mu.Unlock()
}

// Events returns the channel of events, in the order the server wrote
// them. It is closed after the server's output ends and every event was
// received, or when Close is called (undelivered events are dropped).
func (c *Client) Events() <-chan Event { return c.events }

// Advance moves the virtual time of a --virtual server forward by d
// (whole milliseconds; a fraction is dropped), firing every event due, and
// returns the new virtual time.
func (c *Client) Advance(ctx context.Context, d time.Duration) (time.Duration, error) {
	if d < 0 {
		return 0, fmt.Errorf("rpc: advance: negative duration %v", d)
	}
	resp, err := c.Call(ctx, "advance", map[string]any{"ms": d.Milliseconds()})
	if err != nil {
		return 0, err
	}
	var data struct {
		T *int64 `json:"t"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil || data.T == nil {
		return 0, fmt.Errorf("rpc: advance (id %s): response without t: %s", resp.ID, resp.Data)
	}
	return time.Duration(*data.T) * time.Millisecond, nil
}

// Call sends the command typ with the given fields and waits for its
// response. The wire form is {"type":typ, fields..., "id":"req_<n>"}, as
// the original client writes it. A response with success:false is
// returned with a *ResponseError.
//
// Call returns by ctx's deadline (by the client's timeout when ctx has
// none; see SetTimeout), whether or not the server reads its input. An
// error matching ErrNotSent means the command was never written and the
// server will not see it; any other error after the line was handed to
// the writer means the server may have received it, or may still
// receive it, and its late response is dropped.
func (c *Client) Call(ctx context.Context, typ string, fields map[string]any) (Response, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return Response{}, fmt.Errorf("%w (calling %s)", ErrClosed, typ)
	}
	if c.endErr != nil {
		err := c.endErr
		c.mu.Unlock()
		return Response{}, fmt.Errorf("rpc: %s: %w", typ, err)
	}
	c.nextID++
	id := "req_" + strconv.Itoa(c.nextID)
	if c.inputDone {
		c.mu.Unlock()
		return Response{}, fmt.Errorf("rpc: %s (id %s): %w: %w", typ, id, ErrNotSent, errInputClosed)
	}
	ch := make(chan Response, 1)
	c.pending[id] = ch
	timeout := c.timeout
	c.mu.Unlock()

	line, err := encodeCommand(typ, fields, id)
	if err != nil {
		c.forget(id, false)
		return Response{}, fmt.Errorf("rpc: sending %s (id %s): %w", typ, id, err)
	}

	after := ""
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		after = " after " + timeout.String()
	}
	// failed is the error of a call that gave up at the given stage.
	failed := func(err error, stage sendStage) error {
		c.forget(id, stage >= stageTaken)
		var head error
		if errors.Is(err, context.DeadlineExceeded) {
			head = fmt.Errorf("%w to %s (id %s)%s (%w)", ErrTimeout, typ, id, after, err)
		} else {
			head = fmt.Errorf("rpc: waiting for the response to %s (id %s): %w", typ, id, err)
		}
		return stage.explain(head, c.stderrTail())
	}
	if err := ctx.Err(); err != nil {
		return Response{}, failed(err, stageNotSent)
	}
	out, err := c.send(ctx, line)
	if ctxErr := ctx.Err(); err != nil && err == ctxErr {
		return Response{}, failed(err, stageWriterBusy)
	}
	if err != nil {
		c.forget(id, false)
		return Response{}, fmt.Errorf("rpc: %s (id %s): %w", typ, id, err)
	}
	written := out.done
	for {
		select {
		case err := <-written:
			if err != nil {
				c.forget(id, !errors.Is(err, ErrNotSent))
				return Response{}, fmt.Errorf("rpc: sending %s (id %s): %w", typ, id, err)
			}
			written = nil // wait for the response alone
		case resp, ok := <-ch:
			if !ok {
				c.mu.Lock()
				err := c.endErr
				c.mu.Unlock()
				if err == nil {
					err = ErrClosed
				}
				return Response{}, fmt.Errorf("rpc: no response to %s (id %s): %w", typ, id, err)
			}
			if !resp.Success {
				return resp, &ResponseError{ID: id, Command: resp.Command, Message: resp.Error}
			}
			return resp, nil
		case <-ctx.Done():
			if written != nil {
				return Response{}, failed(ctx.Err(), stageTaken)
			}
			return Response{}, failed(ctx.Err(), stageWritten)
		}
	}
}

// SendRaw writes one line as it is (a newline is added), for testing how
// the server handles malformed input. Its response, if any, arrives on
// Events. It returns once the line is written, or with ErrTimeout after
// the client's timeout (see SetTimeout); an error matching ErrNotSent
// means the line was never written.
func (c *Client) SendRaw(line []byte) error {
	c.mu.Lock()
	closed, inputDone, timeout := c.closed, c.inputDone, c.timeout
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if inputDone {
		return fmt.Errorf("rpc: raw line: %w: %w", ErrNotSent, errInputClosed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := c.send(ctx, append(bytes.Clone(line), '\n'))
	if ctxErr := ctx.Err(); err != nil && err == ctxErr {
		return stageWriterBusy.explain(fmt.Errorf("%w: a raw line after %v (%w)", ErrTimeout, timeout, err), "")
	}
	if err != nil {
		return fmt.Errorf("rpc: raw line: %w", err)
	}
	select {
	case err := <-out.done:
		if err != nil {
			return fmt.Errorf("rpc: sending a raw line: %w", err)
		}
		return nil
	case <-ctx.Done():
		return stageTaken.explain(fmt.Errorf("%w: a raw line after %v (%w)", ErrTimeout, timeout, ctx.Err()), "")
	}
}

// sendStage is how far a call's line went before the call gave up.
type sendStage int

const (
	stageNotSent    sendStage = iota // the call gave up before handing its line over
	stageWriterBusy                  // the writer was busy until the call gave up
	stageTaken                       // the writer took the line; its write was unfinished
	stageWritten                     // the line was written
)

// explain adds to err what became of the line, then tail.
func (s sendStage) explain(err error, tail string) error {
	switch s {
	case stageNotSent:
		return fmt.Errorf("%w; %w%s", err, ErrNotSent, tail)
	case stageWriterBusy:
		return fmt.Errorf("%w; %w: an earlier command was still being written (the server is not reading its input)%s", err, ErrNotSent, tail)
	case stageTaken:
		return fmt.Errorf("%w; the command was still being written (the server is not reading its input) and may yet reach the server%s", err, tail)
	}
	return fmt.Errorf("%w%s", err, tail)
}

// outLine is a line handed to the writer; done receives the result of its
// write.
type outLine struct {
	b    []byte
	done chan error // buffered
}

// send hands b to the writer, or fails without handing it over: the
// writer takes a line only when it is idle, so a line not taken by the
// time ctx is done is never written.
func (c *Client) send(ctx context.Context, b []byte) (*outLine, error) {
	out := &outLine{b: b, done: make(chan error, 1)}
	select {
	case c.lines <- out:
		return out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.inputEnd:
		return nil, c.inputClosedErr()
	case <-c.readEnd:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, fmt.Errorf("%w: %w", ErrNotSent, c.endErr)
	}
}

// inputClosedErr is the error of a line not written because the input
// was closed.
func (c *Client) inputClosedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("%w: %w", ErrNotSent, ErrClosed)
	}
	return fmt.Errorf("%w: %w", ErrNotSent, errInputClosed)
}

// write writes the lines handed over by send, one at a time, until
// CloseInput. A write blocked by a server that does not read ends when
// CloseInput closes the writer (for a process, or when it exits).
func (c *Client) write() {
	defer close(c.writeEnd)
	for {
		select {
		case out := <-c.lines:
			select {
			case <-c.inputEnd:
				out.done <- c.inputClosedErr()
				continue
			default:
			}
			_, err := c.w.Write(out.b)
			out.done <- err
		case <-c.inputEnd:
			return
		}
	}
}

// forget removes the call id; sent tells whether its line was handed to
// the writer, in which case a response still to come is dropped.
func (c *Client) forget(id string, sent bool) {
	c.mu.Lock()
	if _, ok := c.pending[id]; ok {
		delete(c.pending, id)
		if sent && c.endErr == nil {
			c.gaveUp[id] = true
		}
	}
	c.mu.Unlock()
}

// encodeCommand writes {"type":typ,<fields, sorted by key>,"id":id}.
func encodeCommand(typ string, fields map[string]any, id string) ([]byte, error) {
	t, err := json.Marshal(typ)
	if err != nil {
		return nil, err
	}
	b := append([]byte(`{"type":`), t...)
	if len(fields) > 0 {
		f, err := json.Marshal(fields)
		if err != nil {
			return nil, err
		}
		b = append(b, ',')
		b = append(b, f[1:len(f)-1]...)
	}
	b = append(b, `,"id":`...)
	b = strconv.AppendQuote(b, id)
	return append(b, '}', '\n'), nil
}

// read reads the server's lines: responses go to their calls, the rest to
// the event queue.
func (c *Client) read() {
	defer close(c.readEnd)
	lr := lines.NewReader(c.r, maxResponseLine)
	var readErr error
	for {
		line, tooLong, err := lr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		if tooLong || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		_ = json.Unmarshal(line, &head)
		if head.Type == "response" && head.ID != "" {
			c.mu.Lock()
			ch, ok := c.pending[head.ID]
			if ok {
				delete(c.pending, head.ID)
			}
			late := c.gaveUp[head.ID]
			delete(c.gaveUp, head.ID)
			c.mu.Unlock()
			if late { // its call gave up: dropped
				continue
			}
			if ok {
				var resp Response
				if err := json.Unmarshal(line, &resp); err != nil {
					resp = Response{ID: head.ID, Type: "response", Error: "undecodable response: " + err.Error()}
				}
				ch <- resp // buffered, one response per call
				continue
			}
		}
		c.enqueue(Event{Type: head.Type, Raw: bytes.Clone(line)})
	}
	// The output ended: the process is gone (or going).
	var detail string
	if c.cmd != nil {
		werr := c.cmd.Wait()
		if werr != nil {
			detail = " (" + werr.Error() + ")"
		}
		c.mu.Lock()
		c.waitErr = werr
		c.mu.Unlock()
	}
	if readErr != nil {
		detail += " (reading its output: " + readErr.Error() + ")"
	}
	c.mu.Lock()
	c.endErr = fmt.Errorf("%w%s%s", ErrServerExited, detail, c.stderrTail())
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	clear(c.gaveUp)
	c.qclosed = true
	c.mu.Unlock()
	c.signal()
}

func (c *Client) enqueue(ev Event) {
	c.mu.Lock()
	c.queue = append(c.queue, ev)
	c.mu.Unlock()
	c.signal()
}

func (c *Client) signal() {
	select {
	case c.qwake <- struct{}{}:
	default:
	}
}

// pump delivers queued events to the Events channel, in order.
func (c *Client) pump() {
	defer close(c.pumpEnd)
	defer close(c.events)
	for {
		c.mu.Lock()
		for len(c.queue) == 0 && !c.qclosed {
			c.mu.Unlock()
			select {
			case <-c.qwake:
			case <-c.stop:
				return
			}
			c.mu.Lock()
		}
		if len(c.queue) == 0 { // the output ended and everything was delivered
			c.mu.Unlock()
			return
		}
		ev := c.queue[0]
		c.queue[0] = Event{}
		c.queue = c.queue[1:]
		c.mu.Unlock()
		select {
		case c.events <- ev:
		case <-c.stop:
			return
		}
	}
}

// CloseInput closes the server's input: the server finishes (a --virtual
// server runs to quiescence, a real-clock one aborts), writes its last
// events and exits. Events stays open until they are delivered; calls
// made afterwards fail. Use it to read the final events, then Close.
func (c *Client) CloseInput() error {
	c.mu.Lock()
	done := c.inputDone
	c.inputDone = true
	c.mu.Unlock()
	if done {
		return nil
	}
	close(c.inputEnd)
	if cl, ok := c.w.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// Close ends the session: it closes the server's input, waits a few
// seconds for the server to finish (then kills the process, or closes the
// stream's reader), stops the delivery of events (undelivered ones are
// dropped and Events is closed) and fails the calls still waiting. For a
// process it returns the error of its exit status, if any. With NewClient,
// a reader that is not an io.Closer and never ends keeps the reading
// goroutine blocked in Read until it returns, and a writer blocked in
// Write that closing (or not being an io.Closer) does not unblock keeps
// the writing goroutine there: close the stream yourself.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.pumpEnd
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	_ = c.CloseInput()
	grace := time.NewTimer(closeGrace)
	defer grace.Stop()
	// The writer ends at once, unless it is blocked in a Write that closing
	// the input did not end; the grace is shared with the reader.
	readDone := false
	if waitOr(c.writeEnd, grace.C) {
		readDone = waitOr(c.readEnd, grace.C)
	} else {
		readDone = isDone(c.readEnd)
	}
	killed := false
	if !readDone {
		if c.cmd != nil {
			_ = c.cmd.Process.Kill()
			killed = true
			<-c.readEnd
		} else if cl, ok := c.r.(io.Closer); ok {
			_ = cl.Close()
			<-c.readEnd
		}
	}
	if c.cmd != nil {
		<-c.writeEnd // its stdin is closed: a blocked Write has returned
	}
	close(c.stop)
	<-c.pumpEnd
	c.mu.Lock()
	defer c.mu.Unlock()
	if killed {
		return fmt.Errorf("rpc: the server did not exit within %v of closing its input; killed it%s", closeGrace, c.stderrTail())
	}
	if c.waitErr != nil {
		return fmt.Errorf("rpc: the server exited: %w%s", c.waitErr, c.stderrTail())
	}
	return nil
}

// waitOr waits for done until timer fires, and reports whether done is
// closed.
func waitOr(done <-chan struct{}, timer <-chan time.Time) bool {
	if isDone(done) {
		return true
	}
	select {
	case <-done:
		return true
	case <-timer:
		return isDone(done)
	}
}

// isDone reports whether ch is closed.
func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// stderrTail returns ". Stderr: <the last lines>" for a process client
// with something on its stderr, or "".
func (c *Client) stderrTail() string {
	if c.stderr == nil {
		return ""
	}
	t := bytes.TrimSpace(c.stderr.Bytes())
	if len(t) == 0 {
		return ""
	}
	return ". Stderr: " + string(t)
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of what the buffer holds.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}
