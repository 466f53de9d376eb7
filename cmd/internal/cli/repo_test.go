package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository's top folder, from this package's folder.
const repoRoot = "../../.."

// gitOrSkip runs git in the repository and skips the test when there is no
// git or no git checkout (a source archive has neither to check).
func gitOrSkip(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	if err := exec.Command("git", "-C", repoRoot, "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git checkout")
	}
	return exec.Command("git", append([]string{"-C", repoRoot}, args...)...).Output()
}

// checkIgnore asks one git check-ignore (--no-index: whether tracked or
// not) which of paths .gitignore ignores: a path is ignored when the last
// pattern matching it is not a negation ("!retrysim/"), as git decides.
func checkIgnore(t *testing.T, paths []string) map[string]bool {
	t.Helper()
	cmd := exec.Command("git", "-C", repoRoot, "check-ignore", "--no-index", "--stdin", "-z", "--verbose", "--non-matching")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) { // 1: none ignored
		t.Fatalf("git check-ignore: %v", err)
	}
	// Each path's record: source, line number, pattern, path (-z).
	fields := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(fields) != 4*len(paths) {
		t.Fatalf("git check-ignore answered %q for %d paths", out, len(paths))
	}
	ignored := map[string]bool{}
	for i := 0; i < len(fields); i += 4 {
		pattern, path := fields[i+2], fields[i+3]
		ignored[path] = pattern != "" && !strings.HasPrefix(pattern, "!")
	}
	return ignored
}

// TestNoBuiltBinaryCommitted: no file the repository tracks is a built
// executable (ELF, Mach-O or PE), and .gitignore ignores the binaries `go
// build` writes for the main packages, wherever they are built, without
// ignoring the packages' folders (issue 19 §6).
func TestNoBuiltBinaryCommitted(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	out, err := gitOrSkip(t, "ls-files", "-z")
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	magics := [][]byte{
		{0x7f, 'E', 'L', 'F'},
		{0xcf, 0xfa, 0xed, 0xfe}, {0xce, 0xfa, 0xed, 0xfe}, {0xca, 0xfe, 0xba, 0xbe},
		{'M', 'Z', 0x90, 0x00},
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		f, err := os.Open(filepath.Join(repoRoot, name))
		if err != nil {
			continue // deleted in the work tree, or a submodule
		}
		head := make([]byte, 4)
		n, _ := f.Read(head)
		f.Close()
		for _, m := range magics {
			if n == 4 && bytes.Equal(head, m) {
				t.Errorf("%s is a built executable committed to the repository", name)
			}
		}
	}

	// Paths of built binaries (a file named after its main package, in the
	// package's folder, at the top, or anywhere else) and of sources.
	ignored := []string{"cmd/retrysim/retrysim", "retrysim", "retrysim-proxy", "cmd/retrysim-plot/retrysim-plot", "adapters/examples/sdkagent/sdkagent", "sdkagent", "bin/retrysim", "cmd/retrysim/retrysim.exe", "cmd/retrysim/retrysim.test"}
	kept := []string{"cmd/retrysim/main.go", "cmd/retrysim-proxy/main.go", "cmd/retrysim-plot/main.go", "cmd/internal/cli/testdata/x", "adapters/examples/sdkagent/main.go", "fleet/fleetplot/plot.go"}
	ignoredNow := checkIgnore(t, append(ignored, kept...))
	for _, p := range ignored {
		if !ignoredNow[p] {
			t.Errorf("%s: a built binary, not ignored by .gitignore", p)
		}
	}
	for _, p := range kept {
		if ignoredNow[p] {
			t.Errorf("%s: a source path, ignored by .gitignore", p)
		}
	}
}
