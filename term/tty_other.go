//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package term

import "errors"

// IsTerminal reports whether fd is a terminal; on this system the player
// never treats its output as one.
func IsTerminal(fd uintptr) bool { return false }

// KeyMode is not supported on this system.
func KeyMode(fd uintptr) (restore func() error, err error) {
	return nil, errors.New("term: key mode is not supported on this system")
}
