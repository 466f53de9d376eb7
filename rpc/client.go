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
)

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

// State is the data of a get_state response: the original's fields that
// apply, then the retry fields it lacks.
type State struct {
	IsStreaming           bool   `json:"isStreaming"`
	MessageCount          int    `json:"messageCount"`
	AutoCompactionEnabled bool   `json:"autoCompactionEnabled"`
	SessionID             string `json:"sessionId"`
	AutoRetryEnabled      bool   `json:"autoRetryEnabled"`
	IsRetrying            bool   `json:"isRetrying"`
	RetryAttempt          int    `json:"retryAttempt"`
	RetryState            string `json:"retryState"`
}

// Client speaks the JSON lines protocol to one server. Its methods are
// safe for concurrent use; calls are answered in the order the server
// handles them. Events arrive in order on Events, and are queued without
// bound, so a slow reader never blocks responses.
type Client struct {
	w      io.Writer
	r      io.Reader
	wmu    sync.Mutex
	cmd    *exec.Cmd   // nil for NewClient
	stderr *tailBuffer // nil for NewClient

	mu        sync.Mutex
	nextID    int
	pending   map[string]chan Response
	endErr    error // set when the server's output has ended
	closed    bool
	timeout   time.Duration
	inputDone bool

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
		timeout: DefaultTimeout,
		events:  make(chan Event),
		qwake:   make(chan struct{}, 1),
		stop:    make(chan struct{}),
		readEnd: make(chan struct{}),
		pumpEnd: make(chan struct{}),
	}
}

func (c *Client) run() {
	go c.read()
	go c.pump()
}

// SetTimeout changes the timeout of calls whose context has no deadline
// (DefaultTimeout at first).
func (c *Client) SetTimeout(d time.Duration) {
	c.mu.Lock()
	c.timeout = d
	c.mu.Unlock()
}

// Events returns the channel of events, in the order the server wrote
// them. It is closed after the server's output ends and every event was
// received, or when Close is called (undelivered events are dropped).
func (c *Client) Events() <-chan Event { return c.events }

// SetAutoRetry sends set_auto_retry.
func (c *Client) SetAutoRetry(ctx context.Context, enabled bool) error {
	_, err := c.Call(ctx, "set_auto_retry", map[string]any{"enabled": enabled})
	return err
}

// AbortRetry sends abort_retry. Whether a chain was cancelled is told by
// the auto_retry_end event that follows the response.
func (c *Client) AbortRetry(ctx context.Context) error {
	_, err := c.Call(ctx, "abort_retry", nil)
	return err
}

// Abort sends abort. Its response comes after the events it causes.
func (c *Client) Abort(ctx context.Context) error {
	_, err := c.Call(ctx, "abort", nil)
	return err
}

// GetState sends get_state.
func (c *Client) GetState(ctx context.Context) (State, error) {
	var st State
	resp, err := c.Call(ctx, "get_state", nil)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(resp.Data, &st); err != nil {
		return st, fmt.Errorf("rpc: get_state (id %s): bad data: %w", resp.ID, err)
	}
	return st, nil
}

// Prompt sends a prompt and returns its number, as soon as the server has
// accepted it; its completion is the prompt_resolved event with that
// number. A prompt rejected because the session is busy is a
// *ResponseError.
func (c *Client) Prompt(ctx context.Context, message string) (int, error) {
	resp, err := c.Call(ctx, "prompt", map[string]any{"message": message})
	if err != nil {
		return 0, err
	}
	var data struct {
		Prompt *int `json:"prompt"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil || data.Prompt == nil {
		return 0, fmt.Errorf("rpc: prompt (id %s): response without a prompt number: %s", resp.ID, resp.Data)
	}
	return *data.Prompt, nil
}

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
	ch := make(chan Response, 1)
	c.pending[id] = ch
	timeout := c.timeout
	c.mu.Unlock()

	line, err := encodeCommand(typ, fields, id)
	if err == nil {
		err = c.write(line)
	}
	if err != nil {
		c.forget(id)
		return Response{}, fmt.Errorf("rpc: sending %s (id %s): %w", typ, id, err)
	}

	after := ""
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
		after = " after " + timeout.String()
	}
	select {
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
		c.forget(id)
		err := ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) {
			return Response{}, fmt.Errorf("%w to %s (id %s)%s (%w)%s", ErrTimeout, typ, id, after, err, c.stderrTail())
		}
		return Response{}, fmt.Errorf("rpc: waiting for the response to %s (id %s): %w%s", typ, id, err, c.stderrTail())
	}
}

// SendRaw writes one line as it is (a newline is added), for testing how
// the server handles malformed input. Its response, if any, arrives on
// Events.
func (c *Client) SendRaw(line []byte) error {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return c.write(append(bytes.Clone(line), '\n'))
}

func (c *Client) write(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(line)
	return err
}

func (c *Client) forget(id string) {
	c.mu.Lock()
	delete(c.pending, id)
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
	lr := newLineReader(c.r, maxResponseLine)
	var readErr error
	for {
		line, tooLong, err := lr.next()
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
			c.mu.Unlock()
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
// goroutine blocked in Read until it returns: close the stream yourself.
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
	timer := time.NewTimer(closeGrace)
	defer timer.Stop()
	killed := false
	select {
	case <-c.readEnd:
	case <-timer.C:
		if c.cmd != nil {
			_ = c.cmd.Process.Kill()
			killed = true
			<-c.readEnd
		} else if cl, ok := c.r.(io.Closer); ok {
			_ = cl.Close()
			<-c.readEnd
		}
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
