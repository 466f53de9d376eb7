package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

func init() {
	register(&command{
		name:  "run",
		args:  "PATH...",
		short: "run scenario files or directories and check their expectations",
		long: `Runs each scenario (a file, or every *.yaml, *.yml and *.json file of a
directory and of its subdirectories, sorted by path) to quiescence and
checks its expect block. Prints one line per
scenario, "PASS  name  (path)" or "FAIL  name  (path)" followed by the unmet
expectations, then "N passed, M failed"; control characters in names, paths
and values are printed escaped (\n, \x1b, \u202e). An invalid file is
reported on stderr and the other files still run; so is a file without an
expect block, which checks nothing (a warning). In a directory, names
starting with '.' or '_' are left out, and entries that are not regular
files (a named pipe, a socket, a symbolic link to a directory) are skipped
with a warning on stderr; a path given by name is read whatever it is. A
path "-" is one scenario read from standard input (YAML, or JSON), named
<stdin>. With --coverage, a report follows:
which declared transitions of the table (rule row x from-state) the
scenarios exercised, which they missed, which no scenario file can reach,
and the ignored pairs apart.

With --update, each file's expect block is written from its run instead of
checked: events lists every agent_run, auto_retry_start, auto_retry_end and
prompt_resolved line with all its fields, and final the final state. The
rest of the file stays byte for byte, comments included (YAML: the text of
the top-level expect key is replaced, or the key added at the end; JSON:
the expect member's value, or a last member). Prints "UPDATED  name  (path)"
or "UNCHANGED  name  (path)" per file, then "N updated, M unchanged". A YAML
file whose top-level mapping is in flow style ({...}) is not rewritten (an
error: its layout cannot be kept); --update takes no --variant, --profile
or "-".

Exit status: 0 when every scenario passed (was updated), 1 when one failed
(or its simulation did not finish), 2 when a path or scenario file was
invalid or could not be rewritten.`,
		options: func(fs *flag.FlagSet) runner {
			o := &runOptions{}
			variantFlag(fs, &o.ov.variant, "run the policy variant `NAME` instead of each scenario's")
			profileFlag(fs, &o.ov.profile, "merge each scenario's settings over the retry profile `NAME`'s instead of its own profile's")
			fs.BoolVar(&o.coverage, "coverage", false, "after the run, print which declared transitions of the table the scenarios exercised")
			fs.BoolVar(&o.update, "update", false, "write each file's expect block from its run (the rest of the file kept) instead of checking it")
			return o
		},
	})
}

// runOptions are run's flags.
type runOptions struct {
	ov               overrides
	coverage, update bool
}

// stdinPath is the path argument that stands for standard input, and
// stdinName the name its scenario is read under (errors, the PASS line).
const (
	stdinPath = "-"
	stdinName = "<stdin>"
)

// stdin is what "run -" reads (tests replace it).
var stdin io.Reader = os.Stdin

// displayPath is how a file of files is named in run's output.
func displayPath(path string) string {
	if path == stdinPath {
		return stdinName
	}
	return path
}

func (o *runOptions) run(args []string, stdout, stderr io.Writer) int {
	out := &firstErrWriter{w: stdout}
	return reportOutputErr(out, stderr, o.runTo(args, out, stderr))
}

// runTo is run printing to stdout, whose write errors run reports.
func (o *runOptions) runTo(args []string, stdout, stderr io.Writer) int {
	c := lookup("run")
	if len(args) == 0 {
		return usageError(c, stderr, "no scenario paths given")
	}
	ov, ok := checkOverrides(c, o.ov, stderr)
	if !ok {
		return exitUsage
	}
	cover, update := o.coverage, o.update
	fromStdin := 0
	for _, a := range args {
		if a == stdinPath {
			fromStdin++
		}
	}
	switch {
	case update && (ov.variant != "" || ov.profile != ""):
		return usageError(c, stderr, "--update writes what each file does as it is: it takes no --variant or --profile")
	case update && fromStdin > 0:
		return usageError(c, stderr, "--update rewrites files: it cannot update - (standard input)")
	case fromStdin > 1:
		return usageError(c, stderr, "- (standard input) given %d times: it holds one scenario", fromStdin)
	}
	var stdinData []byte
	if fromStdin > 0 {
		var err error
		// One byte over the limit is enough for Parse to refuse the size.
		if stdinData, err = io.ReadAll(io.LimitReader(stdin, maxStdin+1)); err != nil {
			errorf(stderr, "reading standard input: %v", err)
			return exitUsage
		}
	}
	files, notes := findScenarioPaths(args)
	t := &runTally{stdout: stdout, stderr: stderr, notes: notes, cover: cover, update: update, traces: map[string][][]trace.Record{}}
	runFiles(files, ov, stdinData, func(i int, o fileRun) {
		t.printNotes(i)
		t.file(displayPath(files[i]), o)
	})
	t.printNotes(len(files))
	return t.end()
}

// findScenarioPaths finds every path's files first, so that the files of
// all paths run in one runFiles (on every processor, even when the shell
// expanded a glob into one argument per file); what a path has to say (its
// error, its warnings) is printed where it comes in the order.
func findScenarioPaths(args []string) (files []string, notes []pathNote) {
	for _, arg := range args {
		if arg == stdinPath {
			files = append(files, stdinPath)
			continue
		}
		found, skipped, err := scenario.Find(arg)
		note := pathNote{before: len(files)}
		switch {
		case err != nil:
			note.errs = append(note.errs, termsafe.Text(err.Error()))
		case len(found) == 0:
			note.errs = append(note.errs, fmt.Sprintf("%s: no scenario files (*.yaml, *.yml, *.json)", termsafe.Text(arg)))
		}
		for _, s := range skipped {
			note.warnings = append(note.warnings, fmt.Sprintf("warning: %s", s))
		}
		if note.errs != nil || note.warnings != nil {
			notes = append(notes, note)
		}
		files = append(files, found...)
	}
	return files, notes
}

// runTally is what run prints and counts as the files' results come in,
// in the order of the files.
type runTally struct {
	stdout, stderr                              io.Writer
	notes                                       []pathNote
	cover, update                               bool
	traces                                      map[string][][]trace.Record
	passed, failed, invalid, updated, unchanged int
}

// printNotes prints the notes of the paths before file upTo.
func (t *runTally) printNotes(upTo int) {
	for len(t.notes) > 0 && t.notes[0].before <= upTo {
		for _, w := range t.notes[0].warnings {
			errorf(t.stderr, "%s", w)
		}
		for _, e := range t.notes[0].errs {
			errorf(t.stderr, "%s", e)
			t.invalid++
		}
		t.notes = t.notes[1:]
	}
}

// file prints and counts one file's result.
func (t *runTally) file(path string, o fileRun) {
	sc, res := o.sc, o.res
	if o.err != nil {
		errorf(t.stderr, "%s", termsafe.Text(o.err.Error()))
		t.invalid++
		return
	}
	if t.cover {
		t.traces[res.Variant] = append(t.traces[res.Variant], res.Records)
	}
	if t.update {
		switch changed, err := updateFile(path, res); {
		case err != nil && res.RunErr != nil:
			errorf(t.stderr, "%s: not updated: %s", termsafe.Text(path), termsafe.Text(err.Error()))
			t.failed++
		case err != nil:
			errorf(t.stderr, "%s: not updated: %s", termsafe.Text(path), termsafe.Text(err.Error()))
			t.invalid++
		case changed:
			fmt.Fprintf(t.stdout, "UPDATED  %s  (%s)\n", termsafe.Text(sc.Name), termsafe.Text(path))
			t.updated++
		default:
			fmt.Fprintf(t.stdout, "UNCHANGED  %s  (%s)\n", termsafe.Text(sc.Name), termsafe.Text(path))
			t.unchanged++
		}
		return
	}
	if sc.Expect == nil {
		errorf(t.stderr, "warning: %s: no expect block: nothing is checked (retrysim run --update %s writes one)",
			termsafe.Text(path), termsafe.Text(path))
	}
	if printResult(t.stdout, sc, path, res) {
		t.passed++
	} else {
		t.failed++
	}
}

// end prints the closing line (and coverage) and gives the exit status.
func (t *runTally) end() int {
	if t.update {
		fmt.Fprintf(t.stdout, "%d updated, %d unchanged\n", t.updated, t.unchanged)
	} else {
		// An invalid file or path counts as failed, and the line says so.
		if t.invalid > 0 {
			fmt.Fprintf(t.stdout, "%d passed, %d failed (%d invalid)\n", t.passed, t.failed+t.invalid, t.invalid)
		} else {
			fmt.Fprintf(t.stdout, "%d passed, %d failed\n", t.passed, t.failed)
		}
	}
	if t.cover {
		if code := coverageMain(t.traces, t.stdout, t.stderr); code != exitOK {
			return code
		}
	}
	switch {
	case t.invalid > 0:
		if t.invalid == 1 {
			errorf(t.stderr, "1 invalid scenario file or path")
		} else {
			errorf(t.stderr, "%d invalid scenario files or paths", t.invalid)
		}
		return exitUsage
	case t.failed > 0:
		return exitFail
	}
	return exitOK
}

// maxStdin is the most "run -" reads: scenario files are capped at 1 MiB.
const maxStdin = 1 << 20

// pathNote is what run has to say of a path: its warnings, then its
// error, printed before the outcome of files[before].
type pathNote struct {
	before         int
	warnings, errs []string
}

// fileRun is the outcome of one scenario file: loaded and run, or an error.
type fileRun struct {
	sc  *scenario.Scenario
	res *sim.Result
	err error
}

// runFiles loads every file (stdinPath: the scenario in stdinData),
// applies ov to it, and runs it, on as many
// goroutines as there are processors (GOMAXPROCS), and calls emit with each outcome in the files'
// order, so the output is the same whatever the parallelism. Files are
// taken runBatch at a time, so that at most runBatch outcomes are held at
// once however many files there are.
func runFiles(files []string, ov overrides, stdinData []byte, emit func(i int, o fileRun)) {
	var gc gcTune
	gc.start()
	defer gc.stop()
	out := make([]fileRun, min(len(files), runBatch))
	for lo := 0; lo < len(files); lo += runBatch {
		batch := files[lo:min(lo+runBatch, len(files))]
		workers := min(runtime.GOMAXPROCS(0), len(batch))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= len(batch) {
						return
					}
					o := &out[i]
					if batch[i] == stdinPath {
						o.sc, o.err = scenario.Parse(stdinName, stdinData)
					} else {
						o.sc, o.err = scenario.Load(batch[i])
					}
					if o.err == nil {
						if o.err = ov.apply(o.sc); o.err == nil {
							o.res, o.err = sim.RunScenario(o.sc, sim.Options{Variant: ov.variant, NoJSON: true})
						}
					}
				}
			})
		}
		wg.Wait()
		gc.check(liveHeap())
		for i := range batch {
			emit(lo+i, out[i])
			out[i] = fileRun{}
		}
	}
}

// gcTune tunes the collector while runFiles runs. Loading scenario files
// allocates much and keeps little, so the collector is off until the
// heap reaches runMemoryLimit (a soft limit: then it collects as usual).
// Should the live heap pass half the limit (run --coverage keeps every
// trace), the usual proportional target comes back and the limit goes,
// so that the collector never runs back to back. A GOGC or GOMEMLIMIT
// set by the user is left as it is.
type gcTune struct {
	on      bool
	percent int
	limit   int64
}

// runMemoryLimit is the heap size at which runFiles's collector runs.
const runMemoryLimit = 128 << 20

func (g *gcTune) start() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	g.on = true
	g.percent = debug.SetGCPercent(-1)
	g.limit = debug.SetMemoryLimit(runMemoryLimit)
}

// check returns to the proportional target once live (bytes) passes half
// the limit.
func (g *gcTune) check(live uint64) {
	if g.on && live > runMemoryLimit/2 {
		g.stop()
	}
}

func (g *gcTune) stop() {
	if g.on {
		g.on = false
		debug.SetGCPercent(g.percent)
		debug.SetMemoryLimit(g.limit)
	}
}

// liveHeap is the heap the last collection found live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// runBatch is how many files runFiles runs before it emits their outcomes.
const runBatch = 256

// printResult prints the verdict on scenario sc, loaded from path:
// "PASS  name  (path)", or "FAIL  name  (path)" and the failures indented,
// the scenario's text escaped (termsafe.Text) so that it cannot break the
// line or send escape codes to the terminal. It reports whether sc passed.
func printResult(w io.Writer, sc *scenario.Scenario, path string, res *sim.Result) bool {
	verdict := "PASS"
	if !res.Passed() {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s  %s  (%s)\n", verdict, termsafe.Text(sc.Name), termsafe.Text(path))
	for _, f := range res.Failures {
		fmt.Fprintf(w, "    %s\n", termsafe.Text(f))
	}
	return res.Passed()
}

// loadOne loads the one scenario file of a command and applies ov to it,
// reporting an error on stderr (errorf: with the command's prefix).
func loadOne(path string, ov overrides, stderr io.Writer) (*scenario.Scenario, bool) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		errorf(stderr, "%s: is a directory (give one scenario file)", termsafe.Text(path))
		return nil, false
	}
	sc, err := scenario.Load(path)
	if err == nil {
		err = ov.apply(sc)
	}
	if err != nil {
		errorf(stderr, "%s", termsafe.Text(err.Error()))
		return nil, false
	}
	return sc, true
}
