//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package term

import (
	"syscall"
	"unsafe"
)

func getTermios(fd uintptr) (*syscall.Termios, error) {
	var t syscall.Termios
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlGetTermios, uintptr(unsafe.Pointer(&t))); errno != 0 {
		return nil, errno
	}
	return &t, nil
}

func setTermios(fd uintptr, t *syscall.Termios) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlSetTermios, uintptr(unsafe.Pointer(t))); errno != 0 {
		return errno
	}
	return nil
}

// IsTerminal reports whether fd is a terminal.
func IsTerminal(fd uintptr) bool {
	_, err := getTermios(fd)
	return err == nil
}

// KeyMode switches the terminal fd to reading single keys: no line
// editing and no echo, so that Esc arrives at once. Signals (Ctrl-C sends
// SIGINT) and output processing stay as they are. restore puts the
// previous mode back.
func KeyMode(fd uintptr) (restore func() error, err error) {
	old, err := getTermios(fd)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= syscall.ICANON | syscall.ECHO
	t.Cc[syscall.VMIN] = 1
	t.Cc[syscall.VTIME] = 0
	if err := setTermios(fd, &t); err != nil {
		return nil, err
	}
	return func() error { return setTermios(fd, old) }, nil
}
