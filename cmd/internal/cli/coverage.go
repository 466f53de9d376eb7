package cli

import (
	"fmt"
	"io"

	"github.com/ohmypi/retryfsm/explore"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// coverageMain prints the transition coverage of the traces of the
// scenarios run, grouped by the variant that ran them (sim.Result.Variant),
// one report per variant in policy.VariantNames order. It returns
// exitUsage for an unknown variant or an unreadable trace, else exitOK:
// coverage itself never fails a run.
func coverageMain(traces map[string][][]trace.Record, w, stderr io.Writer) int {
	for _, name := range session.VariantNames() {
		trs, ok := traces[name]
		if !ok {
			continue
		}
		v, err := session.VariantByName(name)
		if err != nil {
			fmt.Fprintf(stderr, "retrysim run --coverage: %v\n", err)
			return exitUsage
		}
		rep, err := explore.Coverage(v, trs)
		if err != nil {
			fmt.Fprintf(stderr, "retrysim run --coverage: %v\n", err)
			return exitUsage
		}
		rep.Format(w)
	}
	for name := range traces {
		if _, err := session.VariantByName(name); err != nil {
			fmt.Fprintf(stderr, "retrysim run --coverage: %v\n", err)
			return exitUsage
		}
	}
	return exitOK
}
