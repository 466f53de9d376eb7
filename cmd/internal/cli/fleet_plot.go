package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/internal/imageformat"
	"github.com/ohmypi/retryfsm/internal/termsafe"
)

// plotTarget is --plot's file, checked before the run: its format, the
// command that draws it, and whether the check created the file (then a
// failed run removes it).
type plotTarget struct {
	path, command string
	created       bool
	// args go before "-o FILE -" (retrysim tune's "-tune").
	args []string
}

// preparePlot checks --plot before anything runs: the file's format, the
// drawing command (beside retrysim, then on $PATH), and that the file can
// be opened for writing (it is created when missing). nil without --plot;
// false after a usage error.
func (o *fleetOptions) preparePlot(c *command, stderr io.Writer) (*plotTarget, bool) {
	if !o.plot.given {
		return nil, true
	}
	path := o.plot.v
	if _, err := imageformat.Of(path); err != nil {
		usageError(c, stderr, "--plot: %s", termsafe.Text(err.Error()))
		return nil, false
	}
	cmd, err := findPlotCommand()
	if err != nil {
		usageError(c, stderr, "--plot: %s", termsafe.Text(err.Error()))
		return nil, false
	}
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		usageError(c, stderr, "--plot: %s (checked before the run)", termsafe.Text(err.Error()))
		return nil, false
	}
	if err := f.Close(); err != nil {
		usageError(c, stderr, "--plot: %s (checked before the run)", termsafe.Text(err.Error()))
		return nil, false
	}
	return &plotTarget{path: path, command: cmd, created: errors.Is(statErr, os.ErrNotExist)}, true
}

// findPlotCommand is the path of retrysim-plot (findCompanion); an error
// says how to install it or to draw later.
func findPlotCommand() (string, error) {
	p, where, err := findCompanion(plotCommand)
	if err != nil {
		return "", fmt.Errorf("the charts are drawn by the command %s (so that retrysim links no chart library), %s: "+
			"install it with 'cd cmd/retrysim-plot && go install .' in the repository (a module of its own, beside 'go install ./cmd/...'), "+
			"or print the result with --json --shard 0/1 and draw it later with 'retrysim-plot -o FILE.png PARTIAL...'", plotCommand, where)
	}
	return p, nil
}

// discard removes the file when the check created it: after a failed
// run, no empty image is left behind.
func (p *plotTarget) discard() {
	if p != nil && p.created {
		os.Remove(p.path)
	}
}

// draw pipes the partial result (JSON) to 'retrysim-plot -o FILE -'; its
// messages go to stderr, and an error says the chart was not drawn.
func (p *plotTarget) draw(partial []byte, stderr io.Writer) error {
	cmd := exec.Command(p.command, append(append([]string{}, p.args...), "-o", p.path, "-")...)
	cmd.Stdin = bytes.NewReader(partial)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			fmt.Fprintln(stderr, termsafe.Text(msg))
		}
		p.discard()
		return fmt.Errorf("--plot %s: the chart was not drawn (%s: %v)", termsafe.Text(p.path), p.command, err)
	}
	return nil
}

// wholePartial is the merged result of parts (MergePartials' res) as the
// partial result of the one shard 0/1 of their sweep: what --plot pipes.
func wholePartial(parts []*fleet.Partial, res *fleet.Result) *fleet.Partial {
	first := parts[0]
	index := make([]int, len(res.Groups))
	for i := range index {
		index[i] = i
	}
	return &fleet.Partial{Sweep: first.Sweep, Runs: first.Runs, Groups: first.Groups, Shard: fleet.Shard{Index: 0, Count: 1},
		Result: *res, GroupIndex: index, SweepGroups: first.SweepGroups, Plan: first.Plan}
}

// plotResult draws the partial p with target (nil: no --plot) after the
// output was written with code; the exit code is 1 when it could not be
// drawn.
func plotResult(target *plotTarget, p *fleet.Partial, code int, stderr io.Writer) int {
	if target == nil {
		return code
	}
	data, err := p.JSON()
	if err == nil {
		err = target.draw(data, stderr)
	} else {
		target.discard()
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrysim fleet: %v\n", err)
		return exitFail
	}
	return code
}
