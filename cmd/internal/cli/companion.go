package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
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
// running executable, else on $PATH, else built from the source of the
// repository the working directory is in (a clone, where README's
// 'go run ./cmd/retrysim ...' installs nothing). Not found, where says
// where it was looked for.
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
	if p, err := companionFromSource(name, file); err == nil {
		return p, "", nil
	}
	return "", where, errors.New(where)
}

// sourceModule is the module whose cmd/ holds the companions.
const sourceModule = "github.com/ohmypi/retryfsm"

// companionFromSource builds the companion name (file: its executable's
// name) from the clone of sourceModule that holds the working directory,
// with the go command, into the user's cache directory, and returns its
// path. The go command rebuilds it only when its source changed.
func companionFromSource(name, file string) (string, error) {
	root, err := sourceRoot()
	if err != nil {
		return "", err
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "retrysim", "companions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, file)
	// Each companion is a module of its own (cmd/retrysim-plot with the
	// chart libraries, cmd/retrysim-proxy with the HTTP stack), built in
	// its folder.
	build := exec.Command(goCmd, "build", "-o", out, ".")
	build.Dir = filepath.Join(root, "cmd", name)
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build in %s: %v: %s", build.Dir, err, msg)
	}
	return out, nil
}

// sourceRoot is the folder of the go.mod of sourceModule that holds the
// working directory, or an error when there is none.
func sourceRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if f := strings.Fields(line); len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == sourceModule {
					return dir, nil
				}
			}
			return "", fmt.Errorf("%s: not the module %s", dir, sourceModule)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s above the working directory", sourceModule)
		}
		dir = parent
	}
}

// companion is a command of the table that another program runs when
// it is not linked into this one: the command's options are a linker,
// which says whether it is.
type companion struct {
	name string // the program: retrysim-proxy
	why  string // why it is apart: "so that retrysim links no HTTP server"
}

// linker is the options of a command with a companion: link takes what
// the program links (Main's options) before run, and reports whether the
// command runs in this program.
type linker interface {
	link(p *program) bool
}

// run runs the companion program as "NAME COMMAND ARGS..." with this
// process's standard input and c's output, passing it the signals that
// end a command (it runs in a process group of its own, so that a
// terminal's Ctrl-C reaches it once), and returns its exit code.
func (cp *companion) run(c *command, args []string, stdout, stderr io.Writer) int {
	path, where, err := findCompanion(cp.name)
	if err != nil {
		return usageError(c, stderr, "this command is the program %s (%s), %s: install it with 'cd cmd/%s && go install .' in the repository "+
			"(a module of its own, beside 'go install ./cmd/...'), or run 'go run ./cmd/retrysim %s ...' in the repository, which builds it",
			cp.name, cp.why, where, cp.name, c.name)
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
