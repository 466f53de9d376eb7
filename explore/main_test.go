package explore

import (
	"flag"
	"os"
	"runtime/debug"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests with the collector at GOGC=200 unless GOGC is
// given or benchmarks run (their memory figures are measured at the
// default): the replay tests allocate a scenario and a trace per state
// while the explorations are held, and collecting half as often takes
// about 8 % of the package's CPU off (9.4 s -> 8.6 s, the mean of five
// runs each) for a peak of 515-640 MB instead of 260-510 MB.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("GOGC") == "" && flag.Lookup("test.bench").Value.String() == "" {
		debug.SetGCPercent(200)
	}
	goleak.VerifyTestMain(m)
}
