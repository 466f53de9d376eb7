package main

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
reported on stderr and the other files still run. In a directory, names
starting with '.' or '_' are left out, and entries that are not regular
files (a named pipe, a socket, a symbolic link to a directory) are skipped
with a warning on stderr; a path given by name is read whatever it is. With --coverage, a report follows:
which declared transitions of the table (rule row x from-state) the
scenarios exercised, which they missed, which no scenario file can reach,
and the ignored pairs apart.

Exit status: 0 when every scenario passed, 1 when one failed, 2 when a path
or scenario file was invalid.`,
		flags: func(fs *flag.FlagSet) {
			variantFlag(fs, "run the policy variant `NAME` instead of each scenario's")
			profileFlag(fs, "merge each scenario's settings over the retry profile `NAME`'s instead of its own profile's")
			fs.Bool("coverage", false, "after the run, print which declared transitions of the table the scenarios exercised")
		},
		run: runRun,
	})
}

func runRun(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
	c := lookup("run")
	if len(args) == 0 {
		return usageError(c, stderr, "no scenario paths given")
	}
	ov, ok := checkOverrides(c, fs, stderr)
	if !ok {
		return exitUsage
	}
	cover := flagString(fs, "coverage") == "true"
	traces := map[string][][]trace.Record{}
	passed, failed, invalid := 0, 0, 0
	// Every path is found first, so that the files of all paths run in
	// one runFiles (on every processor, even when the shell expanded a
	// glob into one argument per file); what a path has to say (its
	// error, its warnings) is printed where it comes in the order.
	var files []string
	var notes []pathNote
	for _, arg := range args {
		found, skipped, err := scenario.Find(arg)
		note := pathNote{before: len(files)}
		switch {
		case err != nil:
			note.errs = append(note.errs, fmt.Sprintf("retrysim run: %s", termsafe.Text(err.Error())))
		case len(found) == 0:
			note.errs = append(note.errs, fmt.Sprintf("retrysim run: %s: no scenario files (*.yaml, *.yml, *.json)", termsafe.Text(arg)))
		}
		for _, s := range skipped {
			note.warnings = append(note.warnings, fmt.Sprintf("retrysim run: warning: %s", s))
		}
		if note.errs != nil || note.warnings != nil {
			notes = append(notes, note)
		}
		files = append(files, found...)
	}
	printNotes := func(upTo int) {
		for len(notes) > 0 && notes[0].before <= upTo {
			for _, w := range notes[0].warnings {
				fmt.Fprintln(stderr, w)
			}
			for _, e := range notes[0].errs {
				fmt.Fprintln(stderr, e)
				invalid++
			}
			notes = notes[1:]
		}
	}
	runFiles(files, ov, func(i int, o fileRun) {
		printNotes(i)
		path, sc, res := files[i], o.sc, o.res
		if o.err != nil {
			fmt.Fprintln(stderr, termsafe.Text(o.err.Error()))
			invalid++
			return
		}
		if cover {
			traces[res.Variant] = append(traces[res.Variant], res.Records)
		}
		if printResult(stdout, sc, path, res) {
			passed++
		} else {
			failed++
		}
	})
	printNotes(len(files))
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if cover {
		if code := coverageMain(traces, stdout, stderr); code != exitOK {
			return code
		}
	}
	switch {
	case invalid > 0:
		if invalid == 1 {
			fmt.Fprintln(stderr, "retrysim run: 1 invalid scenario file or path")
		} else {
			fmt.Fprintf(stderr, "retrysim run: %d invalid scenario files or paths\n", invalid)
		}
		return exitUsage
	case failed > 0:
		return exitFail
	}
	return exitOK
}

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

// runFiles loads every file, applies ov to it, and runs it, on as many
// goroutines as there are processors (GOMAXPROCS), and calls emit with each outcome in the files'
// order, so the output is the same whatever the parallelism. Files are
// taken runBatch at a time, so that at most runBatch outcomes are held at
// once however many files there are.
func runFiles(files []string, ov overrides, emit func(i int, o fileRun)) {
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
					if o.sc, o.err = scenario.Load(batch[i]); o.err == nil {
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
// the scenario's text escaped (sim.SafeText) so that it cannot break the
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
// reporting an error on stderr.
func loadOne(path string, ov overrides, stderr io.Writer) (*scenario.Scenario, bool) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		fmt.Fprintf(stderr, "%s: is a directory (give one scenario file)\n", termsafe.Text(path))
		return nil, false
	}
	sc, err := scenario.Load(path)
	if err == nil {
		err = ov.apply(sc)
	}
	if err != nil {
		fmt.Fprintln(stderr, termsafe.Text(err.Error()))
		return nil, false
	}
	return sc, true
}
