package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/cheggaaa/pb/v3"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/internal/termsafe"
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

The table has one row per profile (and "all" for a mix), its columns
(--legend prints this list under the tables):

` + fleetLegend("    ") + `
A sweep larger than one machine runs in shards: --shard I/N --json runs
every N-th run of the sweep (the runs k with k mod N = I, in the sweep's
order: files, then profile mixes, then seeds; shards are numbered from 0
to N-1) and prints its partial result, which names the sweep (a hash of
every run's settings) and the shard. 'retrysim fleet merge PARTIAL...'
reads the partial results of every shard of one split (in any order; a
directory stands for its *.json files) and prints the sweep's result, the
same as the whole sweep prints (--json: the same bytes); a shard missing
or given twice, or a shard of another sweep, is an error naming it. merge
takes only --json, --plot, --legend, --out and --shard 0/1: with --json,
the merged sweep as the partial result of its one shard (what 'retrysim
fleet --json --shard 0/1' prints for the whole sweep), which retrysim-plot
draws (the --json result holds no time series).

--out FILE writes the output to FILE (whole, by a rename) instead of
stdout. In a Kubernetes Indexed Job, --shard index/N takes I from the
pod's $JOB_COMPLETION_INDEX: deploy/ holds the image and the Jobs. In a
Slurm job array (sbatch --array=0-N-1), it takes I from
$SLURM_ARRAY_TASK_ID, and --shard index takes N from
$SLURM_ARRAY_TASK_COUNT too: deploy/slurm/ holds the scripts.

--plot FILE.png (or .svg; with a sweep or merge, not with --shard) also
draws the result: a row per fleet, its wire calls per second over time
per profile (the provider's capacity a line, outages shaded, the table's
peak marked), the CDF of the time from a prompt to its success over every
prompt, and each row's requests per prompt with its 429s. The charts
are drawn by the command retrysim-plot, so that retrysim builds without a
chart library: retrysim finds it beside itself or on $PATH ('cd
cmd/retrysim-plot && go install .' in the repository) and checks FILE before the run, then prints its
output as usual and pipes the result to 'retrysim-plot -o FILE -'.

When stderr is a terminal and the fleets run for more than a second, a
progress bar of the sessions done shows there (nothing else changes).

Exit status: 0 when the fleets ran, 1 when the output or the chart could
not be written (the output is printed all the same), 2 on invalid flags,
arguments or files.`,
		options: fleetFlags,
	})
}

// fleetOptions are fleet's flags: those of a fleet file's keys (the
// fleet package's key table: an overlay applied over each file's) and
// those of the output.
type fleetOptions struct {
	fs           *flag.FlagSet
	keys         *fleetspec.Overlay
	shard, out   givenString
	plot         givenString
	json, legend bool
}

func fleetFlags(fs *flag.FlagSet) runner {
	o := &fleetOptions{fs: fs, keys: fleetspec.NewOverlay(fs)}
	fs.Var(&o.shard, "shard", "run shard `I/N` of the sweep (I from 0 to N-1: the runs k with k mod N = I) and print its partial result for 'retrysim fleet merge'; needs --json; index/N takes I from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's) or $SLURM_ARRAY_TASK_ID (a Slurm job array's), index takes N from $SLURM_ARRAY_TASK_COUNT too")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON")
	fs.Var(&o.out, "out", "write the output to `FILE` (created or replaced whole, by a rename) instead of stdout")
	fs.BoolVar(&o.legend, "legend", false, "print what each column of the table counts under the tables (not with --json)")
	fs.Var(&o.plot, "plot", "also draw the result to `FILE` (.png or .svg), with the command retrysim-plot (see above)")
	return o
}

func (o *fleetOptions) run(args []string, stdout, stderr io.Writer) int {
	c := lookup("fleet")
	if len(args) > 0 && args[0] == "merge" {
		return o.runMerge(args[1:], stdout, stderr)
	}
	var shard *fleet.Shard
	if o.shard.given {
		sh, err := parseShardFlag(o.shard.v)
		if err != nil {
			return usageError(c, stderr, "--shard: %v", err)
		}
		if !o.json {
			return usageError(c, stderr, "--shard prints a partial result as JSON, for 'retrysim fleet merge': give --json")
		}
		shard = &sh
	}
	if o.plot.given && shard != nil {
		return usageError(c, stderr, "--plot draws a whole result: not with --shard (draw the merged shards with 'retrysim fleet merge --plot FILE PARTIAL...')")
	}
	if !o.checkLegend(c, stderr) || !o.checkOut(c, stderr) {
		return exitUsage
	}
	var specs []*fleetspec.Spec
	if len(args) == 0 {
		specs = append(specs, fleetspec.NewSpec(fleetspec.Default(1000))) // --sessions' default
	}
	for _, path := range args {
		spec, err := fleetspec.Load(path)
		if err != nil {
			fmt.Fprintf(stderr, "retrysim fleet: %s\n", termsafe.Text(err.Error()))
			return exitUsage
		}
		specs = append(specs, spec)
	}
	for _, spec := range specs {
		if err := o.keys.Apply(spec); err != nil {
			return usageError(c, stderr, "%v", err)
		}
		if err := spec.Validate(); err != nil {
			return usageError(c, stderr, "fleet %s: %v", spec.Config.Name, err)
		}
	}
	plot, ok := o.preparePlot(c, stderr)
	if !ok {
		return exitUsage
	}
	// A shard is run from the sweep's definition: its time and memory
	// follow its own runs, not the sweep's. With --plot the whole sweep
	// is its one shard 0/1: the same result (SPEC.md §15.6), and the
	// partial result retrysim-plot draws.
	plan, opt := fleet.PlanOfSpecs(specs...), fleet.Options{}
	switch {
	case shard != nil:
		opt.Shard = *shard
	case plot != nil:
		opt.Shard = fleet.Shard{Index: 0, Count: 1}
	}
	prog := startProgress(stderr, plan.Sessions(opt.Shard))
	opt.Progress = &prog.done
	p, err := fleet.Run(context.Background(), plan, opt)
	prog.stop()
	switch {
	case shard != nil:
		var out []byte
		if err == nil {
			out, err = p.JSON()
		}
		return o.emit(out, err, stdout, stderr)
	case err != nil:
		plot.discard()
		fmt.Fprintf(stderr, "retrysim fleet: %v\n", err)
		return exitFail
	case plot != nil:
		return plotResult(plot, p, o.writeResult(&p.Result, stdout, stderr), stderr)
	}
	return o.writeResult(&p.Result, stdout, stderr)
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
	bar   *pb.ProgressBar // nil until shown; the goroutine's until stop
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

// progressTemplate is the bar's line: "fleet 40% |████      | (400/1000,
// 812 sessions/s) 0.5s".
const progressTemplate = `fleet {{percent . "%.0f%%"}} {{bar . "|" "█" "█" " " "|"}} ({{counters . "%s/%s"}}, {{speed . "%s sessions/s" "? sessions/s"}}) {{etime .}}`

// show draws the bar at the sessions done. The bar is static: this
// package's goroutine, on progressClock, draws it, not one of the bar's.
func (p *fleetProgress) show() {
	if p.bar == nil {
		p.bar = pb.New64(p.total).SetTemplateString(progressTemplate).SetWriter(p.out).SetMaxWidth(100).
			Set(pb.Static, true).Set(pb.Terminal, true).Start()
	}
	p.bar.SetCurrent(min(p.done.Load(), p.total)).Write()
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
	p.bar.Finish().Write()
}

// completionIndexEnv is the variable a Kubernetes Indexed Job sets in each
// of its pods to the pod's completion index, 0 to completions-1.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// shardEngines are the batch engines whose task index --shard index/N
// takes as I, in the order looked for: the variable each sets in a task to
// its index and, when it has one, to the number of tasks (--shard index
// takes N from it).
var shardEngines = []struct{ name, index, count string }{
	{"a Kubernetes Indexed Job", completionIndexEnv, ""},
	{"a Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"},
}

// parseShardFlag reads --shard: I/N; index/N with I from the first
// variable of shardEngines set; index with N from that engine's count too.
func parseShardFlag(v string) (fleet.Shard, error) {
	n, ok := strings.CutPrefix(v, "index/")
	if !ok && v != "index" {
		return fleet.ParseShard(v)
	}
	var names []string
	for _, e := range shardEngines {
		names = append(names, "$"+e.index+" ("+e.name+")")
		i, set := os.LookupEnv(e.index)
		if !set {
			continue
		}
		from := fmt.Sprintf("$%s=%q", e.index, termsafe.Text(i))
		if !ok {
			if e.count == "" {
				return fleet.Shard{}, fmt.Errorf("%q with %s: %s gives no number of shards: give index/N", v, from, e.name)
			}
			c, set := os.LookupEnv(e.count)
			if !set {
				return fleet.Shard{}, fmt.Errorf("%q with %s: $%s is not set: give index/N", v, from, e.count)
			}
			n = c
			from += fmt.Sprintf(", $%s=%q", e.count, termsafe.Text(c))
		}
		sh, err := fleet.ParseShard(i + "/" + n)
		if err != nil {
			return fleet.Shard{}, fmt.Errorf("%q with %s: %v", v, from, err)
		}
		return sh, nil
	}
	return fleet.Shard{}, fmt.Errorf("%q: none of %s is set (the engine sets it in each task; elsewhere give I/N)", v, strings.Join(names, ", "))
}

// checkOut checks --out's file before anything runs: its directory exists,
// and it holds no $(VAR) that Kubernetes left unexpanded (every shard would
// write the same file); false after a usage error.
func (o *fleetOptions) checkOut(c *command, stderr io.Writer) bool {
	if !o.out.given {
		return true
	}
	path := o.out.v
	if i := strings.Index(path, "$("); i >= 0 {
		ref := path[i:]
		if j := strings.IndexByte(ref, ')'); j >= 0 {
			ref = ref[:j+1]
		}
		usageError(c, stderr, "--out: %q: %s is a variable reference Kubernetes did not expand (not in the container's environment)", termsafe.Text(path), termsafe.Text(ref))
		return false
	}
	if info, err := os.Stat(filepath.Dir(path)); path == "" || err != nil || !info.IsDir() {
		usageError(c, stderr, "--out: %q: expected a file in an existing directory", termsafe.Text(path))
		return false
	}
	return true
}

// partialPaths are merge's files: each argument, a directory standing for
// the files in it named *.json (not hidden: an --out being written is), in
// name order.
func partialPaths(args []string) ([]string, error) {
	var paths []string
	for _, arg := range args {
		info, err := os.Stat(arg)
		if err != nil || !info.IsDir() {
			paths = append(paths, arg) // read, or refused, as a file
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, err
		}
		n := len(paths)
		for _, e := range entries {
			if name := e.Name(); e.Type().IsRegular() && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".") {
				paths = append(paths, filepath.Join(arg, name))
			}
		}
		if len(paths) == n {
			return nil, fmt.Errorf("%s: a directory with no partial result (no file named *.json)", arg)
		}
	}
	return paths, nil
}

// checkLegend checks that --legend, when given, comes with the table:
// false after a usage error.
func (o *fleetOptions) checkLegend(c *command, stderr io.Writer) bool {
	if o.legend && o.json {
		usageError(c, stderr, "--legend explains the table's columns: not with --json (SPEC.md §15.4 defines the JSON fields)")
		return false
	}
	return true
}

// runMerge runs "retrysim fleet merge PARTIAL...": the partial results
// of a sweep's shards merged into the sweep's result.
func (o *fleetOptions) runMerge(paths []string, stdout, stderr io.Writer) int {
	c := lookup("fleet")
	var others []string
	o.fs.Visit(func(f *flag.Flag) {
		if f.Name != "json" && f.Name != "plot" && f.Name != "legend" && f.Name != "out" && f.Name != "shard" {
			others = append(others, "--"+f.Name)
		}
	})
	if len(others) > 0 {
		return usageError(c, stderr, "merge: %s: not a flag of merge (merge takes --json, --shard 0/1, --plot, --legend and --out; the partial results hold their fleets' settings)", strings.Join(others, ", "))
	}
	if o.shard.given && (o.shard.v != wholeShard || !o.json) {
		return usageError(c, stderr, "merge: --shard %s: merge takes only --json --shard %s (the merged sweep as the partial result of its one shard, with the time series retrysim-plot draws)", termsafe.Text(o.shard.v), wholeShard)
	}
	if !o.checkLegend(c, stderr) || !o.checkOut(c, stderr) {
		return exitUsage
	}
	if len(paths) == 0 {
		return usageError(c, stderr, "merge: no partial results (give the files 'retrysim fleet --shard I/N --json' wrote, one per shard)")
	}
	plot, ok := o.preparePlot(c, stderr)
	if !ok {
		return exitUsage
	}
	code := o.mergeParts(plot, paths, stdout, stderr)
	if code == exitUsage {
		plot.discard()
	}
	return code
}

// mergeParts reads and merges the partial results and prints (and, with
// --plot, draws) the sweep's result.
func (o *fleetOptions) mergeParts(plot *plotTarget, paths []string, stdout, stderr io.Writer) int {
	paths, err := partialPaths(paths)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet merge: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	parts := make([]*fleet.Partial, len(paths))
	for i, path := range paths {
		var err error
		if parts[i], err = fleet.ReadPartialFile(path, maxPartialSize); err != nil {
			fmt.Fprintf(stderr, "retrysim fleet merge: %s: %s\n", termsafe.Text(path), termsafe.Text(err.Error()))
			return exitUsage
		}
	}
	res, err := fleet.MergePartials(parts, paths)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet merge: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	var code int
	if o.shard.given && o.shard.v == wholeShard {
		out, err := wholePartial(parts, res).JSON()
		code = o.emit(out, err, stdout, stderr)
	} else {
		code = o.writeResult(res, stdout, stderr)
	}
	if plot == nil {
		return code
	}
	return plotResult(plot, wholePartial(parts, res), code, stderr)
}

// wholeShard is the one shard of a whole sweep: merge --json --shard 0/1
// prints the merged sweep in that partial form, the bytes 'retrysim fleet
// --json --shard 0/1' prints for the whole sweep.
const wholeShard = "0/1"

// writeResult prints res as --json or the table says.
func (o *fleetOptions) writeResult(res *fleet.Result, stdout, stderr io.Writer) int {
	var out []byte
	var err error
	if o.json {
		out, err = res.JSON()
	} else {
		out, err = fleetTable(res, o.legend)
	}
	return o.emit(out, err, stdout, stderr)
}

// emit writes out (writeOutput) unless err, the error of making it, is
// set; either error is reported on stderr: the command's exit code.
func (o *fleetOptions) emit(out []byte, err error, stdout, stderr io.Writer) int {
	if err == nil {
		err = o.writeOutput(out, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet: %v\n", err)
		return exitFail
	}
	return exitOK
}

// writeOutput writes out to --out's file, or to stdout without --out.
func (o *fleetOptions) writeOutput(out []byte, stdout io.Writer) error {
	path := o.out.v
	if path == "" {
		_, err := stdout.Write(out)
		return err
	}
	if err := writeFileAtomic(path, out, 0o644); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// fleetColumns are the table's columns in order: the heading, one word
// (no space, so every row splits into as many fields as the heading line),
// and what it counts. The table's heading line, its legend (--legend) and
// --help are written from this list.
var fleetColumns = []struct{ heading, meaning string }{
	{"PROFILE", `the retry profile the sessions ran ("all": every session of a mix)`},
	{"SESSIONS", "sessions that arrived"},
	{"PROMPTS", "prompts issued"},
	{"OK", "prompts done with a success"},
	{"FAILED", "prompts done without one"},
	{"WAITING", "prompts not done at the horizon"},
	{"CALLS/PROMPT", "the agent's model calls per prompt (its amplification)"},
	{"WIRE/PROMPT", "requests sent to the provider per prompt, an SDK layer's retries included"},
	{"429_OVER_CAP", "requests answered 429 for being over the provider's capacity"},
	{"IN_RETRY_AFTER", "retries sent inside a retry-after window the provider gave (ignoring its hint)"},
	{"FAILFAST", "retry chains ended by the fail-fast (a wait over retryAfter.maxWaitMs)"},
	{"EXHAUSTED", "retry chains ended by running out of retries"},
	{"OK_P50", "time from a prompt to its success: median,"},
	{"OK_P90", "90th percentile,"},
	{"OK_P99", "99th percentile"},
	{"OK_MAX", "and longest (- when no prompt succeeded)"},
	{"LONGEST_WAIT", "the longest retry wait armed"},
	{"PEAK_DURING/AFTER", "most requests sent in one 100 ms bin during an outage / in the recovery window after one"},
	{"PEAK/CAPACITY", "those two peaks over the provider's capacity per 100 ms, during/after (- when unlimited)"},
}

// fleetHeadings is the table's heading line, tab-separated.
func fleetHeadings() string {
	h := make([]string, len(fleetColumns))
	for i, c := range fleetColumns {
		h[i] = c.heading
	}
	return strings.Join(h, "\t")
}

// fleetLegend writes the table's columns and their meanings, one column a
// line (a meaning wrapped under itself), every line after indent.
func fleetLegend(indent string) string {
	width := 0
	for _, c := range fleetColumns {
		width = max(width, len(c.heading))
	}
	const lineWidth = 80
	var b strings.Builder
	for _, c := range fleetColumns {
		line := indent + c.heading + strings.Repeat(" ", width+2-len(c.heading))
		n := 0
		for _, word := range strings.Fields(c.meaning) {
			if n > 0 && len(line)+1+len(word) > lineWidth {
				b.WriteString(line + "\n")
				line, n = indent+strings.Repeat(" ", width+2), 0
			}
			if n > 0 {
				line += " "
			}
			line += word
			n++
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// fleetTable writes res as one table per fleet group, aligned by
// text/tabwriter, and with legend the columns' legend under the tables.
func fleetTable(res *fleet.Result, legend bool) ([]byte, error) {
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
		fmt.Fprintln(w, fleetHeadings())
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
	if legend {
		b.WriteString("\ncolumns:\n")
		b.WriteString(fleetLegend("  "))
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
func seedsText(seeds []int64) string { return fleet.SeedsText(seeds) }

// maxPartialSize bounds the size of a partial result fleet merge reads
// (a shard's result holds one summary per fleet group, a few hundred
// kilobytes; a larger file is not one). A variable for the tests.
var maxPartialSize int64 = fleet.MaxPartialSize
