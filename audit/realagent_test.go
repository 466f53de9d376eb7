package audit_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/audit"
)

// The real agent's logs (testdata/realagent, README there): each run's RPC
// log as the agent wrote it (rpc.jsonl, no timestamps), the same lines with
// their receipt times (rpc.ts.jsonl), and the proxy's wire log. They were
// recorded on a loaded machine whose timers ran up to ~420 ms late, hence
// the slack.
const realAgentDir = "testdata/realagent"

var realAgentWire = audit.WireOptions{Slack: 500 * time.Millisecond}

func realAgentFile(t *testing.T, run, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realAgentDir, run, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ruleLines is findings as "rule@line ..." in the order found.
func ruleLines(fs []audit.Finding) string {
	var s []string
	for _, f := range fs {
		s = append(s, fmt.Sprintf("%s@%d", f.Rule, f.Line))
	}
	return strings.Join(s, " ")
}

// layersOf audits rpcLog and wireLog together under omp-18.
func layersOf(t *testing.T, rpcLog, wireLog []byte, opt audit.WireOptions) (rpcFs, wireFs string, ats []audit.Attempt, sum audit.LayersSummary) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: "omp-18"})
	if err != nil {
		t.Fatal(err)
	}
	var rf, wf []audit.Finding
	sum, err = a.AuditLayers(bytes.NewReader(rpcLog), bytes.NewReader(wireLog), opt,
		func(f audit.Finding) { rf = append(rf, f) }, func(f audit.Finding) { wf = append(wf, f) },
		func(at audit.Attempt) { ats = append(ats, at) })
	if err != nil {
		t.Fatal(err)
	}
	return ruleLines(rf), ruleLines(wf), ats, sum
}

// wireOf audits a wire log alone under profile.
func wireOf(t *testing.T, profile string, wireLog []byte, opt audit.WireOptions) (string, audit.WireSummary) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	var fs []audit.Finding
	sum, err := a.AuditWire(bytes.NewReader(wireLog), opt, func(f audit.Finding) { fs = append(fs, f) })
	if err != nil {
		t.Fatal(err)
	}
	return ruleLines(fs), sum
}

// realAgentRuns are the recorded runs and what the audit finds in each
// under omp-18: in the RPC log (alone and with the wire log), in the wire
// log with the RPC log, and in the wire log alone. Every finding is one
// the log shows: the run stopped during a provider wait ended with no
// auto_retry_end (the harness closed the agent's input), and its wire log
// alone ends with a retry due.
var realAgentRuns = []struct {
	run             string
	rpc, wireLayers string
	wireAlone       string
	attempts        []int // requests per session attempt
}{
	{"529-529-ok", "", "", "", []int{3}},
	{"429-retry-after-3", "", "", "", []int{2}},
	{"429-retry-after-90", "", "", "", []int{2}},
	{"529-forever", "", "", "", []int{11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11}},
	{"sse-error", "", "", "", []int{1, 1}},
	{"stream-cut", "", "", "", []int{2}},
	{"abort-retry-during-wait", "", "", "", []int{11}},
	{"abort-retry-during-provider-wait", "chain-not-ended@12", "", "wire-not-retried@30", []int{11, 11, 8}},
	{"fleet-outage", "", "", "", []int{11, 11}},
}

// TestRealAgentLogs: the audit is right on the real agent's logs: no
// bad-event, no false finding, the same runs and requests per session
// attempt whether the RPC log has times (placed by time) or not (by
// order).
func TestRealAgentLogs(t *testing.T) {
	for _, tc := range realAgentRuns {
		t.Run(tc.run, func(t *testing.T) {
			rpcLog, tsLog, wireLog := realAgentFile(t, tc.run, "rpc.jsonl"), realAgentFile(t, tc.run, "rpc.ts.jsonl"), realAgentFile(t, tc.run, "wire.jsonl")
			fs, sum := auditLog(t, rpcLog, audit.Options{Profile: "omp-18"})
			if got := ruleLines(fs); got != tc.rpc || sum.Bad != 0 || sum.Protocol != 2 {
				t.Errorf("RPC log alone: %q, want %q (%+v)", got, tc.rpc, sum)
			}
			var placed [][]audit.Attempt
			for _, log := range [][]byte{rpcLog, tsLog} {
				rf, wf, ats, sum := layersOf(t, log, wireLog, realAgentWire)
				if rf != tc.rpc || wf != tc.wireLayers || sum.RPC.Bad != 0 {
					t.Errorf("both logs: RPC %q, wire %q; want %q, %q", rf, wf, tc.rpc, tc.wireLayers)
				}
				var reqs []int
				for _, at := range ats {
					reqs = append(reqs, at.Requests)
				}
				if !slices.Equal(reqs, tc.attempts) {
					t.Errorf("requests per session attempt %v, want %v", reqs, tc.attempts)
				}
				placed = append(placed, ats)
			}
			if !slices.Equal(placed[0], placed[1]) {
				t.Errorf("by order %+v, by time %+v", placed[0], placed[1])
			}
			if got, _ := wireOf(t, "omp-18", wireLog, realAgentWire); got != tc.wireAlone {
				t.Errorf("wire log alone: %q, want %q", got, tc.wireAlone)
			}
		})
	}
}

// editLines returns log without its lines from..to (1-based), and with
// each old replaced by new.
func editLines(log []byte, from, to int, repl ...string) []byte {
	lines := strings.SplitAfter(string(log), "\n")
	if from > 0 {
		lines = append(lines[:from-1:from-1], lines[to:]...)
	}
	out := strings.Join(lines, "")
	for i := 0; i+1 < len(repl); i += 2 {
		out = strings.Replace(out, repl[i], repl[i+1], 1)
	}
	return []byte(out)
}

// TestRealAgentEditedLogsFlagged: the real logs edited to break the
// profile are flagged where they break it: a provider layer that gives up
// after 4 retries (the permanent 529's first call without its last 6
// requests), and a session delay below omp-18's range.
func TestRealAgentEditedLogsFlagged(t *testing.T) {
	rpcLog, tsLog, wireLog := realAgentFile(t, "529-forever", "rpc.jsonl"), realAgentFile(t, "529-forever", "rpc.ts.jsonl"), realAgentFile(t, "529-forever", "wire.jsonl")
	short := editLines(wireLog, 6, 11)
	// by time: the run went on while a retry was due
	if rf, wf, _, _ := layersOf(t, tsLog, short, realAgentWire); rf != "" || wf != "wire-not-retried@5" {
		t.Errorf("short provider layer, by time: RPC %q, wire %q", rf, wf)
	}
	// by order: the session's retry, read as the provider layer's fifth,
	// came far sooner than its 4 to 8 s
	if rf, wf, _, _ := layersOf(t, rpcLog, short, realAgentWire); rf != "" || !strings.HasPrefix(wf, "wire-wait@6") {
		t.Errorf("short provider layer, by order: RPC %q, wire %q", rf, wf)
	}
	if got, _ := wireOf(t, "omp-18", short, realAgentWire); !strings.HasPrefix(got, "wire-wait@6") {
		t.Errorf("short provider layer, wire alone: %q", got)
	}
	line := bytes.Count(rpcLog[:bytes.Index(rpcLog, []byte(`"type":"auto_retry_start"`))], []byte("\n")) + 1
	soon := editLines(rpcLog, 0, 0, `"attempt":1,"maxAttempts":10,"delayMs":`, `"attempt":1,"maxAttempts":10,"delayMs":100,"was":`)
	if rf, wf, _, _ := layersOf(t, soon, wireLog, realAgentWire); rf != fmt.Sprintf("delay@%d", line) || wf != "" {
		t.Errorf("session delay 100 ms: RPC %q, wire %q", rf, wf)
	}
}

// TestWireWithoutRetryCount: the real agent sends no
// x-stainless-retry-count; its session layer's retries after the provider
// layer's 11th 529 are not the provider layer's 12th (10 requests the log
// cannot place: Ambiguous), under omp-18 and under its provider layer's
// profile alike.
func TestWireWithoutRetryCount(t *testing.T) {
	wireLog := realAgentFile(t, "529-forever", "wire.jsonl")
	for _, p := range []string{"omp-18", "pi-ai-anthropic"} {
		got, sum := wireOf(t, p, wireLog, realAgentWire)
		if got != "" || sum.Chains != 11 || sum.Retries != 110 || sum.Ambiguous != 10 {
			t.Errorf("%s: %q, %+v", p, got, sum)
		}
	}
}

// TestCutStreamRetried: the provider layer's retry of a cut stream is a
// retry (1 call, 1 retry), its wait checked.
func TestCutStreamRetried(t *testing.T) {
	wireLog := realAgentFile(t, "stream-cut", "wire.jsonl")
	got, sum := wireOf(t, "omp-18", wireLog, realAgentWire)
	if got != "" || sum.Chains != 1 || sum.Retries != 1 {
		t.Errorf("%q, %+v", got, sum.Summary)
	}
	// the retry moved to 50 ms after the cut: too soon
	var first struct{ Timestamp, AnswerMs float64 }
	if err := json.Unmarshal(wireLog[:bytes.IndexByte(wireLog, '\n')], &first); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(wireLog), "\n")
	second := strings.Split(lines[1], `"timestamp":`)
	rest := second[1][strings.IndexByte(second[1], ','):]
	soon := lines[0] + second[0] + `"timestamp":` + fmt.Sprintf("%.3f", first.Timestamp+first.AnswerMs+50) + rest
	if got, _ := wireOf(t, "omp-18", []byte(soon), realAgentWire); got != "wire-wait@2" {
		t.Errorf("a retry 50 ms after the cut: %q", got)
	}
}

// TestSlackGrowsWithTheWait: the four SDKs waited a 65 s retry-after 63 to
// 74 ms late (as time.Sleep(65s) did on that machine): clean with the
// default slack, whose part in proportion to the wait allows 325 ms there;
// half a second late is not.
func TestSlackGrowsWithTheWait(t *testing.T) {
	ra := map[string]string{"retry-after": "65"}
	for _, p := range []string{"anthropic-sdk", "anthropic-sdk-go", "openai-sdk", "openai-sdk-go"} {
		for late, want := range map[float64]string{63: "", 74: "", 500: "wire-wait@2"} {
			log := wireLog(t, wreq{0, 0, 429, ra, 1, nil}, wreq{65001 + late, 1, 200, nil, 1, nil})
			if got, _ := wireOf(t, p, []byte(log), audit.WireOptions{}); got != want {
				t.Errorf("%s, %v ms late: %q, want %q", p, late, got, want)
			}
		}
	}
}

// TestBestFitRanks: the best fit is ranked, not every profile without a
// finding: with a slack that lets any late wait pass, waits of exactly 2
// and 4 s fit omp-2026-02, pi and opencode (2 s doubling, no jitter: the
// log cannot tell them apart) better than the profiles whose shorter
// ranges they passed late (omp-2026-06's 375-500 ms, ...); a log of one
// success cannot tell any profile apart.
func TestBestFitRanks(t *testing.T) {
	log := wireLog(t, wreq{0, -1, 529, nil, 1, nil}, wreq{2001, -1, 529, nil, 1, nil}, wreq{6002, -1, 200, nil, 1, nil})
	_, sum := wireOf(t, "omp-2026-02", []byte(log), audit.WireOptions{Slack: 10 * time.Second})
	if want := []string{"omp-2026-02", "pi", "opencode"}; !slices.Equal(sum.Best, want) {
		t.Errorf("best %v, want %v; fits %+v", sum.Best, want, sum.Fits)
	}
	if !slices.Contains(sum.Best, "omp-2026-02") || slices.Contains(sum.Best, "omp-2026-06") {
		t.Errorf("best %v; fits %+v", sum.Best, sum.Fits)
	}
	var zero int
	for _, f := range sum.Fits {
		if f.Findings == 0 {
			zero++
		}
	}
	if len(sum.Best) >= zero {
		t.Errorf("best %v: all %d profiles without a finding", sum.Best, zero)
	}
	_, one := wireOf(t, "omp-2026-02", []byte(wireLog(t, wreq{0, -1, 200, nil, 1, nil})), audit.WireOptions{})
	if len(one.Best) != len(one.Fits) {
		t.Errorf("one success: best %v of %d", one.Best, len(one.Fits))
	}
}

// TestCutJSONBodyEdges: a 200 whose JSON body is cut is returned, not
// retried, by both JS SDKs and openai-go (clean under their profiles when
// the next request is a new call), and retried by anthropic-sdk-go (its
// profile flags the missing retry).
func TestCutJSONBodyEdges(t *testing.T) {
	log := wireLog(t, wreq{0, 0, 200, nil, 1, []string{"stream-cut"}}, wreq{451, 1, 200, nil, 1, nil}, wreq{5000, 0, 200, nil, 1, []string{"stream-cut"}}, wreq{9000, 0, 200, nil, 1, nil})
	for p, want := range map[string]string{"anthropic-sdk": "wire-retried@2", "openai-sdk": "wire-retried@2", "openai-sdk-go": "wire-retried@2", "anthropic-sdk-go": "wire-not-retried@3"} {
		if got, _ := wireOf(t, p, []byte(log), audit.WireOptions{}); got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
}
