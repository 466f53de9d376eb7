package scenario

// Discovery: the scenario files of directories.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/ohmypi/retryfsm/internal/termsafe"
)

// Files expands paths: a directory gives every *.yaml, *.yml and *.json
// regular file in it and, recursively, in its subdirectories (sorted by
// path, byte order; skipping *.out.jsonl, manifest.json (a conformance
// set's index) and every file or directory whose name starts with '.' or
// '_'; symbolic links to regular files are followed, symbolic links to
// directories are not, so there are no loops; at most scnMaxDepth levels
// below the directory given); a path that is not a directory is taken as
// is, whatever it is. Directory entries that are left out because they are
// not regular files (named pipes, sockets, devices, broken links, links to
// directories, directories nested too deep) are left out silently: use
// Find to report them.
func Files(paths ...string) ([]string, error) {
	files, _, err := Find(paths...)
	return files, err
}

// scnMaxDepth (named so in the tests) is how many levels of subdirectories below a directory
// given to Find are read.
const scnMaxDepth = 16

// SkippedFile is a directory entry that Find left out: a file with a
// scenario file name that is not a regular file (reading a named pipe,
// say, would block until someone writes to it), a symbolic link to a
// directory (not followed) or a directory nested too deep.
type SkippedFile struct {
	Path string // the directory joined with the entry's name
	What string // what it is: "a named pipe", "a socket", "a device", "a broken symbolic link", "a symbolic link to a directory", ...
}

// String gives "PATH: skipped: WHAT, not a regular file" (for a directory:
// "PATH: skipped: WHAT, not read"), the path escaped (termsafe.Text).
func (s SkippedFile) String() string {
	why := ", not a regular file"
	if strings.HasSuffix(s.What, "directory") || strings.Contains(s.What, "levels deep") {
		why = ", not read"
	}
	return termsafe.Text(s.Path + ": skipped: " + s.What + why)
}

// Find is Files that also returns the directory entries it left out
// (see SkippedFile), in the order met (depth first, by name). A path given
// explicitly is never skipped: it is returned as is, even a named pipe or
// a symbolic link to a directory (which is then read).
func Find(paths ...string) (files []string, skipped []SkippedFile, err error) {
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, nil, err
		}
		if !info.IsDir() {
			files = append(files, path)
			continue
		}
		var found []string
		if err := walk(path, 0, &found, &skipped); err != nil {
			return nil, nil, err
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	return files, skipped, nil
}

// walk adds the scenario files of directory dir, depth levels below the
// directory given to Find, and of its subdirectories, to found.
func walk(dir string, depth int, found *[]string, skipped *[]SkippedFile) error {
	entries, err := os.ReadDir(dir) // sorted by file name
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		full := filepath.Join(dir, name)
		mode := e.Type()
		if mode.IsDir() {
			if depth >= scnMaxDepth {
				*skipped = append(*skipped, SkippedFile{Path: full, What: fmt.Sprintf("a directory more than %d levels deep", scnMaxDepth)})
				continue
			}
			if err := walk(full, depth+1, found, skipped); err != nil {
				return err
			}
			continue
		}
		what := ""
		if mode&fs.ModeSymlink != 0 {
			st, err := os.Stat(full)
			switch {
			case err == nil && st.IsDir():
				// Not followed (a link may lead back up: no loops),
				// whatever its name.
				*skipped = append(*skipped, SkippedFile{Path: full, What: "a symbolic link to a directory"})
				continue
			case errors.Is(err, syscall.ELOOP):
				what = "a symbolic link loop"
			case err != nil:
				what = "a broken symbolic link"
			case !st.Mode().IsRegular():
				what = "a symbolic link to " + describeMode(st.Mode())
			}
		} else if !mode.IsRegular() {
			what = describeMode(mode)
		}
		if !isScenarioName(name) {
			continue
		}
		if what != "" {
			*skipped = append(*skipped, SkippedFile{Path: full, What: what})
			continue
		}
		*found = append(*found, full)
	}
	return nil
}

// describeMode names the type of a file that is not a regular file.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

func isScenarioName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || strings.HasSuffix(name, ".out.jsonl") || name == "manifest.json" {
		return false
	}
	switch filepath.Ext(name) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
