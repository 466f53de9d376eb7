package fleet_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/trace"
)

var updateDigests = flag.Bool("update-digests", false, "rewrite testdata/result-digests.txt from this code's results")

// digestCase is one fleet whose every result byte is pinned: its whole
// partial result (histograms and series included) and, when traced, every
// record and wire call of every session.
type digestCase struct {
	name   string
	cfgs   func(t *testing.T) []fleetspec.Config
	traced bool
}

func defaultAt(sessions int, seed int64, edit func(*fleetspec.Config)) func(*testing.T) []fleetspec.Config {
	return func(*testing.T) []fleetspec.Config {
		c := fleetspec.Default(sessions)
		c.Seed = seed
		if edit != nil {
			edit(&c)
		}
		return []fleetspec.Config{c}
	}
}

func fleetFile(name string, edit func(*fleetspec.Config)) func(*testing.T) []fleetspec.Config {
	return func(t *testing.T) []fleetspec.Config {
		spec, err := fleetspec.Load(filepath.Join("..", "fleets", name))
		if err != nil {
			t.Fatal(err)
		}
		cfgs := spec.Configs()
		if edit != nil {
			for i := range cfgs {
				edit(&cfgs[i])
			}
		}
		return cfgs
	}
}

// everything is a fleet with every profile, capacity, outages of every
// kind, background errors and overflows (TestFleetSessionsAreSimSessions').
func everything(c *fleetspec.Config) {
	c.Rate = 20
	c.PromptErrors = fleetspec.PromptErrors{}
	c.Calls = fleetspec.Dist{Kind: fleetspec.DistGeometric, A: 3}
	c.Latency = fleetspec.Dist{Kind: fleetspec.DistLogNormal, A: float64(time.Second), B: 0.6}
	c.ErrorLatency = fleetspec.Dist{Kind: fleetspec.DistUniform, A: float64(20 * time.Millisecond), B: float64(300 * time.Millisecond)}
	c.Capacity = fleetspec.Capacity{RPS: 30, Burst: 30}
	c.OverCapacity = fleetspec.OverCapacity{Hint: fleetspec.HintText}
	c.Outages = []fleetspec.Outage{{Start: 5 * time.Second, Duration: 5 * time.Second, Kind: fleetspec.Kind529},
		{Start: 15 * time.Second, Duration: 3 * time.Second, Kind: fleetspec.KindNetwork},
		{Start: 25 * time.Second, Duration: 5 * time.Second, Kind: fleetspec.KindUsageLimit, RetryAfter: time.Hour},
		{Start: 35 * time.Second, Duration: 5 * time.Second, Kind: fleetspec.Kind429, RetryAfter: 40 * time.Second}}
	c.Errors = []fleetspec.Rate{{Kind: fleetspec.Kind503, P: 0.03}, {Kind: fleetspec.Kind500, P: 0.02}, {Kind: fleetspec.Kind429, P: 0.02}}
	c.Overflow = 0.03
	// The profiles the digests were taken with, named: a profile added to
	// the registry later does not change this fleet (and one with a
	// provider layer could not join a mix of single-layer profiles).
	names := []string{"omp-2026-02", "omp-2026-06", "pi", "codex", "gemini-cli", "opencode", "aider",
		"anthropic-sdk", "openai-sdk", "anthropic-sdk-go", "openai-sdk-go"}
	c.Profiles = nil
	for _, name := range names {
		c.Profiles = append(c.Profiles, fleetspec.Share{Profile: name, Percent: 100.0 / float64(len(names))})
	}
}

var digestCases = []digestCase{
	{name: "default-1000-seed1", cfgs: defaultAt(1000, 1, nil)},
	{name: "default-200000-seed1", cfgs: defaultAt(200_000, 1, nil)},
	{name: "default-50000-seed2", cfgs: defaultAt(50_000, 2, nil)},
	{name: "default-50000-seed3", cfgs: defaultAt(50_000, 3, nil)},
	{name: "default-50000-seed77", cfgs: defaultAt(50_000, 77, nil)},
	{name: "default-20000-rate0", cfgs: defaultAt(20_000, 5, func(c *fleetspec.Config) { c.Rate = 0 })},
	{name: "default-2000-traced", cfgs: defaultAt(2000, 4, nil), traced: true},
	{name: "default-sdk", cfgs: defaultAt(5000, 6, func(c *fleetspec.Config) { c.SDK = "omp-2026-06" })},
	{name: "default-prompts-think", cfgs: defaultAt(5000, 7, func(c *fleetspec.Config) {
		c.Prompts = 4
		c.Think = fleetspec.Dist{Kind: fleetspec.DistExp, A: float64(3 * time.Second)}
		c.Calls = fleetspec.Dist{Kind: fleetspec.DistUniform, A: 1, B: 5}
	})},
	{name: "default-horizon-inflight", cfgs: defaultAt(5000, 8, func(c *fleetspec.Config) {
		c.Horizon = 30 * time.Second
		c.Capacity = fleetspec.Capacity{MaxInFlight: 40}
		c.Latency = fleetspec.Dist{Kind: fleetspec.DistExp, A: float64(2 * time.Second)}
	})},
	{name: "everything", cfgs: defaultAt(900, 9, everything), traced: true},
	{name: "everything-sdk-compaction-fail", cfgs: defaultAt(2000, 10, func(c *fleetspec.Config) {
		everything(c)
		c.SDK = "omp-2026-02"
		c.Compaction = fleetspec.Compaction{Enabled: true}
		c.Prompts = 3
	}), traced: true},
	{name: "outage-529", cfgs: fleetFile("outage-529.yaml", nil)},
	{name: "outage-529-seed4", cfgs: fleetFile("outage-529.yaml", func(c *fleetspec.Config) { c.Seed = 4 })},
	{name: "quota-window", cfgs: fleetFile("quota-window.yaml", nil)},
	{name: "rate-limited", cfgs: fleetFile("rate-limited.yaml", nil)},
	{name: "rate-limited-traced", cfgs: fleetFile("rate-limited.yaml", func(c *fleetspec.Config) { c.Seed = 3; c.Sessions = 300 }), traced: true},
}

// digestTracer writes a session's records and calls into a shared hash.
type digestTracer struct {
	h    hash.Hash
	json trace.Writer
}

func (d *digestTracer) Record(r *trace.Record) { d.json.Record(r) }

func (d *digestTracer) Call(m policy.AssistantMessage, latency time.Duration) {
	fmt.Fprintf(d.h, "call %q %q %d %v %v\n", m.StopReason, m.ErrorMessage, m.Status, m.Headers, latency)
}

// digest runs c's fleets and hashes their whole partial result (and their
// traces).
func (c *digestCase) digest(t *testing.T) string {
	h := sha256.New()
	cfgs := c.cfgs(t)
	if c.traced {
		for _, cfg := range cfgs {
			var tracers []*digestTracer
			res, err := runConfig(cfg, fleet.Options{Trace: func(info fleet.SessionInfo) fleet.Tracer {
				d := &digestTracer{h: sha256.New()}
				fmt.Fprintf(d.h, "session %+v\n", info)
				tracers = append(tracers, d)
				return d
			}})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range tracers {
				d.h.Write(d.json.Bytes())
				h.Write(d.h.Sum(nil))
			}
			out, err := res.JSON()
			if err != nil {
				t.Fatal(err)
			}
			h.Write(out)
		}
	}
	p, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), fleet.Options{Shard: fleet.Shard{Index: 0, Count: 1}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.JSON()
	if err != nil {
		t.Fatal(err)
	}
	h.Write(out)
	return hex.EncodeToString(h.Sum(nil))
}

// TestResultBytesUnchanged pins every byte of the results of a set of
// fleets (the default fleet at several sizes and seeds, with an SDK layer,
// several prompts, a horizon; a fleet with every profile, outage kind and
// error; the ready fleets of fleets/), and of every traced session's
// records and calls: a change that makes the simulator faster must not
// change one. The digests were taken from the code before the issue 23 §4
// speed-up; -update-digests rewrites them (only for a change that means to
// change results).
func TestResultBytesUnchanged(t *testing.T) {
	path := filepath.Join("testdata", "result-digests.txt")
	want := map[string]string{}
	if !*updateDigests {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if name, d, ok := strings.Cut(sc.Text(), " "); ok {
				want[name] = d
			}
		}
		f.Close()
	}
	var lines []string
	for _, c := range digestCases {
		got := c.digest(t)
		lines = append(lines, c.name+" "+got)
		if *updateDigests {
			continue
		}
		if w, ok := want[c.name]; !ok {
			t.Errorf("%s: no digest in %s (run with -update-digests)", c.name, path)
		} else if got != w {
			t.Errorf("%s: results changed: digest %s, want %s", c.name, got, w)
		}
	}
	if *updateDigests {
		slices.Sort(lines)
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
