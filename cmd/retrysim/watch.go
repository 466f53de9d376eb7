package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/term"
)

// exitInterrupted is the exit status after a second Ctrl-C (128+SIGINT).
const exitInterrupted = 130

// watchHelp is added to "run"'s help.
const watchHelp = `

With --watch, plays one scenario FILE on the real clock in the terminal:
each trace line is printed as it happens (as "trace --format text" prints
it); during a backoff the original's loader counts down, "Retrying (1/3) in
2s… (esc to cancel)", and Esc cancels the retry (abort_retry). The first
Ctrl-C aborts, the second exits with status 130; SIGTERM and SIGHUP
restore the terminal and exit 130 at once. Without a terminal the
same lines are printed in real time, without the loader. Expectations and
exit status are as without --watch.`

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
			flags: func(fs *flag.FlagSet) {
				variantFlag(fs, "run the policy variant `NAME` instead of the scenario's")
			},
			run: func(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
				return runWatch(lookup("watch"), fs, args, os.Stdin, stdout, stderr)
			},
		})
		return
	}
	flags, run := c.flags, c.run
	c.flags = func(fs *flag.FlagSet) {
		if flags != nil {
			flags(fs)
		}
		fs.Bool("watch", false, "play one scenario FILE on the real clock in the terminal, with the retry loader")
	}
	c.run = func(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) int {
		if flagString(fs, "watch") == "true" {
			return runWatch(c, fs, args, os.Stdin, stdout, stderr)
		}
		return run(fs, args, stdout, stderr)
	}
	c.long += watchHelp
}

// runWatch plays one scenario file. The terminal mode (loader, Esc) needs
// stdin and stdout to be terminals.
func runWatch(c *command, fs *flag.FlagSet, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		return usageError(c, stderr, "--watch plays exactly one scenario file, got %d arguments", len(args))
	}
	ov, ok := checkOverrides(c, fs, stderr)
	if !ok {
		return exitUsage
	}
	path := args[0]
	sc, ok := loadOne(path, ov, stderr)
	if !ok {
		return exitUsage
	}

	cfg := term.Config{Scenario: sc, Variant: ov.variant, Out: stdout}
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
		fmt.Fprintln(stderr, "retrysim run: interrupted")
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "retrysim run: %s\n", termsafe.Text(path+": "+err.Error()))
		var se *scenario.Error
		if errors.As(err, &se) {
			return exitUsage
		}
		return exitFail
	}
	if printResult(stdout, sc, path, res) {
		fmt.Fprintln(stdout, "1 passed, 0 failed")
		return exitOK
	}
	fmt.Fprintln(stdout, "0 passed, 1 failed")
	return exitFail
}
