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

// TestProxyCommandErrors: "retrysim proxy ARGS" runs the companion as
// "retrysim-proxy proxy ARGS" and answers with its exit status and
// output: here a stand-in (this test binary running Main with
// standInServe as the server, as retrysim-proxy runs it with its HTTP
// server), whose usage errors are the command's own checks and whose
// server shows the run it was handed. The real program's errors for a bad
// script or address are cmd/retrysim-proxy's TestProxyErrors.
func TestProxyCommandErrors(t *testing.T) {
	companionOnPath(t, proxyCommand)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"proxy", "--listen="}, 2, `--listen: an empty address (it would listen on every interface, at a random port); give HOST:PORT, e.g. 127.0.0.1:8787`},
		{[]string{"proxy", "--max-body", "0"}, 2, `--max-body: "0" is not a positive number of bytes`},
		{[]string{"proxy", "a", "b"}, 2, `one SCRIPT at most`},
		{[]string{"proxy", "--listen", "nonsense", "--upstream", "ftp://x", "--max-body", "10", "s.yaml"}, 3, `retrysim-proxy (stand-in): script "s.yaml", listen "nonsense", upstream "ftp://x", max body 10`},
	} {
		code, _, errOut := runMain(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

// standInServe is the proxy's server of the stand-in retrysim-proxy
// (companionOnPath): it says what it was to serve and exits 3.
func standInServe(ctx context.Context, run *ProxyRun) int {
	fmt.Fprintf(run.Stderr, "retrysim-proxy (stand-in): script %q, listen %q, upstream %q, max body %d\n", run.Script, run.Listen, run.Upstream, run.MaxBody)
	return 3
}

// TestProxyCompanionMissing: without retrysim-proxy beside retrysim or on
// $PATH, "retrysim proxy" is a usage error saying how to get it, and
// "retrysim proxy --help" and a flag error still answer (retrysim knows
// the command's flags).
func TestProxyCompanionMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, out, errOut := runMain(t, "proxy", "--listen", "127.0.0.1:0")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "retrysim proxy: this command is the program retrysim-proxy (so that retrysim links no HTTP server)") ||
		!strings.Contains(errOut, "cd cmd/retrysim-proxy && go install .") || !strings.Contains(errOut, "go run ./cmd/retrysim proxy ...") {
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
	if code != exitUsage || got != nil || !strings.Contains(errOut.String(), "cd cmd/retrysim-proxy && go install .") {
		t.Errorf("without: exit %d, served %v, stderr %q; want 2 asking for retrysim-proxy", code, got != nil, errOut.String())
	}
}

// TestCompanionFromSource: in a clone, with the companion neither beside
// retrysim nor on $PATH, "retrysim proxy" builds retrysim-proxy from the
// clone's source and runs it (README's 'go run ./cmd/retrysim proxy'
// works as written); it used to exit 2 asking to install it. The go
// command on $PATH is this test binary (TestMain, as fakeGo), which checks
// the build it is asked for and gives the stand-in retrysim-proxy
// (companionOnPath); TestCompanionFromSourceBuilds runs the real go build
// and the real program.
func TestCompanionFromSource(t *testing.T) {
	standIn := filepath.Join(companionOnPath(t, proxyCommand), proxyCommand)
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
	t.Setenv(fakeGoProgram, standIn)
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
// under the name go): "go build -o OUT ." in the root's cmd/NAME, NAME
// the companion OUT is named after (retrysim-proxy, retrysim-plot: each a
// module of its own), links $RETRYSIM_TEST_FAKE_GO_PROGRAM at OUT; any
// other command line, or another folder, exits 1 saying so.
func fakeGo(args []string) int {
	wd, err := os.Getwd()
	root := os.Getenv(fakeGoRoot)
	want, dir := []string{"build", "-o", "OUT", "."}, "the companion's folder"
	if len(args) == len(want) {
		want[2] = args[2]
		dir = filepath.Join(root, "cmd", filepath.Base(args[2]))
	}
	if err != nil || wd != dir || !slices.Equal(args, want) {
		fmt.Fprintf(os.Stderr, "fake go: 'go %s' in %s (%v); want 'go %s' in %s\n", strings.Join(args, " "), wd, err, strings.Join(want, " "), dir)
		return 1
	}
	if err := os.Symlink(os.Getenv(fakeGoProgram), args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "fake go:", err)
		return 1
	}
	return 0
}
