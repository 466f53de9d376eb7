package fleet

import (
	"context"
	"testing"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runConfig runs the one fleet cfg (Run of PlanOf(cfg)): its result.
func runConfig(cfg fleetspec.Config, opt Options) (*Result, error) {
	return sweepConfigs([]fleetspec.Config{cfg}, opt)
}

// sweepConfigs runs the sweep cfgs (Run of PlanOf(cfgs...)): its result.
func sweepConfigs(cfgs []fleetspec.Config, opt Options) (*Result, error) {
	p, err := Run(context.Background(), PlanOf(cfgs...), opt)
	if err != nil {
		return nil, err
	}
	return &p.Result, nil
}
