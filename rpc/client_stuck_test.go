package rpc_test

// Tests of a client whose server does not read its input (issue 8, part 2):
// every call returns by its own deadline, a call that gave up before its
// line was written never sends it, and a response that comes after its call
// gave up is dropped. "In time" is shown on the virtual clock of a
// testing/synctest bubble, or by the error a call returns; hangGuard only
// detects a hang (a call blocked for good), it measures nothing.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/ohmypi/retryfsm/rpc"
)

// hangGuard is how long a call may take before the test calls it hung.
const hangGuard = 10 * time.Second

// stallServer is the far end of a NewClient that reads nothing until
// Listen is called: the client's writes to it block.
type stallServer struct {
	reqR  *io.PipeReader // the client's output, read by Listen
	reqW  *io.PipeWriter
	respR *io.PipeReader // the client's input
	respW *io.PipeWriter

	mu    sync.Mutex
	lines []string      // what Listen read
	done  chan struct{} // closed when Listen has finished
}

func newStallServer() *stallServer {
	s := &stallServer{done: make(chan struct{})}
	s.reqR, s.reqW = io.Pipe()
	s.respR, s.respW = io.Pipe()
	return s
}

// Listen starts reading the client's lines. Each line is answered with a
// success response (data {"prompt":1}) and then the event
// {"type":"after","id":<its id>}; a line without an id gets no response.
// At the end of the input it closes its output.
func (s *stallServer) Listen() {
	go func() {
		defer close(s.done)
		defer s.respW.Close()
		sc := bufio.NewScanner(s.reqR)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.lines = append(s.lines, line)
			s.mu.Unlock()
			var req struct{ ID, Type string }
			_ = json.Unmarshal([]byte(line), &req)
			if req.ID != "" {
				fmt.Fprintf(s.respW, `{"id":%q,"type":"response","command":%q,"success":true,"data":{"prompt":1}}`+"\n", req.ID, req.Type)
			}
			fmt.Fprintf(s.respW, `{"type":"after","id":%q}`+"\n", req.ID)
		}
	}()
}

// Lines returns what Listen read, after it has finished.
func (s *stallServer) Lines() []string {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lines
}

// Unstick breaks both pipes: a blocked write fails and the client's
// reader ends.
func (s *stallServer) Unstick() {
	s.reqR.Close()
	s.respW.Close()
}

// await runs f and returns its error; a call still running after
// hangGuard is a hang: unstick breaks it loose and the test fails.
func await(t *testing.T, unstick func(), what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		unstick()
		err := <-done
		t.Fatalf("%s hung (returned %v only when the server's pipes were broken)", what, err)
		return nil
	}
}

// wantErr checks err against the sentinel errors it must and must not match.
func wantErr(t *testing.T, what string, err error, is []error, isNot ...error) {
	t.Helper()
	for _, e := range is {
		if !errors.Is(err, e) {
			t.Errorf("%s: got %v, want an error matching %q", what, err, e)
		}
	}
	for _, e := range isNot {
		if errors.Is(err, e) {
			t.Errorf("%s: got %v, which should not match %q", what, err, e)
		}
	}
}

// nextEventBubble is nextEvent for a synctest bubble (its guard is virtual).
func nextEventBubble(t *testing.T, c *rpc.Client) string {
	t.Helper()
	select {
	case ev, ok := <-c.Events():
		if !ok {
			t.Fatal("the event channel was closed")
		}
		return string(ev.Raw)
	case <-time.After(hangGuard):
		t.Fatalf("no event within %v", hangGuard)
	}
	return ""
}

// TestClientCallsReturnByTheirDeadlinesWhenServerDoesNotRead runs on the
// virtual clock of a synctest bubble, so "by its deadline" is exact.
func TestClientCallsReturnByTheirDeadlinesWhenServerDoesNotRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStallServer()
		c := rpc.NewClient(s.respR, s.reqW)
		t.Cleanup(func() {
			s.Unstick()
			c.Close()
		})

		// A: its line goes to the writer, whose Write blocks (nobody reads).
		deadline := time.Now().Add(time.Second)
		ctxA, cancelA := context.WithDeadline(context.Background(), deadline)
		defer cancelA()
		err := await(t, s.Unstick, "a prompt to a server that does not read", func() error {
			_, err := c.Prompt(ctxA, "first")
			return err
		})
		wantErr(t, "A", err, []error{rpc.ErrTimeout, context.DeadlineExceeded}, rpc.ErrNotSent)
		if now := time.Now(); now.After(deadline) {
			t.Errorf("A returned %v after its deadline", now.Sub(deadline))
		}

		// B: the client's own timeout; its line waits behind A's and is
		// never written.
		c.SetTimeout(2 * time.Second)
		deadline = time.Now().Add(2 * time.Second)
		err = await(t, s.Unstick, "a get_state behind a blocked write", func() error {
			_, err := c.GetState(context.Background())
			return err
		})
		wantErr(t, "B", err, []error{rpc.ErrTimeout, context.DeadlineExceeded, rpc.ErrNotSent})
		if !strings.Contains(err.Error(), "after 2s") || !strings.Contains(err.Error(), "req_2") {
			t.Errorf("B: %v, want the id and the timeout", err)
		}
		if now := time.Now(); now.After(deadline) {
			t.Errorf("B returned %v after its deadline", now.Sub(deadline))
		}

		// C: SendRaw is bounded by the client's timeout too.
		deadline = time.Now().Add(2 * time.Second)
		err = await(t, s.Unstick, "a SendRaw behind a blocked write", func() error {
			return c.SendRaw([]byte(`{"type":"prompt","message":"raw"}`))
		})
		wantErr(t, "C", err, []error{rpc.ErrTimeout, rpc.ErrNotSent})
		if now := time.Now(); now.After(deadline) {
			t.Errorf("C returned %v after its deadline", now.Sub(deadline))
		}

		// The server starts reading: A's line arrives (its write was under
		// way), B's and C's never do; A's response is dropped.
		s.Listen()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := c.GetState(ctx); err != nil {
			t.Fatalf("D, once the server reads: %v", err)
		}
		if ev := nextEventBubble(t, c); ev != `{"type":"after","id":"req_1"}` {
			t.Errorf("first event %s, want the marker after A (A's late response must be dropped)", ev)
		}
		if ev := nextEventBubble(t, c); ev != `{"type":"after","id":"req_3"}` {
			t.Errorf("second event %s, want the marker after D", ev)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		diffLines(t, s.Lines(), []string{
			`{"type":"prompt","message":"first","id":"req_1"}`,
			`{"type":"get_state","id":"req_3"}`,
		})
	})
}

// notifyWriter reports on writing each write before doing it.
type notifyWriter struct {
	w       io.WriteCloser
	writing chan string
}

func (n notifyWriter) Write(p []byte) (int, error) {
	n.writing <- string(p)
	return n.w.Write(p)
}

func (n notifyWriter) Close() error { return n.w.Close() }

// TestClientBlockedWriteDoesNotBlockOtherCalls: while one call's line is
// stuck in a write, a cancelled call returns and concurrent calls return
// their own errors without sending anything.
func TestClientBlockedWriteDoesNotBlockOtherCalls(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := newStallServer()
	nw := notifyWriter{w: s.reqW, writing: make(chan string, 16)}
	c := rpc.NewClient(s.respR, nw)
	defer c.Close()
	defer s.Unstick()

	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	doneA := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctxA, "first")
		doneA <- err
	}()
	select {
	case <-nw.writing: // A's write has begun, and blocks
	case <-time.After(hangGuard):
		t.Fatal("A's line was not written")
	}
	cancelA()
	err := await(t, s.Unstick, "a cancelled call whose write blocks", func() error { return <-doneA })
	wantErr(t, "A", err, []error{context.Canceled}, rpc.ErrNotSent, rpc.ErrTimeout)

	// Two calls at once behind the blocked write: each returns its own error.
	c.SetTimeout(50 * time.Millisecond)
	ctxB, cancelB := context.WithTimeout(context.Background(), 80*time.Millisecond)
	defer cancelB()
	errs := make(chan error, 2)
	go func() { _, err := c.GetState(ctxB); errs <- err }()
	go func() { _, err := c.Prompt(context.Background(), "must not run"); errs <- err }()
	for i := range 2 {
		err := await(t, s.Unstick, "a call behind a blocked write", func() error { return <-errs })
		wantErr(t, fmt.Sprintf("call %d behind the blocked write", i+1), err,
			[]error{rpc.ErrTimeout, context.DeadlineExceeded, rpc.ErrNotSent})
	}

	// The server reads again: later calls work, and it saw only A's line.
	s.Listen()
	c.SetTimeout(waitFor)
	if _, err := c.GetState(context.Background()); err != nil {
		t.Fatalf("once the server reads: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := s.Lines()
	diffLines(t, got, []string{
		`{"type":"prompt","message":"first","id":"req_1"}`,
		`{"type":"get_state","id":"req_4"}`,
	})
}

// TestClientLateResponseIsDropped: the server reads a call's line but
// answers after the call gave up; the answer is not an event.
func TestClientLateResponseIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reqR, reqW := io.Pipe()
		respR, respW := io.Pipe()
		c := rpc.NewClient(respR, reqW)
		t.Cleanup(func() {
			reqR.Close()
			respW.Close()
			c.Close()
		})
		release := make(chan struct{})
		go func() {
			defer respW.Close()
			sc := bufio.NewScanner(reqR)
			for n := 1; sc.Scan(); n++ {
				if n == 1 {
					<-release // answer the first call late
				}
				id := fmt.Sprintf("req_%d", n)
				fmt.Fprintf(respW, `{"id":%q,"type":"response","command":"get_state","success":true,"data":{}}`+"\n", id)
				fmt.Fprintf(respW, `{"type":"after","id":%q}`+"\n", id)
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.GetState(ctx)
		wantErr(t, "the call answered late", err, []error{rpc.ErrTimeout, context.DeadlineExceeded}, rpc.ErrNotSent)
		close(release)
		if _, err := c.GetState(context.Background()); err != nil {
			t.Fatal(err)
		}
		if ev := nextEventBubble(t, c); ev != `{"type":"after","id":"req_1"}` {
			t.Errorf("first event %s, want the marker after req_1 (its late response must be dropped)", ev)
		}
	})
}

// TestClientStdinFull: a real process that never reads its stdin. A
// prompt larger than the pipe's buffer blocks in its write; the call
// returns its timeout, the next call returns its own without being sent,
// and the client's goroutines end once the process is gone.
func TestClientStdinFull(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	c, err := rpc.Start(ctx, os.Args[0], fakeServerArg+"deaf")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ev := nextEvent(t, c); ev.Type != "ready" {
		t.Fatalf("fake server: %s", ev.Raw)
	}
	// 16 times a pipe's default buffer; small enough to encode well
	// within A's deadline even under -race (A must reach the writer).
	big := strings.Repeat("x", 1<<20)
	ctxA, cancelA := context.WithTimeout(context.Background(), time.Second)
	defer cancelA()
	err = await(t, kill, "a prompt to a process that does not read", func() error {
		_, err := c.Prompt(ctxA, big)
		return err
	})
	wantErr(t, "the big prompt", err, []error{rpc.ErrTimeout, context.DeadlineExceeded}, rpc.ErrNotSent)
	ctxB, cancelB := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelB()
	err = await(t, kill, "a get_state behind the big prompt", func() error {
		_, err := c.GetState(ctxB)
		return err
	})
	wantErr(t, "get_state", err, []error{rpc.ErrTimeout, context.DeadlineExceeded, rpc.ErrNotSent})
	kill()
	_ = c.Close() // the process was killed: its exit status is an error
}

// TestClientCloseEndsBlockedWriter: CloseInput with a call blocked in its
// write and another waiting behind it: both calls return, a later call
// fails without being sent, and Close ends every goroutine of the client
// (the bubble could not end otherwise).
func TestClientCloseEndsBlockedWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStallServer()
		c := rpc.NewClient(s.respR, s.reqW)
		errs := make(chan error, 2)
		go func() { _, err := c.Prompt(context.Background(), "first"); errs <- err }()
		synctest.Wait() // its write has begun and blocks
		go func() { _, err := c.Prompt(context.Background(), "second"); errs <- err }()
		if err := c.CloseInput(); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := <-errs; err == nil {
				t.Error("a call blocked by a server that does not read succeeded")
			}
		}
		_, err := c.GetState(context.Background())
		wantErr(t, "a call after CloseInput", err, []error{rpc.ErrNotSent})
		if err := c.Close(); err != nil { // the reader is closed after the grace
			t.Fatal(err)
		}
		s.Unstick()
	})
}
