package fleetplot_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/ohmypi/retryfsm/cmd/retrysim-plot/fleetplot"
	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// Draw a fleet's result as an SVG image: a row per fleet, its calls beside
// the CDF of its time to success.
func ExampleWrite() {
	p, err := fleet.Run(context.Background(), fleet.PlanOf(fleetspec.Default(50)), fleet.Options{})
	if err != nil {
		panic(err)
	}
	res := &p.Result
	var b bytes.Buffer
	if err := fleetplot.Write(&b, res, "svg"); err != nil {
		panic(err)
	}
	fmt.Println(strings.Contains(b.String(), "fleet default  ·  seeds 1  ·  profiles omp-2026-02"))
	d := fleetplot.DataOf(res)
	fmt.Println(len(d.Panels), d.Panels[0].CDFs[0].Gap())
	// Output:
	// true
	// 1 all succeeded
}
