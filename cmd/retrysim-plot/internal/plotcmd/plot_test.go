package plotcmd

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// TestMain runs the tests, or runs as retrysim-plot when this test binary
// is run under that name (the CLI's --plot, cli_test.go).
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == plotCommand {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// writePartials runs a two-seed sweep of a fleet with an outage in n
// shards and writes their partial results to dir; it returns their paths.
func writePartials(t *testing.T, dir string, n int) []string {
	t.Helper()
	var cfgs []fleetspec.Config
	for seed := int64(1); seed <= 2; seed++ {
		c := fleetspec.Default(50)
		c.Outages = []fleetspec.Outage{{Start: 2 * time.Second, Duration: 5 * time.Second, Kind: fleetspec.Kind529}}
		c.PromptErrors = fleetspec.PromptErrors{Count: 0, Kind: fleetspec.Kind529}
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	var paths []string
	for i := range n {
		p, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), fleet.Options{Shard: fleet.Shard{Index: i, Count: n}, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		data, err := p.JSON()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "s"+string(rune('0'+i))+".json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestPlot: a whole sweep (shard 0/1) draws a PNG, two shards merged draw
// an SVG; a bad format, no partials, a partial missing from a split or a
// file that is not a partial are usage errors naming it, and write nothing.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	whole := writePartials(t, dir, 1)
	pngPath := filepath.Join(dir, "fleet.png")
	var stderr bytes.Buffer
	if code := Main([]string{"-o", pngPath, whole[0]}, nil, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 500 {
		t.Fatalf("%s: not a PNG of the fleet: %v", pngPath, err)
	}

	sub := t.TempDir()
	shards := writePartials(t, sub, 2)
	svgPath := filepath.Join(dir, "merged.svg")
	stderr.Reset()
	if code := Main(append([]string{"-o", svgPath}, shards...), nil, &stderr); code != exitOK {
		t.Fatalf("merged: exit %d: %s", code, stderr.String())
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil || !bytes.HasPrefix(svg, []byte("<?xml")) || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("%s: %v\n%.200s", svgPath, err, svg)
	}

	// A whole result (--json, no series): the error says how to get a
	// partial of the merged sweep.
	parts := make([]*fleet.Partial, len(shards))
	for i, path := range shards {
		if parts[i], err = fleet.ReadPartialFile(path, fleet.MaxPartialSize); err != nil {
			t.Fatal(err)
		}
	}
	res, err := fleet.MergePartials(parts, shards)
	if err != nil {
		t.Fatal(err)
	}
	wholeJSON, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	wholeResult := filepath.Join(dir, "merged.json")
	if err := os.WriteFile(wholeResult, wholeJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte(`{"x":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.jpg")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", bad, whole[0]}, `retrysim-plot: -o: "` + bad + `": unknown image format ".jpg" (allowed: a file ending in .png or .svg)`},
		{[]string{"-o", filepath.Join(dir, "x.png")}, "retrysim-plot: no partial results"},
		{[]string{"-o", filepath.Join(dir, "x.png"), shards[0]}, "retrysim-plot: shard 1/2 missing"},
		{[]string{"-o", filepath.Join(dir, "x.png"), junk}, "retrysim-plot: " + junk + ": "},
		{[]string{"-o", filepath.Join(dir, "x.png"), wholeResult}, "retrysim-plot: " + wholeResult + ": shard: missing: not a partial result (retrysim fleet --shard I/N --json writes one)" + wholeResultHint},
		{[]string{"-o", filepath.Join(dir, "x.png"), filepath.Join(dir, "missing.json")}, "missing.json"},
	} {
		stderr.Reset()
		code := Main(c.args, nil, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr:\n%s\nwant %q", c.args, code, stderr.String(), c.want)
		}
	}
	for _, p := range []string{bad, filepath.Join(dir, "x.png")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// Over the size bound: a usage error saying so.
	defer func(old int64) { maxPartialSize = old }(maxPartialSize)
	maxPartialSize = 10
	stderr.Reset()
	if code := Main([]string{"-o", filepath.Join(dir, "y.png"), whole[0]}, nil, &stderr); code != exitUsage ||
		!strings.Contains(stderr.String(), "larger than 10 bytes") {
		t.Errorf("over the bound: exit %d, stderr %s", code, stderr.String())
	}
}

// TestPlotStdin: "-" reads a partial result from stdin (what 'retrysim
// fleet --plot' pipes); given twice, or not a partial, it is a usage error
// and nothing is written.
func TestPlotStdin(t *testing.T) {
	dir := t.TempDir()
	whole := writePartials(t, dir, 1)
	data, err := os.ReadFile(whole[0])
	if err != nil {
		t.Fatal(err)
	}
	svgPath := filepath.Join(dir, "stdin.svg")
	var stderr bytes.Buffer
	if code := Main([]string{"-o", svgPath, "-"}, bytes.NewReader(data), &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	fromStdin, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	// The same image as from the file.
	filePath := filepath.Join(dir, "file.svg")
	if code := Main([]string{"-o", filePath, whole[0]}, nil, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	fromFile, err := os.ReadFile(filePath)
	if err != nil || !bytes.Equal(fromStdin, fromFile) || !bytes.Contains(fromStdin, []byte("<svg")) {
		t.Fatalf("stdin and file draw differently (%v)", err)
	}
	for _, c := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"-o", filepath.Join(dir, "x.svg"), "-", "-"}, string(data), "retrysim-plot: -: stdin given twice"},
		{[]string{"-o", filepath.Join(dir, "x.svg"), "-"}, `{"x":1}`, "retrysim-plot: -: "},
		{[]string{"-o", filepath.Join(dir, "x.svg"), "-"}, "", "retrysim-plot: -: "},
	} {
		stderr.Reset()
		if code := Main(c.args, strings.NewReader(c.stdin), &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, code, stderr.String(), c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.svg")); err == nil {
		t.Error("x.svg was written")
	}
}

// TestPlotWriteError: a file that cannot be written (here a link to
// /dev/full, where every write fails) is exit 1 saying why.
func TestPlotWriteError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	dir := t.TempDir()
	whole := writePartials(t, dir, 1)
	full := filepath.Join(dir, "full.png")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Skip(err)
	}
	var stderr bytes.Buffer
	if code := Main([]string{"-o", full, whole[0]}, nil, &stderr); code != exitFail || !strings.Contains(stderr.String(), "no space left on device") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
