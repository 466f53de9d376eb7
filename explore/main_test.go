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
// while the explorations are held. Measured again once the coverage test
// held only the transition records (the test binary, 3 runs each, on the
// loaded 2-core machine, CPU user+sys and peak RSS): GOGC=100 8.5-11.1 s,
// 116-120 MB; 200 7.0-8.5 s, 148-183 MB; 400 6.1-7.4 s, 282-299 MB; off
// with a 300 MiB limit 5.1-7.0 s, 296-309 MB. Collecting half as often
// still pays; less often gains less than the runs differ by, for twice
// the memory.
func TestMain(m *testing.M) {
	flag.Parse()
	if os.Getenv("GOGC") == "" && flag.Lookup("test.bench").Value.String() == "" {
		debug.SetGCPercent(200)
	}
	goleak.VerifyTestMain(m)
}
