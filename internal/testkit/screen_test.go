package testkit

import (
	"io"
	"testing"
)

// TestWaitFor: WaitFor returns the offset after each text in turn, as it
// is written on another goroutine; ReadScreen's screen is done when its reader
// ends.
func TestWaitFor(t *testing.T) {
	r, w := io.Pipe()
	s := ReadScreen(r)
	go func() {
		for _, p := range []string{"agent_", "run one", " then two"} {
			_, _ = w.Write([]byte(p))
		}
		w.Close()
	}()
	at := s.WaitFor(t, 0, "agent_run")
	if at != len("agent_run") {
		t.Fatalf("offset %d", at)
	}
	if at = s.WaitFor(t, at, "two"); at != len("agent_run one then two") {
		t.Fatalf("offset %d", at)
	}
	<-s.Done()
	if s.String() != "agent_run one then two" {
		t.Fatalf("%q", s.String())
	}
}
