// The output the terminal tests (the player's, and the CLI's on a
// pseudo-terminal) wait on without sleeping: a test waits until the text
// it expects has been written, within ScreenTimeout.

package testkit

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// ScreenTimeout is how long WaitFor waits for its text.
const ScreenTimeout = 30 * time.Second

// Screen collects what is written to it.
type Screen struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
	done    chan struct{}
}

// NewScreen returns an empty Screen to write to.
func NewScreen() *Screen { return &Screen{changed: make(chan struct{}, 1), done: make(chan struct{})} }

// ReadScreen returns a Screen that r is copied into, on a goroutine of its
// own, until r ends (Done).
func ReadScreen(r io.Reader) *Screen {
	s := NewScreen()
	go func() {
		defer close(s.done)
		_, _ = io.Copy(s, r)
	}()
	return s
}

// Done is closed once the reader of ReadScreen has ended.
func (s *Screen) Done() <-chan struct{} { return s.done }

// Write implements io.Writer.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(p)
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

// String is everything written so far.
func (s *Screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// WaitFor waits until the output from offset from contains want and
// returns the offset just after it; the test fails after ScreenTimeout.
func (s *Screen) WaitFor(t testing.TB, from int, want string) int {
	t.Helper()
	deadline := time.After(ScreenTimeout)
	for {
		out := s.String()
		if i := strings.Index(out[from:], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-s.changed:
		case <-deadline:
			t.Fatalf("no %q on the screen within %v:\n%q", want, ScreenTimeout, out[from:])
		}
	}
}
