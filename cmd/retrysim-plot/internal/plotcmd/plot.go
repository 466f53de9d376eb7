// Package plotcmd is the command retrysim-plot (cmd/retrysim-plot, whose
// doc says what it draws and how it is run): a package, so that the CLI's
// tests run it from their own test binary instead of linking it apart.
package plotcmd

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/fleetplot"
	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/internal/termsafe"
)

// Exit codes, as retrysim's.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// maxPartialSize bounds the size of a partial result read, as retrysim
// fleet merge bounds it (a partial holds a summary per fleet group, well
// under this).
var maxPartialSize int64 = fleet.MaxPartialSize

// wholeResultHint follows the error of a file without a partial's
// header: most likely a whole result ('retrysim fleet --json', 'fleet merge
// --json'), which holds no time series.
const wholeResultHint = "; a whole result (--json) holds no time series to draw: give the shards' partial results, " +
	"or merge them into one with 'retrysim fleet merge --json --shard 0/1 PARTIAL...'"

// Main runs retrysim-plot with args (its arguments, without the program's
// name; a partial "-" is read from stdin), writes its errors to stderr
// and returns its exit code.
func Main(args []string, stdin io.Reader, stderr io.Writer) int {
	fs := flag.NewFlagSet("retrysim-plot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "fleet.png", "draw to `FILE` (.png or .svg)")
	tuned := fs.Bool("tune", false, "draw a tune's report ('retrysim tune --json') instead: its candidates, front and profiles")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: retrysim-plot [-o FILE.png|FILE.svg] PARTIAL...")
		fmt.Fprintln(stderr, "draws the merged partial results ('retrysim fleet --json --shard I/N') of a fleet sweep; - reads one from stdin")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	format, err := fleetplot.FormatOf(*out)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim-plot: -o: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	paths := fs.Args()
	if *tuned {
		return drawTune(*out, format, paths, stdin, stderr)
	}
	if len(paths) == 0 {
		fmt.Fprintln(stderr, "retrysim-plot: no partial results (give the files 'retrysim fleet --json --shard I/N' wrote; a whole sweep is --shard 0/1)")
		return exitUsage
	}
	parts := make([]*fleet.Partial, len(paths))
	stdinRead := false
	for i, path := range paths {
		var err error
		switch {
		case path == "-" && stdinRead:
			err = errors.New("stdin given twice (- stands for one partial result, read from stdin)")
		case path == "-":
			stdinRead = true
			parts[i], err = fleet.ReadPartialFrom(stdin, maxPartialSize)
		default:
			parts[i], err = fleet.ReadPartialFile(path, maxPartialSize)
		}
		if err != nil {
			msg := err.Error()
			if pe := (*fleet.PartialError)(nil); errors.As(err, &pe) && pe.Field == "shard" {
				msg += wholeResultHint
			}
			fmt.Fprintf(stderr, "retrysim-plot: %s: %s\n", termsafe.Text(path), termsafe.Text(msg))
			return exitUsage
		}
	}
	res, err := fleet.MergePartials(parts, paths)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim-plot: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	if err := writePlot(*out, format, res); err != nil {
		fmt.Fprintf(stderr, "retrysim-plot: %s\n", termsafe.Text(err.Error()))
		return exitFail
	}
	return exitOK
}

// writePlot draws res in format to the file path: drawn whole in memory
// first, so that a chart that cannot be drawn leaves the file as it was.
func writePlot(path, format string, res *fleet.Result) error {
	var b bytes.Buffer
	if err := fleetplot.Write(&b, res, format); err != nil {
		return fmt.Errorf("drawing %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
