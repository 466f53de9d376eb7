package explore

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/session"
)

// BenchmarkExploreMaxRetries measures what one `retrysim check` costs per
// variant and maxRetries: "single/mr=N" is Check(v, N, N) (--max-retries N),
// "upto/mr=N" is Check(v, 0, N) (--max-retries-upto N). Besides -benchmem
// it reports the states explored, the process's CPU time per check (user
// and system, all threads: cpu-s/op), the heap still live when Check
// returns (live-MB) and, on Linux, the process's peak resident memory
// during the run (peak-RSS-MB, from /proc/self/status VmHWM after
// resetting it).
// MaxRetriesLimit's figures come from this benchmark on 2 cores:
//
//	go test ./explore -run '^$' -bench 'ExploreMaxRetries/original/upto/mr=11$' -benchtime 1x -benchmem
//
// Without -benchtime 1x the large sizes run for minutes; the default
// selection stops at each variant's limit.
func BenchmarkExploreMaxRetries(b *testing.B) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		for _, mode := range []string{"single", "upto"} {
			for mr := 0; mr <= MaxRetriesLimit(v); mr++ {
				from := mr
				if mode == "upto" {
					from = 0
				}
				b.Run(fmt.Sprintf("%s/%s/mr=%d", v.Name, mode, mr), func(b *testing.B) {
					benchCheck(b, v, from, mr)
				})
			}
		}
	}
}

func benchCheck(b *testing.B, v *session.Variant, from, to int) {
	debug.FreeOSMemory() // what earlier runs left must not count as this one's peak
	resetPeakRSS()
	var sum *Summary
	cpu0, cpuOK := testkit.CPUTime()
	for b.Loop() {
		sum = nil // the previous run's states are garbage while this one runs
		var err error
		if sum, err = Check(v, from, to); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if cpu1, ok := testkit.CPUTime(); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/op")
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(sum.States), "states")
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
	runtime.KeepAlive(sum)
	if kb, ok := peakRSSKiB(); ok {
		b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
	}
}

// resetPeakRSS resets the process's peak resident set size (Linux >= 4.0);
// elsewhere it does nothing.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSKiB reads the process's peak resident set size (Linux only).
func peakRSSKiB() (int, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb, err == nil
		}
	}
	return 0, false
}
