package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

func init() {
	register(&command{
		name:  "trace",
		args:  "FILE",
		short: "run one scenario and print its trace",
		long: `Runs one scenario file to quiescence and prints its trace: the JSON Lines
trace byte for byte (--format jsonl), or an aligned timeline for reading
(--format text, control characters escaped). Expectations are not checked (use run for that).

Exit status: 0 when the trace was printed, 1 when the simulation did not
finish (the partial trace is printed), 2 on invalid flags or an invalid
scenario file.`,
		options: func(fs *flag.FlagSet) runner {
			o := &traceOptions{}
			variantFlag(fs, &o.ov.variant, "run the policy variant `NAME` instead of the scenario's")
			profileFlag(fs, &o.ov.profile, "merge the scenario's settings over the retry profile `NAME`'s instead of its own profile's")
			fs.StringVar(&o.format, "format", "jsonl", "print the trace as `FORMAT`: jsonl (the trace itself) or text (an aligned timeline)")
			return o
		},
	})
}

// traceOptions are trace's flags.
type traceOptions struct {
	ov     overrides
	format string
}

func (o *traceOptions) run(args []string, stdout, stderr io.Writer) int {
	c := lookup("trace")
	if len(args) != 1 {
		return usageError(c, stderr, "want exactly one scenario file, got %d arguments", len(args))
	}
	ov, ok := checkOverrides(c, o.ov, stderr)
	if !ok {
		return exitUsage
	}
	format, ok := checkFormat(c, o.format, stderr, "jsonl", "text")
	if !ok {
		return exitUsage
	}
	sc, ok := loadOne(args[0], ov, stderr)
	if !ok {
		return exitUsage
	}
	res, err := sim.RunScenario(sc, sim.Options{Variant: ov.variant})
	if err != nil {
		errorf(stderr, "%s", termsafe.Text(err.Error()))
		return exitUsage
	}
	out := res.Trace
	if format == "text" {
		if out, err = trace.FormatText(res.Trace); err != nil {
			fmt.Fprintf(stderr, "retrysim trace: %v\n", err)
			return exitFail
		}
	}
	if _, err := stdout.Write(out); err != nil {
		fmt.Fprintf(stderr, "retrysim trace: %v\n", err)
		return exitFail
	}
	if res.RunErr != nil {
		fmt.Fprintf(stderr, "retrysim trace: %s: %v\n", termsafe.Text(args[0]), res.RunErr)
		return exitFail
	}
	return exitOK
}
