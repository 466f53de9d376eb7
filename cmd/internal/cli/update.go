package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
)

// updateFile is "run --update" on one file: it writes the expect block of
// the run res (scenario.ExpectFromTrace) into the file at path
// (scenario.SetExpect: the rest of the file kept), and reports whether the
// file changed. The new content must load and pass before it is written;
// it replaces the file at once (a new file renamed over it, with the
// file's permissions; a symbolic link is followed).
func updateFile(path string, res *sim.Result) (changed bool, err error) {
	if res.RunErr != nil {
		return false, fmt.Errorf("the simulation did not finish: %w", res.RunErr)
	}
	x, err := scenario.ExpectFromTrace(res.Records)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	out, err := scenario.SetExpect(path, data, x)
	if err != nil {
		return false, err
	}
	if bytes.Equal(out, data) {
		return false, nil
	}
	sc, err := scenario.Parse(path, out)
	if err != nil {
		return false, fmt.Errorf("the updated file would not load: %w", err)
	}
	again, err := sim.RunScenario(sc, sim.Options{NoJSON: true})
	if err != nil {
		return false, fmt.Errorf("the updated file would not run: %w", err)
	}
	if !again.Passed() {
		return false, fmt.Errorf("the updated file would not pass: %v", again.Failures)
	}
	return true, replaceFile(path, out)
}

// replaceFile writes data over the file at path (following symbolic
// links) in one step: a new file in the same directory, given the old
// one's permissions, renamed over it.
func replaceFile(path string, data []byte) (err error) {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	info, err := os.Stat(target)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	return writeFileAtomic(target, data, info.Mode().Perm())
}

// writeFileAtomic writes data to a new file in target's directory with the
// permissions perm and renames it over target: a reader sees the old file
// or the new one whole, never a part (a killed writer leaves no target).
func writeFileAtomic(target string, data []byte, perm os.FileMode) (err error) {
	// A name starting with '.' is one that run leaves out of a directory.
	f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".update-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err = f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), target)
}
