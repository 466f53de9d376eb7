//go:build !unix

package cli

import "os/exec"

// ownProcessGroup leaves cmd in this process's group where there are no
// Unix process groups.
func ownProcessGroup(*exec.Cmd) {}

// signalExitCode is exitFail where a process is not ended by a signal.
func signalExitCode(*exec.ExitError) int { return exitFail }
