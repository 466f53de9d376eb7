package audit_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
)

// TestRealAgentLive runs the real agent (the realagent tool: REALAGENT_WORK
// set up by its setup.sh; REALAGENT_TOOL its folder, by default the one
// beside the repository) against retrysim-proxy, built from this tree,
// through two of the recorded runs' scripts, and audits what it did as
// TestRealAgentLogs audits the recorded logs: clean, by order and by
// time, with the same requests per session attempt. It takes about a
// minute; without REALAGENT_WORK it is skipped (.ci/run runs it when the
// setup succeeds).
func TestRealAgentLive(t *testing.T) {
	work := os.Getenv("REALAGENT_WORK")
	if work == "" {
		t.Skip("REALAGENT_WORK is not set: the real agent is not set up (run the realagent tool's setup.sh)")
	}
	if _, err := os.Stat(filepath.Join(work, "rt", "agent", "dist", "cli.js")); err != nil {
		t.Skipf("REALAGENT_WORK=%s holds no agent (run the realagent tool's setup.sh): %v", work, err)
	}
	tool := os.Getenv("REALAGENT_TOOL")
	if tool == "" {
		tool = filepath.Join("..", "..", "shared", "tools", "realagent")
	}
	run, err := filepath.Abs(filepath.Join(tool, "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(run); err != nil {
		t.Fatalf("the realagent tool's run.sh: %v (REALAGENT_TOOL names its folder)", err)
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../cmd/retrysim-proxy" // a module of its own
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		run      string
		attempts []int
	}{
		{"529-529-ok", []int{3}},
		{"sse-error", []int{1, 1}},
	} {
		t.Run(tc.run, func(t *testing.T) {
			out := t.TempDir()
			script, err := filepath.Abs(filepath.Join(realAgentDir, tc.run, "script.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(run, out, script, "90")
			cmd.Env = append(os.Environ(), "RETRYSIM_PROXY="+filepath.Join(bin, "retrysim-proxy"))
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("run.sh: %v\n%s", err, msg)
			}
			read := func(name string) []byte {
				b, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			rpcLog, tsLog, wireLog := read("rpc.jsonl"), read("rpc.ts.jsonl"), read("wire.jsonl")
			if fs, sum := auditLog(t, rpcLog, audit.Options{Profile: "omp-18"}); len(fs) != 0 || sum.Protocol != 2 {
				t.Errorf("RPC log alone: %v (%+v)\n%s", fs, sum, numbered(rpcLog))
			}
			for _, log := range [][]byte{rpcLog, tsLog} {
				// (529-529-ok has no session retry to measure the
				// jitter on: the slack of a wire log alone)
				rf, wf, ats, _ := layersOf(t, log, wireLog, realAgentWireAlone)
				var reqs []int
				for _, at := range ats {
					reqs = append(reqs, at.Requests)
				}
				if rf != "" || wf != "" || !slices.Equal(reqs, tc.attempts) {
					t.Errorf("both logs: RPC %q, wire %q, requests %v (want %v)\n%s", rf, wf, reqs, tc.attempts, wireLog)
				}
			}
			if got, _ := wireOf(t, "omp-18", wireLog, realAgentWireAlone); got != "" {
				t.Errorf("wire log alone: %q\n%s", got, wireLog)
			}
		})
	}
}
