package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/schollz/progressbar/v3"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetplot"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/term"
)

func init() {
	register(&command{
		name:  "fleet",
		args:  "[FILE...] | merge PARTIAL...",
		short: "simulate many agent sessions sharing one provider: what a retry policy does to a fleet",
		long: `Simulates a fleet: agent sessions, each running a retry profile on the
session core, sharing one provider with a capacity, outage windows and
background errors (SPEC.md §15). Each FILE is a fleet file (YAML, see
fleets/); with none, the default fleet: --sessions sessions arriving at
100 a second, each prompt one chain of three 529 answers then a success,
no capacity limit, the default profile. A flag given with files overrides
that key of every file.

A sweep runs one simulation per file x profile mix x seed (--profile
repeated, --seeds A-B, or the files' profile lists and seeds keys), on
every processor; results of one file and mix merge over the seeds (counts
add up, peaks and maxima are the largest, percentiles come from the
merged fixed-bucket histograms) and print in a fixed order, so the output
does not depend on the number of processors.

The table has one row per profile (and "all" for a mix):

    SESSIONS    sessions that arrived
    PROMPTS     prompts issued; OK, FAILED done, WAITING not done at the horizon
    CALLS/P     the agent's model calls per prompt (amplification)
    WIRE/P      requests sent to the provider per prompt (SDK retries included)
    429         requests answered 429 for being over capacity
    IN_RA       requests sent inside a retry-after window the provider gave
    FAILFAST    chains ended by the fail-fast (wait over retryAfter.maxWaitMs)
    EXHAUSTED   chains ended by running out of retries
    P50 P90 P99 MAX   time from a prompt to its success
    LONGEST     the longest retry wait armed
    PEAK        most requests in one 100 ms bin during / after an outage
    RATIO       those peaks over the provider's capacity per 100 ms

A sweep larger than one machine runs in shards: --shard I/N --json runs
every N-th run of the sweep (the runs k with k mod N = I, in the sweep's
order: files, then profile mixes, then seeds; shards are numbered from 0
to N-1) and prints its partial result, which names the sweep (a hash of
every run's settings) and the shard. 'retrysim fleet merge PARTIAL...'
reads the partial results of every shard of one split (in any order) and
prints the sweep's result, the same as the whole sweep prints (--json: the
same bytes); a shard missing or given twice, or a shard of another sweep,
is an error naming it. merge takes only --json and --plot.

--plot FILE.png or FILE.svg also draws the result (of a sweep or of merged
shards) as one image of two panels: the wire calls per second over time,
a line per profile (the mean of a sweep's seeds), with the outage windows
shaded, from each profile's 1024 time bins (100 ms wide, doubled as the
fleet runs longer); and the CDF of the time from a prompt to its success,
from the histogram.

When stderr is a terminal and the fleets run for more than a second, a
progress bar of the sessions done shows there (nothing else changes).

Exit status: 0 when the fleets ran, 2 on invalid flags, arguments or files.`,
		flags: fleetFlags,
		run:   runFleet,
	})
}

// listFlag is a repeatable flag: each use adds a value.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func fleetFlags(fs *flag.FlagSet) {
	fs.Int("sessions", 1000, "the number `N` of agent sessions (key sessions)")
	fs.Float64("rate", 100, "sessions arriving per second, a Poisson process; 0: all at t=0 (key rate)")
	fs.Int("prompts", 1, "prompts per session, one after the other (key prompts)")
	fs.String("think", "0s", "the `DIST` of the wait between a prompt's end and the next (key think)")
	fs.String("calls", "1", "the `DIST` of successful model calls a prompt needs: 3, uniform:1,5, geometric:4 (key calls)")
	fs.String("latency", "1s", "the `DIST` of a successful call's latency: 1s, uniform:1s,3s, exp:2s, lognormal:2s,0.5 (key latency)")
	fs.String("error-latency", "100ms", "the `DIST` of an error answer's latency (key errorLatency)")
	fs.String("capacity", "", "the provider's token bucket, `RPS[,BURST]` (burst default: RPS rounded up) (keys capacity.rps, capacity.burst)")
	fs.Int("max-in-flight", 0, "the provider's bound on calls in flight, 0 none (key capacity.maxInFlight)")
	fs.String("hint", "header", "how the over-capacity 429 gives its retry-after: header, text or none (key overCapacity.hint)")
	fs.Duration("retry-after", 0, "the over-capacity 429's retry-after; 0: computed from the bucket (key overCapacity.retryAfter)")
	var outages, errs, profiles listFlag
	fs.Var(&outages, "outage", "an outage window `START,DURATION,KIND[,RETRY_AFTER]`, e.g. 30s,60s,529; kinds 529, 503, 500, network, usage_limit, 429; repeatable (key outages)")
	fs.Var(&errs, "error", "a background error rate `KIND=P`, e.g. 503=0.01; repeatable (key errors)")
	fs.Float64("overflow", 0, "the rate of context-overflow answers (key overflow)")
	fs.String("prompt-errors", "", "each prompt's first wire calls fail: `COUNT,KIND`, e.g. 3,529 (key promptErrors; the default fleet's is 3,529)")
	fs.Var(&profiles, "profile", "the profile `MIX` the sessions run: NAME or NAME=P%,NAME=P%; repeated, one run each (key profile)")
	fs.String("sdk", "", "an SDK layer under every agent call, retrying with profile `NAME`'s settings (key sdk)")
	fs.Duration("horizon", 0, "stop the simulation at this virtual time; 0: when every session is done (key horizon)")
	fs.Duration("recovery", fleet.DefaultRecovery, "the window after an outage over which the after-peak is taken (key recovery)")
	fs.String("compaction", "on", "overflow compaction: on, off, or fail (it runs and fails) (key compaction)")
	fs.Int64("seed", 1, "the seed of every random draw (key seed)")
	fs.String("seeds", "", "a seed sweep `A-B`, one run per seed (key seeds)")
	fs.String("shard", "", "run shard `I/N` of the sweep (I from 0 to N-1: the runs k with k mod N = I) and print its partial result for 'retrysim fleet merge'; needs --json")
	fs.Bool("json", false, "print the results as JSON")
	fs.String("plot", "", "also draw the results to `FILE` (.png or .svg): wire calls per second over time per profile with the outages shaded, above the CDF of the time to success")
}

func runFleet(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	c := lookup("fleet")
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if len(args) > 0 && args[0] == "merge" {
		return runFleetMerge(fs, set, args[1:], stdout, stderr)
	}
	var shard *fleet.Shard
	if set["shard"] {
		sh, err := fleet.ParseShard(flagString(fs, "shard"))
		if err != nil {
			return usageError(c, stderr, "--shard: %v", err)
		}
		if flagString(fs, "json") != "true" {
			return usageError(c, stderr, "--shard prints a partial result as JSON, for 'retrysim fleet merge': give --json")
		}
		shard = &sh
	}
	plotFormat, ok := plotFlag(c, fs, set, stderr)
	if !ok {
		return exitUsage
	}
	if shard != nil && plotFormat != "" {
		return usageError(c, stderr, "--plot draws a whole sweep: plot the merged shards ('retrysim fleet merge --plot FILE PARTIAL...')")
	}
	plot, code := openPlot(fs, plotFormat, stderr)
	if code != exitOK {
		return code
	}
	defer plot.discard()
	var specs []*fleet.Spec
	if len(args) == 0 {
		specs = append(specs, fleet.NewSpec(fleet.Default(1000)))
		set["sessions"] = true // the default fleet is sized by --sessions
	}
	for _, path := range args {
		spec, err := fleet.Load(path)
		if err != nil {
			fmt.Fprintf(stderr, "retrysim fleet: %s\n", termsafe.Text(err.Error()))
			return exitUsage
		}
		specs = append(specs, spec)
	}
	for _, spec := range specs {
		if err := applyFleetFlags(spec, fs, set); err != nil {
			return usageError(c, stderr, "%v", err)
		}
		if err := spec.Validate(); err != nil {
			return usageError(c, stderr, "fleet %s: %v", spec.Config.Name, err)
		}
	}
	if shard != nil {
		// A shard is run from the sweep's definition: its time and memory
		// follow its own runs, not the sweep's.
		prog := startProgress(stderr, fleet.ShardSessions(specs, *shard))
		p, err := fleet.RunSpecsShard(specs, *shard, fleet.SweepOptions{Progress: &prog.done})
		prog.stop()
		var out []byte
		if err == nil {
			out, err = p.JSON()
		}
		if err == nil {
			_, err = stdout.Write(out)
		}
		if err != nil {
			fmt.Fprintf(stderr, "retrysim fleet: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	var cfgs []fleet.Config
	var total int64
	for _, spec := range specs {
		for _, cfg := range spec.Configs() {
			cfgs = append(cfgs, cfg)
			total += int64(cfg.Sessions)
		}
	}
	prog := startProgress(stderr, total)
	res, err := fleet.SweepWith(cfgs, fleet.SweepOptions{Progress: &prog.done})
	prog.stop()
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet: %v\n", err)
		return exitFail
	}
	return writeFleetResult(fs, plot, res, stdout, stderr)
}

// The progress bar: shown on stderr when it is a terminal and the fleets
// have run for progressAfter; progressClock is its clock. Tests replace
// both.
var (
	progressAfter             = time.Second
	progressClock clock.Clock = clock.New()
)

// progressTick is how often the bar is redrawn.
const progressTick = 100 * time.Millisecond

// fleetProgress is the progress bar of the sessions done (done, which the
// fleets add to) out of total. It writes nothing to stdout, and nothing at
// all unless stderr is a terminal.
type fleetProgress struct {
	done  atomic.Int64
	total int64
	out   *os.File // stderr, a terminal; nil: no bar
	start time.Time
	quit  chan struct{}
	wg    sync.WaitGroup
	bar   *progressbar.ProgressBar // nil until shown; the goroutine's until stop
}

// startProgress starts the bar's goroutine when stderr is a terminal: it
// shows the bar once the fleets have run for progressAfter and redraws it
// every progressTick until stop.
func startProgress(stderr io.Writer, total int64) *fleetProgress {
	p := &fleetProgress{total: total}
	f := outputFile(stderr)
	if f == nil || total <= 0 || !term.IsTerminal(f.Fd()) {
		return p
	}
	p.out, p.start, p.quit = f, progressClock.Now(), make(chan struct{})
	timer := progressClock.Timer(progressAfter)
	p.wg.Go(func() {
		defer timer.Stop()
		select {
		case <-p.quit:
			return
		case <-timer.C:
		}
		ticker := progressClock.Ticker(progressTick)
		defer ticker.Stop()
		for {
			p.show()
			select {
			case <-p.quit:
				return
			case <-ticker.C:
			}
		}
	})
	return p
}

// show draws the bar at the sessions done.
func (p *fleetProgress) show() {
	if p.bar == nil {
		out := p.out
		p.bar = progressbar.NewOptions64(p.total, progressbar.OptionSetWriter(out), progressbar.OptionSetDescription("fleet"),
			progressbar.OptionSetItsString("sessions"), progressbar.OptionShowIts(), progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30), progressbar.OptionThrottle(progressTick), progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetRenderBlankState(true), progressbar.OptionOnCompletion(func() { fmt.Fprintln(out) }))
	}
	p.bar.Set64(min(p.done.Load(), p.total))
}

// stop ends the bar's goroutine; when the fleets ran for progressAfter or
// more, the bar is drawn full, with the time taken, and the line ended.
func (p *fleetProgress) stop() {
	if p.out == nil {
		return
	}
	close(p.quit)
	p.wg.Wait()
	if p.bar == nil && progressClock.Since(p.start) < progressAfter {
		return
	}
	p.show()
	p.bar.Finish()
}

// plotFlag checks --plot's file name: its format ("" without --plot), or
// false after a usage error.
func plotFlag(c *command, fs *flag.FlagSet, set map[string]bool, stderr io.Writer) (string, bool) {
	if !set["plot"] {
		return "", true
	}
	format, err := fleetplot.FormatOf(flagString(fs, "plot"))
	if err != nil {
		usageError(c, stderr, "--plot: %s", termsafe.Text(err.Error()))
		return "", false
	}
	return format, true
}

// runFleetMerge runs "retrysim fleet merge PARTIAL...": the partial
// results of a sweep's shards merged into the sweep's result.
func runFleetMerge(fs *flag.FlagSet, set map[string]bool, paths []string, stdout, stderr io.Writer) int {
	c := lookup("fleet")
	var others []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "json" && f.Name != "plot" {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 {
		return usageError(c, stderr, "merge: %s: not a flag of merge (merge takes --json and --plot; the partial results hold their fleets' settings)", strings.Join(others, ", "))
	}
	plotFormat, ok := plotFlag(c, fs, set, stderr)
	if !ok {
		return exitUsage
	}
	if len(paths) == 0 {
		return usageError(c, stderr, "merge: no partial results (give the files 'retrysim fleet --shard I/N --json' wrote, one per shard)")
	}
	plot, code := openPlot(fs, plotFormat, stderr)
	if code != exitOK {
		return code
	}
	defer plot.discard()
	parts := make([]*fleet.Partial, len(paths))
	for i, path := range paths {
		data, err := readBounded(path, maxPartialSize)
		if err == nil {
			parts[i], err = fleet.ReadPartial(data)
		}
		if err != nil {
			fmt.Fprintf(stderr, "retrysim fleet merge: %s: %s\n", termsafe.Text(path), termsafe.Text(err.Error()))
			return exitUsage
		}
	}
	res, err := fleet.MergePartials(parts, paths)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet merge: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	return writeFleetResult(fs, plot, res, stdout, stderr)
}

// plotFile is --plot's file, opened before the fleets run so that a path
// that cannot be written is found before a long run, not after it.
type plotFile struct {
	path, format string
	f            *os.File
	created      bool // it did not exist: removed when nothing is drawn
	drawn        bool
}

// openPlot opens --plot's file for writing (nil without --plot); it
// reports an error and returns exitFail when the path cannot be written.
func openPlot(fs *flag.FlagSet, format string, stderr io.Writer) (*plotFile, int) {
	if format == "" {
		return nil, exitOK
	}
	p := &plotFile{path: flagString(fs, "plot"), format: format}
	if _, err := os.Lstat(p.path); errors.Is(err, iofs.ErrNotExist) {
		p.created = true
	}
	f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet: --plot: %s (nothing was run)\n", termsafe.Text(err.Error()))
		return nil, exitFail
	}
	p.f = f
	return p, exitOK
}

// draw writes res to the file, replacing what it held.
func (p *plotFile) draw(res *fleet.Result) error {
	p.drawn = true
	if err := p.f.Truncate(0); err != nil {
		p.f.Close()
		return err
	}
	err := fleetplot.Write(p.f, res, p.format)
	if cerr := p.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// discard closes the file when nothing was drawn, removing it if it did
// not exist before.
func (p *plotFile) discard() {
	if p == nil || p.drawn {
		return
	}
	p.f.Close()
	if p.created {
		os.Remove(p.path)
	}
}

// writeFleetResult prints res as --json or the table says, and draws it to
// --plot's file (nil: no plot). A plot that cannot be drawn is reported
// (exit 1) after the table or JSON is printed all the same.
func writeFleetResult(fs *flag.FlagSet, plot *plotFile, res *fleet.Result, stdout, stderr io.Writer) int {
	var plotErr error
	if plot != nil {
		plotErr = plot.draw(res)
	}
	var out []byte
	var err error
	if flagString(fs, "json") == "true" {
		out, err = res.JSON()
	} else {
		out, err = fleetTable(res)
	}
	if err == nil {
		_, err = stdout.Write(out)
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet: %v\n", err)
		return exitFail
	}
	if plotErr != nil {
		fmt.Fprintf(stderr, "retrysim fleet: --plot: %s\n", termsafe.Text(plotErr.Error()))
		return exitFail
	}
	return exitOK
}

// applyFleetFlags sets every flag given (set) over spec's keys; an invalid
// value is an error naming the flag and what is allowed.
func applyFleetFlags(spec *fleet.Spec, fs *flag.FlagSet, set map[string]bool) error {
	c := &spec.Config
	get := func(name string) string { return fs.Lookup(name).Value.String() }
	list := func(name string) []string { return *fs.Lookup(name).Value.(*listFlag) }
	var err error
	for _, name := range []string{"sessions", "rate", "prompts", "think", "calls", "latency", "error-latency", "capacity",
		"max-in-flight", "hint", "retry-after", "outage", "error", "overflow", "prompt-errors", "profile", "sdk",
		"horizon", "recovery", "compaction", "seed", "seeds"} {
		if !set[name] {
			continue
		}
		v := get(name)
		switch name {
		case "sessions":
			c.Sessions, err = strconv.Atoi(v)
		case "rate":
			c.Rate, err = strconv.ParseFloat(v, 64)
		case "prompts":
			c.Prompts, err = strconv.Atoi(v)
		case "think":
			c.Think, err = fleet.ParseDuration(v)
		case "calls":
			c.Calls, err = fleet.ParseCount(v)
		case "latency":
			c.Latency, err = fleet.ParseDuration(v)
		case "error-latency":
			c.ErrorLatency, err = fleet.ParseDuration(v)
		case "capacity":
			c.Capacity.RPS, c.Capacity.Burst, err = parseCapacity(v)
		case "max-in-flight":
			c.Capacity.MaxInFlight, err = strconv.Atoi(v)
		case "hint":
			c.OverCapacity.Hint = fleet.HintMode(v)
			if v != "header" && v != "text" && v != "none" {
				err = fmt.Errorf("unknown mode %q (allowed: header, text, none)", v)
			}
		case "retry-after":
			c.OverCapacity.RetryAfter, err = time.ParseDuration(v)
		case "outage":
			c.Outages, err = parseEach(list(name), fleet.ParseOutage)
		case "error":
			c.Errors, err = parseEach(list(name), fleet.ParseRate)
		case "overflow":
			c.Overflow, err = strconv.ParseFloat(v, 64)
		case "prompt-errors":
			c.PromptErrors, err = fleet.ParsePromptErrors(v)
		case "profile":
			spec.Mixes, err = parseEach(list(name), fleet.ParseMix)
		case "sdk":
			c.SDK = v
			if v != "" {
				_, err = policy.ProfileByName(v)
			}
		case "horizon":
			c.Horizon, err = time.ParseDuration(v)
		case "recovery":
			c.Recovery, err = time.ParseDuration(v)
		case "compaction":
			switch v {
			case "on":
				c.Compaction = fleet.Compaction{Enabled: true, Succeed: true}
			case "off":
				c.Compaction = fleet.Compaction{}
			case "fail":
				c.Compaction = fleet.Compaction{Enabled: true}
			default:
				err = fmt.Errorf("unknown value %q (allowed: on, off, fail)", v)
			}
		case "seed":
			c.Seed, err = strconv.ParseInt(v, 10, 64)
			if err == nil && c.Seed < 1 {
				err = fmt.Errorf("%d (allowed: an integer from 1)", c.Seed)
			}
			if !set["seeds"] {
				spec.SeedFrom, spec.SeedTo = c.Seed, c.Seed
			}
		case "seeds":
			spec.SeedFrom, spec.SeedTo, err = fleet.ParseSeeds(v)
			c.Seed = spec.SeedFrom
		}
		if err != nil {
			return fmt.Errorf("--%s: %v", name, err)
		}
	}
	return nil
}

// parseCapacity reads RPS[,BURST].
func parseCapacity(v string) (rps float64, burst int, err error) {
	r, b, hasBurst := strings.Cut(v, ",")
	rps, err = strconv.ParseFloat(strings.TrimSpace(r), 64)
	if err != nil || !(rps > 0) {
		return 0, 0, fmt.Errorf("%q: expected RPS[,BURST], RPS a number above 0 (e.g. 200 or 200,50)", v)
	}
	burst = max(1, int(rps+0.999999))
	if hasBurst {
		if burst, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || burst < 1 {
			return 0, 0, fmt.Errorf("%q: the burst must be an integer from 1", v)
		}
	}
	return rps, burst, nil
}

// fleetTable writes res as one table per fleet group, aligned by
// text/tabwriter.
func fleetTable(res *fleet.Result) ([]byte, error) {
	var b bytes.Buffer
	for i, g := range res.Groups {
		if i > 0 {
			b.WriteByte('\n')
		}
		sdk := "none"
		if g.SDK != "" {
			sdk = g.SDK
		}
		capacity := "unlimited"
		if g.CapacityPer100ms > 0 {
			capacity = strconv.FormatFloat(g.CapacityPer100ms, 'f', -1, 64) + " per 100ms"
		}
		fmt.Fprintf(&b, "fleet %s  profile %s  sdk %s  seeds %s  capacity %s\n", g.Fleet, g.Mix, sdk, seedsText(g.Seeds), capacity)
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "PROFILE\tSESSIONS\tPROMPTS\tOK\tFAILED\tWAITING\tCALLS/P\tWIRE/P\t429\tIN_RA\tFAILFAST\tEXHAUSTED\tP50\tP90\tP99\tMAX\tLONGEST\tPEAK\tRATIO")
		for j := range g.Profiles {
			s := &g.Profiles[j]
			sum := s.Summarize(g.CapacityPer100ms)
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\n",
				s.Profile, s.Sessions, s.Prompts, s.Succeeded, s.Failed, s.Waiting, sum.CallsPerPrompt, sum.WireCallsPerPrompt,
				s.Rejected, s.InRetryAfter, s.ChainsFailFast, s.ChainsExhausted, msText(sum.P50), msText(sum.P90), msText(sum.P99),
				msText(sum.Max), msText(sum.LongestWaitMs), s.PeakDuring, s.PeakAfter, ratioText(sum, g.CapacityPer100ms))
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// msText writes a number of milliseconds as a duration ("15.3s", "3h0m0s"),
// "-" for 0.
func msText(ms float64) string {
	if ms == 0 {
		return "-"
	}
	return (time.Duration(ms * float64(time.Millisecond))).Round(time.Millisecond).String()
}

func ratioText(s fleet.Summary, capacity float64) string {
	if capacity == 0 {
		return "-"
	}
	return strconv.FormatFloat(s.PeakDuringRatio, 'f', 2, 64) + "/" + strconv.FormatFloat(s.PeakAfterRatio, 'f', 2, 64)
}

// seedsText writes sorted seeds as ranges: "1-20", "1,3,5-7".
func seedsText(seeds []int64) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.FormatInt(seeds[i], 10)+"-"+strconv.FormatInt(seeds[j], 10))
		} else {
			parts = append(parts, strconv.FormatInt(seeds[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// parseEach parses every value of a repeated flag with parse, stopping at
// the first error.
func parseEach[T any](values []string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, v := range values {
		x, err := parse(v)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// maxPartialSize bounds the size of a partial result fleet merge reads
// (a shard's result holds one summary per fleet group, a few hundred
// kilobytes; a larger file is not one). A variable for the tests.
var maxPartialSize int64 = 256 << 20

// readBounded reads the file at path, refusing one larger than max bytes
// from its size before reading any of it, and a device or a folder (it has
// no size: /dev/zero would be read up to max), so that time and memory stay
// bounded whatever the input. A pipe (a process substitution) is read up to
// max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch mode := info.Mode(); {
	case mode.IsRegular():
		if info.Size() > max {
			return nil, fmt.Errorf("larger than %d bytes (%d bytes): not a partial result (one holds a summary per fleet group)", max, info.Size())
		}
	case mode&(os.ModeNamedPipe|os.ModeSocket) != 0:
	default:
		what := "not a regular file"
		switch {
		case mode.IsDir():
			what = "a folder"
		case mode&os.ModeDevice != 0:
			what = "a device"
		}
		return nil, fmt.Errorf("%s, not a partial result (a file 'retrysim fleet --shard I/N --json' wrote)", what)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes: not a partial result (one holds a summary per fleet group)", max)
	}
	return data, nil
}
