package plotcmd

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/tuneplot"
	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/tune"
)

// drawTune draws the one tune report of paths (- from stdin) to out.
func drawTune(out, format string, paths []string, stdin io.Reader, stderr io.Writer) int {
	if len(paths) != 1 {
		fmt.Fprintf(stderr, "retrysim-plot: -tune draws one report ('retrysim tune --json'; merge shards with 'retrysim tune merge --json'), got %d\n", len(paths))
		return exitUsage
	}
	var r *tune.Report
	var err error
	if paths[0] == "-" {
		var data []byte
		if data, err = strictfile.ReadAtMost(stdin, 1<<16, tune.MaxReportSize+1); err == nil {
			r, err = tune.ReadReport(data)
		}
	} else {
		r, err = tune.ReadReportFile(paths[0])
	}
	if err == nil {
		r, err = tune.Merge([]*tune.Report{r}, paths) // a whole tune's, its derived fields computed again
	}
	if err != nil {
		fmt.Fprintf(stderr, "retrysim-plot: %s: %s\n", termsafe.Text(paths[0]), termsafe.Text(err.Error()))
		return exitUsage
	}
	var b bytes.Buffer
	if err := tuneplot.Write(&b, r, format); err != nil {
		fmt.Fprintf(stderr, "retrysim-plot: drawing %s: %s\n", termsafe.Text(out), termsafe.Text(err.Error()))
		return exitFail
	}
	if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(stderr, "retrysim-plot: %s\n", termsafe.Text(err.Error()))
		return exitFail
	}
	return exitOK
}
