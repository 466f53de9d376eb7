package rpc_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ohmypi/retryfsm/rpc"
)

// eofAfterRelease reads first, then blocks until release is closed and
// returns io.EOF.
type eofAfterRelease struct {
	first   *strings.Reader
	release <-chan struct{}
}

func (r *eofAfterRelease) Read(p []byte) (int, error) {
	if r.first.Len() > 0 {
		return r.first.Read(p)
	}
	<-r.release
	return 0, io.EOF
}

// signalAtBackoff is the server's output; when the auto_retry_start of the
// 60 s backoff is written (the server flushes before it waits for input),
// it cancels the context and ends the input, then waits until the reader
// goroutine has queued the end of input: the server then finds both a
// done context and EOF ready.
type signalAtBackoff struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	cancel  context.CancelFunc
	release chan struct{}
	fired   bool
}

func (w *signalAtBackoff) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.fired && strings.Contains(w.buf.String(), `"type":"auto_retry_start"`) {
		w.fired = true
		w.cancel()
		close(w.release)
		synctest.Wait() // the reader goroutine has sent EOF and ended
	}
	return len(p), nil
}

// TestServeVirtualSignalWinsOverEOF: a signal (ctx done) received before
// the serve loop acts on the end of input always aborts: virtual time does
// not run on to the pending 60 s retry (issue 19 §1). Both are ready at
// the same select in every round; without the priority the loop picks EOF
// in about half of them.
func TestServeVirtualSignalWinsOverEOF(t *testing.T) {
	sc := parseScenario(t, `
settings: {baseDelayMs: 60000}
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`)
	for round := range 40 {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			release := make(chan struct{})
			in := &eofAfterRelease{first: strings.NewReader(`{"id":"p","type":"prompt","message":"hi"}` + "\n"), release: release}
			out := &signalAtBackoff{cancel: cancel, release: release}
			err := rpc.Serve(ctx, in, out, rpc.Options{Scenario: sc, Virtual: true})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("round %d: Serve returned %v, want context.Canceled (the signal, not the end of input)", round, err)
			}
			got := out.buf.String()
			if !strings.Contains(got, `{"t":0,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`) {
				t.Fatalf("round %d: no abort at t=0:\n%s", round, got)
			}
			if strings.Contains(got, `"t":60000`) {
				t.Fatalf("round %d: virtual time ran on to the retry after the signal:\n%s", round, got)
			}
		})
	}
}
