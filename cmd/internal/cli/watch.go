package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/term"
)

// exitInterrupted is the exit status after SIGTERM or SIGHUP in run --watch
// (128+SIGINT, as a shell reports an interrupted command).
const exitInterrupted = 130

// watchHelp is added to "run"'s help.
const watchHelp = `

With --watch, plays one scenario FILE on the real clock in the terminal:
each trace line is printed as it happens (as "trace --format text" prints
it, laid out in 80 columns); during a backoff the original's loader counts
down, "Retrying (1/3) in 2s… (esc to cancel)", and Esc cancels the retry
(abort_retry). Ctrl-C aborts (abort). Either ends the play at that
instant: what the command causes then is printed, the rest of the script
is not played, and the final line has the time of the cancel; the
expectations are then shown for information ("CANCELLED  name  (path)")
and the exit status is 0 (2 if the file is invalid, 1 if the simulation
did not finish). SIGTERM and SIGHUP restore the terminal and exit with
status 130 at once. Without a terminal the same lines are printed in real
time, without the loader. Otherwise expectations and exit status are as
without --watch.`

// watchWidth is the width, in columns, of every line run --watch prints.
const watchWidth = 80

// init adds --watch to the "run" command (registered by run.go, whose init
// runs first: files are initialised in name order). If there is no "run"
// command, "watch FILE" is registered instead.
func init() {
	c := lookup("run")
	if c == nil {
		register(&command{
			name:  "watch",
			args:  "FILE",
			short: "play one scenario on the real clock in the terminal",
			long:  watchHelp[2:],
			options: func(fs *flag.FlagSet) runner {
				var ov overrides
				variantFlag(fs, &ov.variant, "run the policy variant `NAME` instead of the scenario's")
				return runFunc(func(args []string, stdout, stderr io.Writer) int {
					return runWatch(lookup("watch"), ov, args, os.Stdin, stdout, stderr)
				})
			},
		})
		return
	}
	options := c.options
	c.options = func(fs *flag.FlagSet) runner {
		o := &watchOptions{runOptions: options(fs).(*runOptions)}
		fs.BoolVar(&o.watch, "watch", false, "play one scenario FILE on the real clock in the terminal, with the retry loader")
		return o
	}
	c.long += watchHelp
}

// watchOptions are run's options with --watch.
type watchOptions struct {
	*runOptions
	watch bool
}

func (o *watchOptions) run(args []string, stdout, stderr io.Writer) int {
	if o.watch {
		return runWatch(lookup("run"), o.ov, args, os.Stdin, stdout, stderr)
	}
	return o.runOptions.run(args, stdout, stderr)
}

// runWatch plays one scenario file with the --variant and --profile of
// ov. The terminal mode (loader, Esc) needs stdin and stdout to be
// terminals.
func runWatch(c *command, ov overrides, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return usageError(c, stderr, "--watch plays exactly one scenario file, got %d arguments", len(args))
	}
	ov, ok := checkOverrides(c, ov, stderr)
	if !ok {
		return exitUsage
	}
	path := args[0]
	if path == stdinPath {
		return usageError(c, stderr, "--watch reads keys from standard input: give a scenario file, not -")
	}
	sc, ok := loadOne(path, ov, stderr)
	if !ok {
		return exitUsage
	}

	cfg := term.Config{Scenario: sc, Variant: ov.variant, Out: stdout, Width: watchWidth}
	in, inOK := stdin.(*os.File)
	out, outOK := stdout.(*os.File)
	if inOK && outOK && term.IsTerminal(in.Fd()) && term.IsTerminal(out.Fd()) {
		restore, err := term.KeyMode(in.Fd())
		if err == nil {
			defer restore()
			cfg.Terminal, cfg.Keys = true, in
		}
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, endSignals...) // SIGTERM and SIGHUP end at once, terminal restored
	defer signal.Stop(sigs)
	cfg.Interrupt = sigs

	res, err := term.Play(context.Background(), cfg)
	switch {
	case errors.Is(err, term.ErrInterrupted):
		errorf(stderr, "interrupted")
		return exitInterrupted
	case err != nil:
		errorf(stderr, "%s", termsafe.Text(path+": "+err.Error()))
		var se *scenario.Error
		if errors.As(err, &se) {
			return exitUsage
		}
		return exitFail
	}
	if res.Cancelled != "" && res.RunErr == nil {
		printCancelled(stdout, sc, path, res)
		return exitOK
	}
	verdict, summary, code := "PASS", "1 passed, 0 failed", exitOK
	if !res.Passed() {
		verdict, summary, code = "FAIL", "0 passed, 1 failed", exitFail
	}
	printWatchResult(stdout, verdict, sc, path, res.Failures)
	fmt.Fprintln(stdout, summary)
	return code
}

// printWatchResult prints a watched scenario's verdict as run does
// ("VERDICT  name  (path)", the failures indented), each line wrapped to
// fit watchWidth.
func printWatchResult(w io.Writer, verdict string, sc *scenario.Scenario, path string, notes []string) {
	fmt.Fprintln(w, term.Wrap(fmt.Sprintf("%s  %s  (%s)", verdict, termsafe.Text(sc.Name), termsafe.Text(path)), watchWidth, 4))
	for _, n := range notes {
		fmt.Fprintln(w, term.Wrap("    "+termsafe.Text(n), watchWidth, 6))
	}
}

// printCancelled prints the outcome of a play the user cancelled: its
// expectations, for information (the script was not played to its end).
func printCancelled(w io.Writer, sc *scenario.Scenario, path string, res *term.Result) {
	key := "Esc"
	if res.Cancelled == "abort" {
		key = "Ctrl-C"
	}
	at := strconv.FormatFloat(res.CancelledAt.Seconds(), 'f', 3, 64) + "s"
	var notes []string
	switch {
	case sc.Expect == nil:
		notes = []string{fmt.Sprintf("cancelled at %s (%s: %s); the scenario has no expectations", at, key, res.Cancelled)}
	case len(res.Failures) == 0:
		notes = []string{fmt.Sprintf("cancelled at %s (%s: %s); the expectations hold all the same", at, key, res.Cancelled)}
	default:
		notes = append([]string{fmt.Sprintf("cancelled at %s (%s: %s); the expectations, for information:", at, key, res.Cancelled)}, res.Failures...)
	}
	printWatchResult(w, "CANCELLED", sc, path, notes)
	fmt.Fprintln(w, "0 passed, 0 failed, 1 cancelled")
}
