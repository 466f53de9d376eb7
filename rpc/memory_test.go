package rpc_test

import (
	"context"
	"io"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/ohmypi/retryfsm/rpc"
)

// promptFeed is an endless-looking input of n prompt commands that calls
// at(i) when it has produced i lines, for each i in marks.
type promptFeed struct {
	n, i  int
	marks map[int]func()
	rest  []byte
}

const promptLine = `{"type":"prompt","message":"hello"}` + "\n"

func (f *promptFeed) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) {
		if len(f.rest) == 0 {
			if f.i == f.n {
				break
			}
			f.i++
			if fn := f.marks[f.i]; fn != nil {
				fn()
			}
			f.rest = []byte(promptLine)
		}
		k := copy(p[w:], f.rest)
		f.rest = f.rest[k:]
		w += k
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

func heapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestServeMemoryBoundedByPrompts: the server's heap after 200,000 prompts
// is within 2 MB of its heap after 20,000 (issue 8: it kept every message,
// about 0.93 KB a prompt).
func TestServeMemoryBoundedByPrompts(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 prompts")
	}
	var at20k, at200k uint64
	feed := &promptFeed{n: 200_001, marks: map[int]func(){
		20_001:  func() { at20k = heapAlloc() },
		200_001: func() { at200k = heapAlloc() },
	}}
	err := rpc.Serve(context.Background(), feed, io.Discard, rpc.Options{Scenario: parseScenario(t, "{}"), Virtual: true})
	if err != nil {
		t.Fatal(err)
	}
	if at20k == 0 || at200k == 0 {
		t.Fatal("the feed did not reach its marks")
	}
	growth := int64(at200k) - int64(at20k)
	t.Logf("heap after 20,000 prompts %d B, after 200,000 %d B (growth %d B)", at20k, at200k, growth)
	if growth > 2<<20 {
		t.Errorf("heap grew by %d bytes from 20,000 to 200,000 prompts, want at most 2 MB", growth)
	}
}

// TestRetrysimRPCMaxRSS: `retrysim rpc --virtual` fed 200,000 prompts
// peaks under 40 MB of resident memory (getrusage's maxrss).
func TestRetrysimRPCMaxRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 prompts")
	}
	cmd := exec.Command(retrysimBin, "rpc", "--virtual")
	cmd.Stdin = &promptFeed{n: 200_000}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("retrysim rpc: %v (%s)", err, stderr.String())
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	rss := ru.Maxrss * 1024 // kilobytes on Linux
	if runtime.GOOS == "darwin" {
		rss = ru.Maxrss
	}
	t.Logf("retrysim rpc --virtual, 200,000 prompts: max RSS %.1f MB", float64(rss)/(1<<20))
	if rss > 40<<20 {
		t.Errorf("max RSS %d bytes after 200,000 prompts, want under 40 MB", rss)
	}
}
