//go:build unix

package cli

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd in a process group of its own: a terminal's
// Ctrl-C then reaches this process alone, which passes it on once.
func ownProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// signalExitCode is the shell's status of a process ended by a signal:
// 128 + its number.
func signalExitCode(exit *exec.ExitError) int {
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitCodeFor(ws.Signal())
	}
	return exitFail
}
