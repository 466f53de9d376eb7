package fleetplot

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
)

// outageSweep is a small fleet of two profiles through a 529 outage, over
// two seeds merged.
func outageSweep(t *testing.T) *fleet.Result {
	t.Helper()
	var cfgs []fleet.Config
	for seed := int64(1); seed <= 2; seed++ {
		c := fleet.Default(300)
		c.Rate = 30
		c.PromptErrors = fleet.PromptErrors{}
		c.Capacity = fleet.Capacity{RPS: 40, Burst: 40}
		c.Outages = []fleet.Outage{{Start: 3 * time.Second, Duration: 20 * time.Second, Kind: fleet.Kind529}}
		c.Profiles = fleet.Mix{{Profile: "omp-2026-02", Percent: 50}, {Profile: "omp-2026-06", Percent: 50}}
		c.Calls = fleet.Dist{Kind: fleet.DistUniform, A: 1, B: 4}
		c.Seed = seed
		cfgs = append(cfgs, c)
	}
	res, err := fleet.Sweep(cfgs, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestDataMatchesMetrics: the lines plotted are the metrics: each
// profile's calls per bin add up to its wire calls, the rates are the
// counts over the width and the two seeds, the CDF ends at 1 and crosses 1/2 at the p50,
// and the outage is the fleet's.
func TestDataMatchesMetrics(t *testing.T) {
	res := outageSweep(t)
	d := DataOf(res)
	g := res.Groups[0]
	if len(d.Rates) != 2 || len(d.CDFs) != 2 || len(d.Outages) != 1 || d.Outages[0] != [2]time.Duration{3 * time.Second, 23 * time.Second} {
		t.Fatalf("%d rates, %d CDFs, outages %v", len(d.Rates), len(d.CDFs), d.Outages)
	}
	for i, r := range d.Rates {
		s := &g.Profiles[i]
		var sum int64
		for j, c := range r.Counts {
			sum += c
			if math.Abs(r.PerSecond[j]*r.Width.Seconds()*2-float64(c)) > 1e-9 {
				t.Fatalf("%s bin %d: %v per second over %v, count %d", r.Label, j, r.PerSecond[j], r.Width, c)
			}
		}
		if r.Label != s.Profile || r.Runs != 2 || sum != s.WireCalls || sum == 0 || r.Width != s.WireSeries.BinWidth() {
			t.Errorf("%s: the bins add up to %d, wire calls %d (%s)", r.Label, sum, s.WireCalls, s.Profile)
		}
		c := d.CDFs[i]
		if c.Label != s.Profile || c.Line != i || c.Fraction[len(c.Fraction)-1] != 1 {
			t.Fatalf("CDF %s line %d ends at %v", c.Label, c.Line, c.Fraction[len(c.Fraction)-1])
		}
		k := 0
		for c.Fraction[k] < 0.5 {
			k++
		}
		if p50 := s.Summarize(g.CapacityPer100ms).P50 / 1000; c.Seconds[k] != p50 {
			t.Errorf("%s: the CDF crosses 1/2 at %v s, p50 %v s", c.Label, c.Seconds[k], p50)
		}
	}
}

// TestWrite: a PNG that decodes, an SVG document.
func TestWrite(t *testing.T) {
	res := outageSweep(t)
	var b bytes.Buffer
	if err := Write(&b, res, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() < 500 || r.Dy() < 500 {
		t.Fatalf("image of %v", r)
	}
	b.Reset()
	if err := Write(&b, res, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "<svg") || !strings.HasSuffix(strings.TrimSpace(svg), "</svg>") ||
		!strings.Contains(svg, "omp-2026-06") {
		t.Fatalf("not an SVG document of the fleet:\n%.300s", svg)
	}
	if err := Write(&b, res, "gif"); err == nil || !strings.Contains(err.Error(), `unknown image format "gif" (allowed: png, svg)`) {
		t.Fatalf("gif: %v", err)
	}
	// A fleet where nothing succeeds still draws (an empty CDF panel).
	c := fleet.Default(5)
	c.PromptErrors = fleet.PromptErrors{}
	c.Outages = []fleet.Outage{{Start: 0, Duration: fleet.MaxDuration, Kind: fleet.Kind529}}
	none, err := fleet.Run(c, fleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := Write(&b, none, "svg"); err != nil || !strings.Contains(b.String(), "no prompt succeeded") {
		t.Fatalf("%v", err)
	}
}

func TestFormatOf(t *testing.T) {
	for _, c := range []struct{ path, want, err string }{
		{"out.png", "png", ""},
		{"dir/OUT.SVG", "svg", ""},
		{"out.jpg", "", `"out.jpg": unknown image format ".jpg" (allowed: a file ending in .png or .svg)`},
		{"out", "", `unknown image format ""`},
	} {
		got, err := FormatOf(c.path)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: %q, %v; want %q, %q", c.path, got, err, c.want, c.err)
		}
	}
}
