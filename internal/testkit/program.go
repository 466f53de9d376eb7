// The programs of the module for the tests that run a command of this
// module as a real program (the RPC client's tests run retrysim): the
// path of its executable, linked once and kept by the go command's build
// cache, so that the next run of the tests links nothing.

package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Program is the path of the executable of the main package pkg (an
// import path, or a directory relative to dir: "./cmd/retrysim"), built
// by the go command in dir. It is the executable "go run" caches: go run
// keeps the programs it links in the build cache (Go 1.24), and with
// "-exec echo" prints the path it would run. The path is read-only and
// may be shared by other test processes: run it, never write it.
//
// A program not yet cached is linked to a temporary path, which the go
// command removes when it exits; the second go run then finds it in the
// cache. Program fails when the go command fails (its output says why)
// or the path it prints does not stay.
func Program(dir, pkg string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		return "", err
	}
	for range 2 {
		cmd := exec.Command(goCmd, "run", "-exec", echo, pkg)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("go run %s: %v\n%s", pkg, err, stderr.Bytes())
		}
		path := strings.TrimSuffix(string(out), "\n")
		if !filepath.IsAbs(path) || strings.Contains(path, "\n") {
			return "", fmt.Errorf("go run -exec echo %s printed %q, not the path of an executable", pkg, out)
		}
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	return "", errors.New("go run " + pkg + ": the go command keeps no executable in its build cache (GOCACHE off?)")
}
