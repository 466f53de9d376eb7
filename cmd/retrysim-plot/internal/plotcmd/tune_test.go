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

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/tune"
)

// tuneReport writes a small tune's report (shard sh, or the whole) to
// dir/name.
func tuneReport(t *testing.T, dir, name string, sh fleet.Shard, objectives []string) string {
	t.Helper()
	c := fleetspec.Default(40)
	c.PromptErrors = fleetspec.PromptErrors{}
	c.Capacity = fleetspec.Capacity{RPS: 10, Burst: 10}
	c.Outages = []fleetspec.Outage{{Start: time.Second, Duration: 4 * time.Second, Kind: fleetspec.Kind529}}
	tu, err := tune.New(c, tune.Options{Axes: []tune.Axis{{Name: "maxRetries", Values: []string{"1", "4"}}, {Name: "jitter", Values: []string{"none", "full"}}},
		Objectives: objectives, Seeds: 2, Shard: sh, Profiles: []string{"omp-2026-02", "omp-2026-06"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tu.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	data, _ := r.JSON()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTuneChart: -tune draws a report, from a file or stdin, as a PNG
// (or an SVG); a shard's report alone, two reports, or a report of one
// objective are errors that say so.
func TestTuneChart(t *testing.T) {
	dir := t.TempDir()
	whole := tuneReport(t, dir, "whole.json", fleet.Shard{}, nil)
	out := filepath.Join(dir, "t.png")
	var stderr bytes.Buffer
	if code := Main([]string{"-tune", "-o", out, whole}, nil, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, &stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil || img.Bounds().Dx() < 1000 {
		t.Fatalf("chart: %v", err)
	}
	data, _ := os.ReadFile(whole)
	svg := filepath.Join(dir, "t.svg")
	if code := Main([]string{"-tune", "-o", svg, "-"}, bytes.NewReader(data), &stderr); code != exitOK {
		t.Fatalf("stdin: exit %d: %s", code, &stderr)
	}
	if b, _ := os.ReadFile(svg); !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("omp-2026-06")) {
		t.Error("the SVG does not name the profiles")
	}
	shard := tuneReport(t, dir, "shard.json", fleet.Shard{Index: 1, Count: 2}, nil)
	one := tuneReport(t, dir, "one.json", fleet.Shard{}, []string{"fail"})
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-tune", "-o", out, shard}, exitUsage, "shard 0/2 missing"},
		{[]string{"-tune", "-o", out, whole, whole}, exitUsage, "draws one report"},
		{[]string{"-tune", "-o", out, one}, exitFail, "two objectives or more"},
	} {
		stderr.Reset()
		if code := Main(c.args, nil, &stderr); code != c.code || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, %s; want %d, %q", c.args, code, &stderr, c.code, c.want)
		}
	}
}
