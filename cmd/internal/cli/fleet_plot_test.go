package cli

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ohmypi/retryfsm/internal/exetest"
)

// companionBuilds are the companion commands, linked once and kept by
// the go command's build cache (internal/exetest), each linked into one
// directory per test binary (companionOnPath); TestMain removes it.
var companionBuilds struct {
	mu    sync.Mutex
	dir   string
	built map[string]error
}

// companionOnPath links cmd/NAME (retrysim-plot, retrysim-proxy), as the
// go command keeps it in its build cache, into a temporary directory (the
// first call makes both) and puts that directory first on $PATH for the
// test.
func companionOnPath(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not installed:", err)
	}
	b := &companionBuilds
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir == "" {
		var err error
		if b.dir, err = os.MkdirTemp("", "retrysim-companions-"); err != nil {
			t.Fatal(err)
		}
		b.built = map[string]error{}
	}
	err, done := b.built[name]
	if !done {
		names := []string{plotCommand, proxyCommand}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, n := range names {
			wg.Go(func() {
				path, err := exetest.Program(".", "github.com/ohmypi/retryfsm/cmd/"+n)
				if err == nil {
					err = os.Symlink(path, filepath.Join(b.dir, n))
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, n := range names {
			b.built[n] = errs[i]
		}
		err = b.built[name]
	}
	if err != nil {
		t.Fatalf("building %s: %v", name, err)
	}
	t.Setenv("PATH", b.dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return b.dir
}

// TestFleetPlot: --plot on a run prints the same output as without it and
// draws the result (a PNG, or an SVG with --json); on merge, the image is
// the one retrysim-plot draws from the shards themselves.
func TestFleetPlot(t *testing.T) {
	dir := companionOnPath(t, plotCommand)
	out := t.TempDir()
	run := []string{"fleet", "--sessions", "60", "--seeds", "1-2", "--outage", "2s,5s,529"}
	code, table, errOut := runMain(t, run...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pngPath := filepath.Join(out, "fleet.png")
	code, plotted, errOut := runMain(t, append(run, "--plot", pngPath)...)
	if code != exitOK || errOut != "" || plotted != table {
		t.Fatalf("--plot: exit %d, stderr %q; the table differs from the run's without --plot:\n%s\n---\n%s", code, errOut, plotted, table)
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() < 500 {
		t.Fatalf("%s: not a PNG of the fleet: %v", pngPath, err)
	}
	_, jsonOut, _ := runMain(t, append(run, "--json")...)
	svgPath := filepath.Join(out, "fleet.svg")
	if code, got, errOut := runMain(t, append(run, "--json", "--plot", svgPath)...); code != exitOK || got != jsonOut {
		t.Fatalf("--json --plot: exit %d, stderr %q, the JSON differs:\n%s", code, errOut, got)
	}
	if svg, err := os.ReadFile(svgPath); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("%s: %v", svgPath, err)
	}

	// merge --plot: the shards' merged result, drawn as retrysim-plot draws
	// the shard files.
	var shards []string
	for i, sh := range []string{"0/2", "1/2"} {
		code, part, errOut := runMain(t, append(run, "--json", "--shard", sh)...)
		if code != exitOK {
			t.Fatalf("shard %s: exit %d: %s", sh, code, errOut)
		}
		shards = append(shards, filepath.Join(out, "s"+string(rune('0'+i))+".json"))
		if err := os.WriteFile(shards[i], []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merged := filepath.Join(out, "merged.svg")
	code, mergedTable, errOut := runMain(t, append([]string{"fleet", "merge", "--plot", merged}, shards...)...)
	if code != exitOK || errOut != "" || mergedTable != table {
		t.Fatalf("merge --plot: exit %d, stderr %q:\n%s", code, errOut, mergedTable)
	}
	direct := filepath.Join(out, "direct.svg")
	if b, err := exec.Command(filepath.Join(dir, "retrysim-plot"), append([]string{"-o", direct}, shards...)...).CombinedOutput(); err != nil {
		t.Fatalf("retrysim-plot: %v\n%s", err, b)
	}
	a, errA := os.ReadFile(merged)
	b, errB := os.ReadFile(direct)
	if errA != nil || errB != nil || !bytes.Equal(a, b) || !bytes.Contains(a, []byte("<svg")) {
		t.Fatalf("merge --plot draws another image than retrysim-plot over the shards (%v, %v)", errA, errB)
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
		if code != exitUsage || stdout != "" || !strings.Contains(errOut, "retrysim-plot") || !strings.Contains(errOut, "go install ./cmd/retrysim-plot") {
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

// TestLightDependencies: retrysim's import graph holds no chart library
// (gonum.org/v1/plot: retrysim-plot's, SPEC.md §15.7) and no network or
// HTTP stack (net, net/http, crypto/tls: retrysim-proxy's, §18.4), so its
// first build stays small (issue 20 §5); the companions' graphs do hold
// them, so each check can fail.
func TestLightDependencies(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not installed:", err)
	}
	// one go list for the three programs: each line is a package and its
	// dependencies (the whole graph below it)
	const module = "github.com/ohmypi/retryfsm/cmd/"
	programs := []string{module + "retrysim", module + plotCommand, module + proxyCommand}
	out, err := exec.Command(goCmd, append([]string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, programs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", programs, err, out)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			graph[f[0]] = f[1:]
		}
	}
	deps := func(pkg string) []string {
		d, ok := graph[pkg]
		if !ok {
			t.Fatalf("go list printed no dependency list for %s:\n%s", pkg, out)
		}
		return d
	}
	heavy := map[string]string{ // a heavy package's path (or prefix/) and the companion that links it
		"gonum.org/v1/plot/": plotCommand,
		"net":                proxyCommand,
		"net/http":           proxyCommand,
		"crypto/tls":         proxyCommand,
	}
	isHeavy := func(d, h string) bool {
		return d == strings.TrimSuffix(h, "/") || strings.HasSuffix(h, "/") && strings.HasPrefix(d, h)
	}
	for _, d := range deps("github.com/ohmypi/retryfsm/cmd/retrysim") {
		for h, companion := range heavy {
			if isHeavy(d, h) {
				t.Errorf("retrysim depends on %s: only cmd/%s may link it", d, companion)
			}
		}
	}
	for h, companion := range heavy {
		if !slices.ContainsFunc(deps("github.com/ohmypi/retryfsm/cmd/"+companion), func(d string) bool { return isHeavy(d, h) }) {
			t.Errorf("%s's dependencies do not include %s: the check above would see nothing", companion, h)
		}
	}
}
