//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	d, _ := testkit.CPUTime()
	return d
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

// TestFleetMergeSizeCapFromStat: a 300 MB partial is refused from its size
// before any of it is read (also as one of a folder's *.json files), and
// /dev/zero is refused as not a file, each in under 1 MB allocated (issue 19 §3: 8 s and 600 MB; 256
// MiB read from /dev/zero).
func TestFleetMergeSizeCapFromStat(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(300 << 20); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	cases := []struct{ path, want string }{
		{big, big + ": larger than 268435456 bytes (314572800 bytes): not a partial result"},
		{dir, big + ": larger than 268435456 bytes (314572800 bytes): not a partial result"}, // a folder stands for its *.json
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct{ path, want string }{"/dev/zero", "/dev/zero: a device, not a partial result"})
	}
	for _, c := range cases {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		code, out, errOut := runMain(t, "fleet", "merge", c.path)
		runtime.ReadMemStats(&after)
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", c.path, code, out, errOut, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
			t.Errorf("%s: %d bytes allocated to refuse it", c.path, alloc)
		}
	}
}
