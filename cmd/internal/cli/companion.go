package cli

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
)

// The companion commands: programs beside retrysim that link what
// retrysim does not, so that its first build stays small (SPEC.md §18.4,
// §15.7).
const (
	// plotCommand draws the fleet's charts (cmd/retrysim-plot, on
	// gonum.org/v1/plot): retrysim pipes a result to it.
	plotCommand = "retrysim-plot"
	// proxyCommand is the CLI with the proxy's HTTP server linked in
	// (cmd/retrysim-proxy): "retrysim proxy" runs it.
	proxyCommand = "retrysim-proxy"
)

// findCompanion is the path of the companion command name: beside the
// running executable, else on $PATH. Not found, where says where it was
// looked for.
func findCompanion(name string) (path, where string, err error) {
	file := name
	if runtime.GOOS == "windows" {
		file += ".exe"
	}
	where = "not found on $PATH"
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		if p, err := exec.LookPath(filepath.Join(dir, file)); err == nil {
			return p, "", nil
		}
		where = "found neither beside retrysim (in " + dir + ") nor on $PATH"
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, "", nil
	}
	return "", where, errors.New(where)
}

// companion is a command of the table that another program runs when
// it is not linked into this one.
type companion struct {
	name   string      // the program: retrysim-proxy
	linked func() bool // whether this program runs the command itself
	why    string      // why it is apart: "so that retrysim links no HTTP server"
}

// run runs the companion program as "NAME COMMAND ARGS..." with this
// process's standard input and c's output, passing it the signals that
// end a command (it runs in a process group of its own, so that a
// terminal's Ctrl-C reaches it once), and returns its exit code.
func (cp *companion) run(c *command, args []string, stdout, stderr io.Writer) int {
	path, where, err := findCompanion(cp.name)
	if err != nil {
		return usageError(c, stderr, "this command is the program %s (%s), %s: install it with 'go install ./cmd/%s' in the repository "+
			"(beside retrysim: 'go install ./cmd/...'), or run 'go run ./cmd/%s %s ...'", cp.name, cp.why, where, cp.name, cp.name, c.name)
	}
	cmd := exec.Command(path, append([]string{c.name}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	ownProcessGroup(cmd)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, endSignals...)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		errorf(stderr, "running %s: %v", path, err)
		return exitFail
	}
	done := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for {
			select {
			case sig := <-sigs:
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err = cmd.Wait()
	close(done)
	<-forwarded
	var exit *exec.ExitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	case errors.As(err, &exit):
		return signalExitCode(exit) // ended by a signal it did not catch
	default:
		errorf(stderr, "running %s: %v", path, err)
		return exitFail
	}
}
