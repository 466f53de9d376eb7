package cli

import (
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// lflag reads the local modes of the terminal behind fd (on Linux the
// master side of a pty reports its slave's).
func lflag(t *testing.T, fd uintptr) uint32 {
	t.Helper()
	var tio syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); errno != 0 {
		t.Fatalf("TCGETS: %v", errno)
	}
	return tio.Lflag
}

// TestWatchOnTerminalSIGTERMAndSIGHUP: SIGTERM and SIGHUP restore the
// terminal (line editing and echo back on, cursor shown) and exit 130 at
// once. They used to kill the process with the
// terminal left in key mode.
func TestWatchOnTerminalSIGTERMAndSIGHUP(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	path := writeScenario(t, longBackoff)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, ptmx, screen := startOnTerminal(t, "run", "--watch", path)
			screen.WaitFor(t, 0, "Retrying (1/3) in 600s… (esc to cancel)")
			if got := lflag(t, ptmx.Fd()); got&(syscall.ICANON|syscall.ECHO) != 0 {
				t.Fatalf("the terminal is not in key mode while the loader is shown (lflag %#x)", got)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := exitCode(t, cmd); code != exitInterrupted {
				t.Fatalf("exit %d, want %d; screen:\n%s", code, exitInterrupted, screen.String())
			}
			if got := lflag(t, ptmx.Fd()); got&(syscall.ICANON|syscall.ECHO) != syscall.ICANON|syscall.ECHO {
				t.Errorf("terminal left in key mode after %v (lflag %#x)", sig, got)
			}
			<-screen.Done() // all the output read
			out := screen.String()
			if i := strings.LastIndex(out, "\x1b[?25l"); i >= 0 && strings.LastIndex(out[i:], "\x1b[?25h") < 0 {
				t.Errorf("cursor left hidden after %v:\n%q", sig, out)
			}
		})
	}
}
