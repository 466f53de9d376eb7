package fleetplot

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/ohmypi/retryfsm/fleet"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runConfig runs the one fleet cfg: its result.
func runConfig(cfg fleet.Config, opt fleet.Options) (*fleet.Result, error) {
	return sweepConfigs([]fleet.Config{cfg}, opt)
}

// sweepConfigs runs the sweep cfgs (fleet.Run of their plan): its result.
func sweepConfigs(cfgs []fleet.Config, opt fleet.Options) (*fleet.Result, error) {
	p, err := fleet.Run(context.Background(), fleet.PlanOf(cfgs...), opt)
	if err != nil {
		return nil, err
	}
	return &p.Result, nil
}
