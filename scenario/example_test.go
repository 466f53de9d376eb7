package scenario_test

import (
	"fmt"

	"github.com/ohmypi/retryfsm/scenario"
)

// A parse error says where and what is allowed.
func ExampleParse_error() {
	_, err := scenario.Parse("bad.yaml", []byte("turns:\n  - {stopReason: eror}\n"))
	fmt.Println(err)
	// Output:
	// bad.yaml:2:18: turns[0].stopReason: unknown value "eror" (allowed: stop, length, toolUse, error, aborted)
}
