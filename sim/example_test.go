package sim_test

import (
	"fmt"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// A scenario in, a deterministic trace and its checked expectations out.
func ExampleRunScenario() {
	sc, err := scenario.Parse("inline.yaml", []byte(`
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: error, errorMessage: "503 service unavailable"}
  - {stopReason: stop}
expect:
  events:
    - {t: 0, type: auto_retry_start, attempt: 1, delayMs: 2000}
    - {t: 2000, type: auto_retry_start, attempt: 2, delayMs: 4000}
    - {t: 6000, type: auto_retry_end, success: true, attempt: 2}
  final: {state: idle, attempt: 0, isRetrying: false, unresolvedPrompts: []}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	lines, _ := trace.FilterConformance(res.Trace)
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println("passed:", res.Passed())
	// Output:
	// t=0 agent_run kind="prompt"
	// t=0 auto_retry_start attempt=1 maxAttempts=3 delayMs=2000 errorMessage="529 overloaded_error"
	// t=2000 agent_run kind="continue"
	// t=2000 auto_retry_start attempt=2 maxAttempts=3 delayMs=4000 errorMessage="503 service unavailable"
	// t=6000 agent_run kind="continue"
	// t=6000 auto_retry_end success=true attempt=2
	// t=6000 prompt_resolved prompt=1
	// passed: true
}
