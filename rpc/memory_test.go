package rpc_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/rpc"
)

const promptLine = `{"type":"prompt","message":"hello"}` + "\n"

// promptFeed is an input of n prompt commands, made as it is read, that
// calls marks[i] when it is about to give the i-th.
func promptFeed(n int, marks map[int]func()) *testkit.Feed {
	return &testkit.Feed{N: n, Block: func(i int) []byte {
		if fn := marks[i]; fn != nil {
			fn()
		}
		return []byte(promptLine)
	}}
}

// TestServeMemoryBoundedByPrompts: the server's heap after 200,000 prompts
// is within 2 MB of its heap after 20,000 (issue 8: it kept every message,
// about 0.93 KB a prompt).
func TestServeMemoryBoundedByPrompts(t *testing.T) {
	testkit.Need(t, testkit.Soak, "200,000 prompts")
	var at20k, at200k uint64
	feed := promptFeed(200_001, map[int]func(){
		20_001:  func() { at20k = testkit.HeapAlloc() },
		200_001: func() { at200k = testkit.HeapAlloc() },
	})
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
// peaks under 40 MB of resident memory (VmHWM of /proc/PID/status, read
// once every prompt has resolved and before the input ends; getrusage's
// maxrss would also count the test process, whose memory the child shares
// until it execs).
func TestRetrysimRPCMaxRSS(t *testing.T) {
	testkit.Need(t, testkit.Soak, "200,000 prompts")
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	const n = 200_000
	cmd := exec.Command(retrysimBin, "rpc", "--virtual")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fed := make(chan error, 1)
	go func() {
		_, err := io.Copy(stdin, promptFeed(n, nil))
		fed <- err
	}()
	resolved := 0
	sc := bufio.NewScanner(stdout)
	for resolved < n && sc.Scan() {
		if strings.Contains(sc.Text(), `"type":"prompt_resolved"`) {
			resolved++
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	stdin.Close()
	io.Copy(io.Discard, stdout)
	if werr := cmd.Wait(); werr != nil {
		t.Fatalf("retrysim rpc: %v (%s)", werr, stderr.String())
	}
	if ferr := <-fed; ferr != nil {
		t.Fatal(ferr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if resolved != n {
		t.Fatalf("%d prompts resolved, want %d", resolved, n)
	}
	var hwmKB int64 = -1
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			hwmKB, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	if hwmKB <= 0 {
		t.Fatalf("no VmHWM in /proc/PID/status:\n%s", status)
	}
	t.Logf("retrysim rpc --virtual, %d prompts: peak RSS %.1f MB", n, float64(hwmKB)/1024)
	if hwmKB*1024 > 40<<20 {
		t.Errorf("peak RSS %d kB after %d prompts, want under 40 MB", hwmKB, n)
	}
}
