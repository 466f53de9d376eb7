package fleetplot

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runConfig runs the one fleet cfg: its result.
func runConfig(cfg fleetspec.Config, opt fleet.Options) (*fleet.Result, error) {
	return sweepConfigs([]fleetspec.Config{cfg}, opt)
}

// sweepConfigs runs the sweep cfgs (fleet.Run of their plan): its result.
func sweepConfigs(cfgs []fleetspec.Config, opt fleet.Options) (*fleet.Result, error) {
	p, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), opt)
	if err != nil {
		return nil, err
	}
	return &p.Result, nil
}
