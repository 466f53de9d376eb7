package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// companions is the folder of the stand-in companion commands, made by
// the first companionOnPath of the test binary; TestMain removes it.
var companions struct {
	mu  sync.Mutex
	dir string
}

// companionOnPath puts the companion NAME (retrysim-plot, retrysim-proxy)
// into a temporary directory (the first call puts both) and that
// directory first on $PATH for the test. Each is this test binary, which
// TestMain runs as a stand-in under that name: standInPlot for
// retrysim-plot (the real command, a module of its own with the chart
// libraries, is tested there, the CLI's --plot with it), and for
// retrysim-proxy this package's Main with standInServe as the proxy's
// server (the real program's errors are cmd/retrysim-proxy's tests, its
// HTTP serving proxy's), so that no test here builds a program.
func companionOnPath(t *testing.T, name string) string {
	t.Helper()
	c := &companions
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "retrysim-companions-")
		if err != nil {
			t.Fatal(err)
		}
		self, err := os.Executable()
		for _, n := range []string{plotCommand, proxyCommand} {
			if err == nil {
				err = os.Symlink(self, filepath.Join(dir, n))
			}
		}
		if err != nil {
			os.RemoveAll(dir)
			t.Fatal(err)
		}
		c.dir = dir
	}
	if name != plotCommand && name != proxyCommand {
		t.Fatalf("%s: no stand-in for that companion", name)
	}
	t.Setenv("PATH", c.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return c.dir
}

// standInPlot is retrysim-plot as this test binary runs it: it checks its
// command line is "[-tune] -o FILE -", then writes FILE as that command
// line, a newline and what it read on its standard input (the partial
// result or tune report the CLI pipes to it); an error exits 1 saying
// why on stderr, as the real command does.
func standInPlot(args []string) int {
	n := len(args)
	if n < 3 || n > 4 || args[n-3] != "-o" || args[n-1] != "-" || (n == 4 && args[0] != "-tune") {
		fmt.Fprintf(os.Stderr, "retrysim-plot (stand-in): command line %q, want [-tune] -o FILE -\n", args)
		return 2
	}
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		err = os.WriteFile(args[n-2], append([]byte(strings.Join(args, " ")+"\n"), in...), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "retrysim-plot (stand-in):", err)
		return 1
	}
	return 0
}

// TestPlotPipes: --plot prints the output it prints without, then pipes
// to 'retrysim-plot -o FILE -' the result as one partial (what 'fleet
// --json --shard 0/1' prints; for merge, what 'fleet merge --json --shard
// 0/1' prints), and for tune the report as --json prints it, to
// 'retrysim-plot -tune -o FILE -'. The charts themselves are the module
// cmd/retrysim-plot's tests (its TestFleetPlot and TestTunePlot run this
// CLI with the real command).
func TestPlotPipes(t *testing.T) {
	companionOnPath(t, plotCommand)
	out := t.TempDir()
	piped := func(path string) string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	run := []string{"fleet", "--sessions", "60", "--seeds", "1-2", "--outage", "2s,5s,529"}
	code, table, errOut := runMain(t, run...)
	_, whole, _ := runMain(t, append(run, "--json", "--shard", "0/1")...)
	if code != exitOK || !strings.HasPrefix(whole, "{") {
		t.Fatalf("exit %d: %s\n%s", code, errOut, whole)
	}
	png := filepath.Join(out, "fleet.png")
	code, plotted, errOut := runMain(t, append(run, "--plot", png)...)
	if code != exitOK || errOut != "" || plotted != table {
		t.Fatalf("--plot: exit %d, stderr %q; the table differs from the run's without --plot:\n%s\n---\n%s", code, errOut, plotted, table)
	}
	if got, want := piped(png), "-o "+png+" -\n"+whole; got != want {
		t.Errorf("fleet --plot piped:\n%.300s\nwant:\n%.300s", got, want)
	}

	var shards []string
	for i, sh := range []string{"0/2", "1/2"} {
		code, part, errOut := runMain(t, append(run, "--json", "--shard", sh)...)
		if code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", sh, code, errOut)
		}
		shards = append(shards, filepath.Join(out, fmt.Sprintf("s%d.json", i)))
		if err := os.WriteFile(shards[i], []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, mergedWhole, _ := runMain(t, append([]string{"fleet", "merge", "--json", "--shard", "0/1"}, shards...)...)
	svg := filepath.Join(out, "merged.svg")
	code, mergedTable, errOut := runMain(t, append([]string{"fleet", "merge", "--plot", svg}, shards...)...)
	if code != exitOK || errOut != "" || mergedTable != table {
		t.Fatalf("merge --plot: exit %d, stderr %q:\n%s", code, errOut, mergedTable)
	}
	if got, want := piped(svg), "-o "+svg+" -\n"+mergedWhole; got != want || mergedWhole != whole {
		t.Errorf("fleet merge --plot piped:\n%.300s\nwant:\n%.300s\n(merged equals the whole run's: %v)", got, want, mergedWhole == whole)
	}

	dir := writeFiles(t, map[string]string{"small.yaml": tuneFleet()})
	tuneRun := append([]string{"tune", filepath.Join(dir, "small.yaml")}, tuneArgs...)
	_, report, _ := runMain(t, append(tuneRun, "--json")...)
	chart := filepath.Join(out, "tune.png")
	if code, _, errOut := runMain(t, append(tuneRun, "--plot", chart)...); code != exitOK {
		t.Fatalf("tune --plot: exit %d: %s", code, errOut)
	}
	if got, want := piped(chart), "-tune -o "+chart+" -\n"+report; got != want || !strings.HasPrefix(report, "{") {
		t.Errorf("tune --plot piped:\n%.300s\nwant:\n%.300s", got, want)
	}
}

// TestFleetPlotChecks: what --plot needs is checked before the run, and a
// chart that cannot be written is exit 1 after the table is printed.
func TestFleetPlotChecks(t *testing.T) {
	companionOnPath(t, plotCommand)
	out := t.TempDir()
	shard := filepath.Join(out, "s0.json")
	code, part, errOut := runMain(t, "fleet", "--sessions", "20", "--seeds", "1-2", "--json", "--shard", "0/2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(shard, []byte(part), 0o644); err != nil {
		t.Fatal(err)
	}
	isDir := filepath.Join(out, "dir.png")
	if err := os.Mkdir(isDir, 0o755); err != nil {
		t.Fatal(err)
	}
	newPNG := filepath.Join(out, "new.png")
	for _, c := range []struct {
		args []string
		want string
	}{
		// An unwritable path: found before the run (nothing printed).
		{[]string{"fleet", "--sessions", "20", "--plot", filepath.Join(out, "missing", "x.png")}, "--plot: open " + filepath.Join(out, "missing", "x.png") + ": no such file or directory (checked before the run)"},
		{[]string{"fleet", "--sessions", "20", "--plot", isDir}, "is a directory (checked before the run)"},
		{[]string{"fleet", "--sessions", "20", "--plot", filepath.Join(out, "x.jpg")}, `--plot: "` + filepath.Join(out, "x.jpg") + `": unknown image format ".jpg" (allowed: a file ending in .png or .svg)`},
		{[]string{"fleet", "merge", "--plot", filepath.Join(out, "missing", "x.png"), shard}, "(checked before the run)"},
		{[]string{"fleet", "--sessions", "20", "--json", "--shard", "0/2", "--plot", newPNG}, "--plot draws a whole result: not with --shard"},
		// A failed merge (shard 1/2 missing) leaves no new file.
		{[]string{"fleet", "merge", "--plot", newPNG, shard}, "shard 1/2 missing"},
	} {
		code, stdout, errOut := runMain(t, c.args...)
		if code != exitUsage || stdout != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr:\n%s\nwant %q", c.args, code, stdout, errOut, c.want)
		}
	}
	if _, err := os.Stat(newPNG); err == nil {
		t.Error("new.png was left behind")
	}

	// retrysim-plot missing (not beside retrysim, not on $PATH): a usage
	// error saying how to install it, before the run.
	t.Run("missing command", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		code, stdout, errOut := runMain(t, "fleet", "--sessions", "20", "--plot", newPNG)
		if code != exitUsage || stdout != "" || !strings.Contains(errOut, "retrysim-plot") || !strings.Contains(errOut, "cd cmd/retrysim-plot && go install .") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, errOut)
		}
		if _, err := os.Stat(newPNG); err == nil {
			t.Error("new.png was created")
		}
	})

	// A write error (a link to /dev/full, where writes fail): the table is
	// printed all the same, then exit 1 saying why.
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	full := filepath.Join(out, "full.png")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Skip(err)
	}
	_, table, _ := runMain(t, "fleet", "--sessions", "20")
	code, stdout, errOut := runMain(t, "fleet", "--sessions", "20", "--plot", full)
	if code != exitFail || stdout != table || !strings.Contains(errOut, "no space left on device") ||
		!strings.Contains(errOut, "--plot "+full+": the chart was not drawn") {
		t.Errorf("write error: exit %d, stderr:\n%s\nstdout:\n%s", code, errOut, stdout)
	}
}

// TestPlotFromSource: in a clone, with retrysim-plot neither beside
// retrysim nor on $PATH, --plot builds it with the go command in its own
// module's folder (cmd/retrysim-plot) into the user's cache, and runs it
// (the go command here is this test binary: fakeGo).
func TestPlotFromSource(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, out := t.TempDir(), t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "go")); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // the companion goes to a new cache
	t.Setenv("PATH", bin)             // go, and no companion
	t.Setenv(fakeGoProgram, self)     // linked as retrysim-plot: the stand-in
	t.Setenv(fakeGoRoot, root)
	png := filepath.Join(out, "x.png")
	code, _, errOut := runMain(t, "fleet", "--sessions", "20", "--plot", png)
	b, err := os.ReadFile(png)
	if code != exitOK || err != nil || !strings.HasPrefix(string(b), "-o "+png+" -\n{") {
		t.Fatalf("exit %d, stderr %q, %s: %.100q (%v)", code, errOut, png, b, err)
	}
	if _, err := os.Lstat(filepath.Join(cache, "retrysim", "companions", plotCommand)); err != nil {
		t.Errorf("the companion is not in the user's cache: %v", err)
	}
}

// TestLightDependencies: the root module's packages and their tests (what
// README's go test ./... builds, retrysim among them) link no network or
// HTTP stack (net, net/http, crypto/tls: the modules proxy/ and
// cmd/retrysim-proxy/ link them, SPEC.md §18.4), and the root module
// requires no chart library (gonum.org/v1/plot: the module
// cmd/retrysim-plot's, §15.7), so that retrysim's first build and the
// tests on empty caches stay small; the companions' graph and go.mod do
// hold them, so each check can fail.
func TestLightDependencies(t *testing.T) {
	t.Parallel() // a process of its own: its waits overlap the others'
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed:", err)
	}
	// No package of this module can import a chart library unless its
	// go.mod requires one; retrysim-plot's module does.
	for _, c := range []struct {
		gomod string
		want  bool
	}{{"../../../go.mod", false}, {"../../" + plotCommand + "/go.mod", true}} {
		if got := requires(t, goCmd, c.gomod, "gonum.org/v1/plot"); got != c.want {
			t.Errorf("%s requires gonum.org/v1/plot: %v, want %v", c.gomod, got, c.want)
		}
	}
	// graph is each package of the module in dir (with its tests' when
	// withTests: "P [P.test]") and of its dependencies, with the packages
	// it imports.
	graph := func(dir string, withTests bool) map[string][]string {
		args := []string{"list", "-deps", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "./..."}
		if withTests {
			args = append(args[:2], append([]string{"-test"}, args[2:]...)...)
		}
		list := exec.Command(goCmd, args...)
		list.Dir = dir
		out, err := list.CombinedOutput()
		if err != nil {
			t.Fatalf("go %v in %s: %v\n%s", args, dir, err, out)
		}
		g := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, "\t") // a test's package: "P [P.test]"
			g[pkg] = strings.Fields(imports)
		}
		return g
	}
	heavy := []string{"net", "net/http", "crypto/tls"}
	root := graph("../../..", true)
	if _, ok := root["github.com/ohmypi/retryfsm/cmd/retrysim"]; !ok {
		t.Fatalf("go list printed no retrysim in the root module's graph: %d packages", len(root))
	}
	for pkg, imports := range root {
		if first, _, _ := strings.Cut(pkg, "/"); !strings.Contains(first, ".") {
			continue // the standard library's own imports: the one at fault is a package below
		}
		for _, h := range heavy {
			if slices.Contains(imports, h) {
				t.Errorf("%s imports %s: in the root module only the proxy's modules (proxy/, cmd/%s/) may link it", pkg, h, proxyCommand)
			}
		}
	}
	companion := graph("../../"+proxyCommand, false)
	for _, h := range heavy {
		if _, ok := companion[h]; !ok {
			t.Errorf("%s's dependencies do not include %s: the check above would see nothing", proxyCommand, h)
		}
	}
}

// requires reports whether the go.mod file at gomod requires module
// (read by 'go mod edit -json', which downloads nothing).
func requires(t *testing.T, goCmd, gomod, module string) bool {
	t.Helper()
	out, err := exec.Command(goCmd, "mod", "edit", "-json", gomod).Output()
	if err != nil {
		t.Fatalf("go mod edit -json %s: %v", gomod, err)
	}
	var f struct{ Require []struct{ Path string } }
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatalf("go mod edit -json %s: %v", gomod, err)
	}
	return slices.ContainsFunc(f.Require, func(r struct{ Path string }) bool { return r.Path == module })
}
