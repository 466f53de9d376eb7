package cli

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
)

// blockedWriter is a stderr whose writes wait for release, then keep
// what was written.
type blockedWriter struct {
	release chan struct{}
	mu      sync.Mutex
	b       strings.Builder
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestSignalNoteBeforeStop: the first signal cancels the context at once,
// and stop does not return before the note about it is written (stderr's
// write waits here), so a session ended by a signal cannot end the process
// before its note; a second signal exits with 128+signal.
func TestSignalNoteBeforeStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sigs := make(chan os.Signal, 2)
		w := &blockedWriter{release: make(chan struct{})}
		exited := make(chan int, 1)
		ctx, stop := endOnSignal(sigs, w, "retrysim rpc", func(code int) { exited <- code })
		sigs <- syscall.SIGTERM
		<-ctx.Done() // cancelled while the note waits
		stopped := make(chan struct{})
		go func() {
			stop()
			close(stopped)
		}()
		synctest.Wait()
		select {
		case <-stopped:
			t.Fatal("stop returned before the signal's note was written")
		default:
		}
		close(w.release)
		<-stopped
		if got, want := w.b.String(), "retrysim rpc: terminated: ending the session (again to exit at once)\n"; got != want {
			t.Errorf("note %q, want %q", got, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		sigs := make(chan os.Signal, 2)
		w := &blockedWriter{release: make(chan struct{})}
		close(w.release)
		exited := make(chan int, 1)
		_, stop := endOnSignal(sigs, w, "retrysim rpc", func(code int) { exited <- code })
		defer stop()
		sigs <- syscall.SIGINT
		sigs <- syscall.SIGINT
		if code := <-exited; code != 128+int(syscall.SIGINT) {
			t.Errorf("second signal: exit %d, want %d", code, 128+int(syscall.SIGINT))
		}
	})
}
