//go:build unix

package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/wire"
)

// TestProxyHelpNamesEveryFault: the proxy's help names each of
// wire.FaultKinds, the one list of the wire's faults.
func TestProxyHelpNamesEveryFault(t *testing.T) {
	code, out, errOut := runMain(t, "proxy", "--help")
	if code != exitOK {
		t.Fatalf("proxy --help: exit %d, stderr:\n%s", code, errOut)
	}
	help := strings.Join(strings.Fields(out), " ")
	want := make([]string, len(wire.FaultKinds))
	for i, k := range wire.FaultKinds {
		want[i] = string(k)
	}
	list := strings.Join(want[:len(want)-1], ", ") + " or " + want[len(want)-1]
	if !strings.Contains(help, "kind one of "+list+".") {
		t.Errorf("proxy --help does not name the faults %q:\n%s", list, out)
	}
}

// TestProxyCommandErrors: a bad script, address or flag is exit status 2
// with an error saying where (the script and address found by
// retrysim-proxy, which "retrysim proxy" runs, the flags before that).
func TestProxyCommandErrors(t *testing.T) {
	companionOnPath(t, proxyCommand)
	dir := writeFiles(t, map[string]string{
		"bad.yaml":   "faults:\n  - {request: 1, kind: stream-cutt}\n",
		"key.yaml":   "fualts: []\n",
		"turns.yaml": "turns:\n  - {stopReason: eror}\n",
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", filepath.Join(dir, "bad.yaml")}, `bad.yaml:2:24: faults[0].kind: "stream-cutt" is not a fault (allowed: latency, slow-body, stream-cut, sse-error, drop); did you mean stream-cut?`},
		{[]string{"proxy", filepath.Join(dir, "key.yaml")}, `key.yaml:1:1: unknown key "fualts" (allowed: scenario, fleet, repeat, text, faults); did you mean faults?`},
		{[]string{"proxy", filepath.Join(dir, "turns.yaml")}, `turns.yaml:2:18: turns[0].stopReason`},
		{[]string{"proxy", "--listen", "256.0.0.1:1", filepath.Join(dir, "key.yaml")}, `unknown key`},
		{[]string{"proxy", "--listen", "nonsense", "--max-body", "10"}, `--listen:`},
		{[]string{"proxy", "--listen="}, `--listen: an empty address (it would listen on every interface, at a random port); give HOST:PORT, e.g. 127.0.0.1:8787`},
		{[]string{"proxy", "--max-body", "0"}, `--max-body: "0" is not a positive number of bytes`},
		{[]string{"proxy", "--upstream", "ftp://x", "--listen", "127.0.0.1:0"}, `upstream "ftp://x": not an http or https URL`},
		{[]string{"proxy", "a", "b"}, `one SCRIPT at most`},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestProxyCompanionMissing: without retrysim-proxy beside retrysim or on
// $PATH, "retrysim proxy" is a usage error saying how to get it, and
// "retrysim proxy --help" and a flag error still answer (retrysim knows
// the command's flags).
func TestProxyCompanionMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := runMain(t, "proxy", "--listen", "127.0.0.1:0")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "retrysim proxy: this command is the program retrysim-proxy (so that retrysim links no HTTP server)") ||
		!strings.Contains(errOut, "go install ./cmd/retrysim-proxy") || !strings.Contains(errOut, "go run ./cmd/retrysim-proxy proxy ...") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2 and how to install retrysim-proxy", code, out, errOut)
	}
	code, out, _ = runMain(t, "proxy", "--help")
	if code != exitOK || !strings.HasPrefix(out, "Usage: retrysim proxy [flags] [SCRIPT]") || !strings.Contains(out, "--max-body BYTES") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
	code, _, errOut = runMain(t, "proxy", "--max-body", "x")
	if code != exitUsage || !strings.Contains(errOut, `--max-body: "x" is not an integer`) || strings.Contains(errOut, "retrysim-proxy") {
		t.Errorf("a flag error: exit %d, %q; want 2 from retrysim itself", code, errOut)
	}
}

// TestMainWithProxy: the proxy's server is a value given to Main
// (WithProxy), not a package variable: with it the command serves in this
// program (its run checked and handed over, no companion looked for);
// without it, in the same process, the command is the companion's.
func TestMainWithProxy(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no retrysim-proxy to run, nor go to build one
	var got *ProxyRun
	served := func(ctx context.Context, run *ProxyRun) int {
		got = run
		return 3
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"proxy", "--listen", "127.0.0.1:9", "--max-body", "7", "s.yaml"}, &out, &errOut, WithProxy(served))
	if code != 3 || got == nil || got.Script != "s.yaml" || got.Listen != "127.0.0.1:9" || got.MaxBody != 7 || got.Log != &out {
		t.Errorf("with WithProxy: exit %d, run %+v, stderr %q; want 3 from the server given, its run from the flags", code, got, errOut.String())
	}
	got, errOut = nil, bytes.Buffer{}
	code = Main([]string{"proxy", "--listen", "127.0.0.1:9", "s.yaml"}, &out, &errOut)
	if code != exitUsage || got != nil || !strings.Contains(errOut.String(), "go install ./cmd/retrysim-proxy") {
		t.Errorf("without: exit %d, served %v, stderr %q; want 2 asking for retrysim-proxy", code, got != nil, errOut.String())
	}
}

// TestCompanionFromSource: in a clone, with the companion neither beside
// retrysim nor on $PATH, "retrysim proxy" builds retrysim-proxy from the
// clone's source and runs it (README's 'go run ./cmd/retrysim proxy'
// works as written); it used to exit 2 asking to install it. The go
// command on $PATH is this test binary (TestMain, as fakeGo), which checks
// the build it is asked for and gives retrysim-proxy as the go command's
// build cache holds it (companionOnPath); TestCompanionFromSourceBuilds
// runs the real go build.
func TestCompanionFromSource(t *testing.T) {
	real := filepath.Join(companionOnPath(t, proxyCommand), proxyCommand)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "go")); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // the companion goes to a new cache
	t.Setenv("PATH", bin)             // go, and no companion
	t.Setenv(fakeGoProgram, real)
	t.Setenv(fakeGoRoot, root)
	wantProxysOwnError(t)
	if _, err := os.Lstat(filepath.Join(cache, "retrysim", "companions", proxyCommand)); err != nil {
		t.Errorf("the companion is not in the user's cache: %v", err)
	}
}

// TestCompanionFromSourceBuilds is TestCompanionFromSource with the real go
// command, which builds retrysim-proxy into a new cache (opt-in: a link of
// its own, seconds; .ci/run runs it).
func TestCompanionFromSourceBuilds(t *testing.T) {
	testkit.Need(t, testkit.Build, "a build of retrysim-proxy from source")
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed:", err)
	}
	gocache, err := exec.Command(goCmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(gocache))) // the build cache stays warm
	t.Setenv("XDG_CACHE_HOME", t.TempDir())                 // the companion goes to a new cache
	t.Setenv("PATH", filepath.Dir(goCmd))                   // go, and no companion
	wantProxysOwnError(t)
}

// wantProxysOwnError runs "retrysim proxy --max-body 0": the usage error
// must be retrysim-proxy's own, not retrysim's asking to install it.
func wantProxysOwnError(t *testing.T) {
	t.Helper()
	code, _, errOut := runMain(t, "proxy", "--max-body", "0")
	if code != exitUsage || !strings.Contains(errOut, `--max-body: "0" is not a positive number of bytes`) || strings.Contains(errOut, "install it") {
		t.Fatalf("exit %d, stderr %q; want retrysim-proxy's own usage error (exit 2) about --max-body", code, errOut)
	}
}

// The variables of fakeGo: the program it gives for the build, and the
// module root the build must run in.
const (
	fakeGoProgram = "RETRYSIM_TEST_FAKE_GO_PROGRAM"
	fakeGoRoot    = "RETRYSIM_TEST_FAKE_GO_ROOT"
)

// fakeGo is the go command of TestCompanionFromSource (this test binary
// under the name go): "go build -o OUT ./cmd/retrysim-proxy" in the module
// root, or "go build -o OUT ." in the root's cmd/retrysim-plot (a module of
// its own), links $RETRYSIM_TEST_FAKE_GO_PROGRAM at OUT; any other command
// line, or another folder, exits 1 saying so.
func fakeGo(args []string) int {
	wd, err := os.Getwd()
	root := os.Getenv(fakeGoRoot)
	want := []string{"build", "-o", "OUT", "./cmd/" + proxyCommand}
	if wd == filepath.Join(root, "cmd", plotCommand) {
		want[3] = "."
	} else {
		wd = strings.TrimSuffix(wd, string(os.PathSeparator)) // the root itself
	}
	if len(args) == len(want) {
		want[2] = args[2]
	}
	if err != nil || (wd != root && want[3] != ".") || !slices.Equal(args, want) {
		fmt.Fprintf(os.Stderr, "fake go: 'go %s' in %s (%v); want 'go %s' in %s\n", strings.Join(args, " "), wd, err, strings.Join(want, " "), root)
		return 1
	}
	if err := os.Symlink(os.Getenv(fakeGoProgram), args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "fake go:", err)
		return 1
	}
	return 0
}
