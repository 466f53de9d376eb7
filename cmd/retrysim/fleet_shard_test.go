//go:build unix

package main

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestFleetShardOfAMillionRuns: `fleet --sessions 1 --seeds 1-1000000
// --shard 999999/1000000 --json` runs its one run in under 50 MB allocated
// and 1 s of CPU time (issue 19 §2: 2.7 GB and 33 s), with a fleet file's
// seeds too.
func TestFleetShardOfAMillionRuns(t *testing.T) {
	dir := writeFiles(t, map[string]string{"big.yaml": "sessions: 1\nseeds: 1-1000000\n"})
	for _, args := range [][]string{
		{"fleet", "--sessions", "1", "--seeds", "1-1000000", "--shard", "999999/1000000", "--json"},
		{"fleet", dir + "/big.yaml", "--shard", "999999/1000000", "--json"},
	} {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0 := processCPU()
		code, out, errOut := runMain(t, args...)
		cpu := processCPU() - cpu0
		runtime.ReadMemStats(&after)
		if code != exitOK || errOut != "" {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%v: %d bytes allocated, %v CPU", args[1:], alloc, cpu)
		if alloc > 50<<20 {
			t.Errorf("%v: %d bytes allocated (allowed: under 50 MB)", args, alloc)
		}
		if cpu > time.Second {
			t.Errorf("%v: %v of CPU time (allowed: under 1 s)", args, cpu)
		}
		if !strings.Contains(out, `"runs": 1000000`) || !strings.Contains(out, "\"seeds\": [\n        1000000\n      ]") {
			t.Errorf("%v: not the shard of the last run:\n%s", args, out)
		}
	}
}
