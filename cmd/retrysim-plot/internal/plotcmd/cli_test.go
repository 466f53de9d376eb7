package plotcmd

// The command line's --plot end to end (fleet, fleet merge, tune): the
// retrysim CLI (package cli) pipes its result to retrysim-plot, which is
// this test binary run under that name (TestMain), so the charts are
// drawn as the installed command draws them. The CLI's own tests, in the
// root module, link no chart library: they check what --plot pipes to a
// stand-in command.

import (
	"bytes"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ohmypi/retryfsm/cmd/internal/cli"
)

// plotCommand is the companion's name the CLI looks for.
const plotCommand = "retrysim-plot"

// plotOnPath puts this test binary, named retrysim-plot, into a new
// directory first on $PATH for the test, and returns the directory.
func plotOnPath(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, plotCommand)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// runMain runs the retrysim CLI with args.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Main(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeFiles writes name -> content into a new temporary directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// tuneFleet is the CLI tests' small fleet file: a 529 outage over a
// capacity, read when a test first needs it (this test binary also runs
// as retrysim-plot).
var tuneFleet = sync.OnceValue(func() string {
	b, err := os.ReadFile("../../../internal/cli/testdata/tune-small.yaml")
	if err != nil {
		panic(err)
	}
	return string(b)
})

// tuneArgs is a small tune of tuneFleet.
var tuneArgs = []string{"--axes", "maxRetries=1,4,8;baseDelayMs=200,1000;jitter=none,full", "--seeds", "2"}

// TestFleetPlot: --plot on a run prints the same output as without it and
// draws the result (a PNG, or an SVG with --json); on merge, the image is
// the one retrysim-plot draws from the shards themselves.
func TestFleetPlot(t *testing.T) {
	dir := plotOnPath(t)
	out := t.TempDir()
	run := []string{"fleet", "--sessions", "60", "--seeds", "1-2", "--outage", "2s,5s,529"}
	code, table, errOut := runMain(t, run...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pngPath := filepath.Join(out, "fleet.png")
	code, plotted, errOut := runMain(t, append(run, "--plot", pngPath)...)
	if code != 0 || errOut != "" || plotted != table {
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
	if code, got, errOut := runMain(t, append(run, "--json", "--plot", svgPath)...); code != 0 || got != jsonOut {
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
		if code != 0 {
			t.Fatalf("shard %s: exit %d: %s", sh, code, errOut)
		}
		shards = append(shards, filepath.Join(out, "s"+string(rune('0'+i))+".json"))
		if err := os.WriteFile(shards[i], []byte(part), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merged := filepath.Join(out, "merged.svg")
	code, mergedTable, errOut := runMain(t, append([]string{"fleet", "merge", "--plot", merged}, shards...)...)
	if code != 0 || errOut != "" || mergedTable != table {
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

// TestTunePlot: --plot draws the report with retrysim-plot -tune: a PNG.
func TestTunePlot(t *testing.T) {
	plotOnPath(t)
	dir := writeFiles(t, map[string]string{"small.yaml": tuneFleet()})
	chart := filepath.Join(dir, "tune.png")
	code, _, errOut := runMain(t, append([]string{"tune", "--plot", chart, filepath.Join(dir, "small.yaml")}, tuneArgs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 1000 {
		t.Fatalf("chart: %v, %v", err, img)
	}
}
