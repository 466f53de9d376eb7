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
	for _, p := range ignored {
		if _, err := gitOrSkip(t, "check-ignore", "-q", "--no-index", p); err != nil {
			t.Errorf("%s: a built binary, not ignored by .gitignore (%v)", p, err)
		}
	}
	for _, p := range kept {
		_, err := gitOrSkip(t, "check-ignore", "-q", "--no-index", p)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("%s: a source path, ignored by .gitignore (git check-ignore: %v)", p, err)
		}
	}
}
