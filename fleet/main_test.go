package fleet

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runConfig runs the one fleet cfg (Run of PlanOf(cfg)): its result.
func runConfig(cfg Config, opt Options) (*Result, error) {
	return sweepConfigs([]Config{cfg}, opt)
}

// sweepConfigs runs the sweep cfgs (Run of PlanOf(cfgs...)): its result.
func sweepConfigs(cfgs []Config, opt Options) (*Result, error) {
	p, err := Run(context.Background(), PlanOf(cfgs...), opt)
	if err != nil {
		return nil, err
	}
	return &p.Result, nil
}
