package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layerLogFiles writes an RPC log of one run (protocol 2) and the wire
// log of its three requests (529, 529, then 200; waits 500 and 1000 ms).
func layerLogFiles(t *testing.T, secondWait float64) (rpc, wire string) {
	t.Helper()
	const epoch = 1771200000000
	dir := t.TempDir()
	rpc, wire = filepath.Join(dir, "rpc.jsonl"), filepath.Join(dir, "wire.jsonl")
	r := fmt.Sprintf(`{"type":"ready","protocolVersion":2}
{"type":"agent_start","timestamp":%d}
{"type":"turn_start","timestamp":%d}
{"type":"message_end","message":{"role":"assistant","stopReason":"stop","completedAt":%d,"duration":1600},"timestamp":%d}
{"type":"agent_end","timestamp":%d}
{"type":"prompt_result","id":"p1","agentInvoked":true,"status":"ok","sessionSettled":true}
{"type":"session_settled"}
`, epoch, epoch, epoch+3000, epoch+3000, epoch+3000)
	var w strings.Builder
	for i, q := range [][3]float64{{0, 529, 50}, {550, 529, 50}, {600 + secondWait, 200, 0}} {
		fmt.Fprintf(&w, `{"type":"request","seq":%d,"timestamp":%v,"method":"POST","path":"/v1/messages","stream":false,"turn":%d,"status":%v,"headersMs":%v,"answerMs":%v,"bytesIn":1}`+"\n",
			i+1, epoch+q[0], i+1, q[1], q[2], q[2])
	}
	if err := os.WriteFile(rpc, []byte(r), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wire, []byte(w.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return rpc, wire
}

// TestAuditLayersCommand: under omp-18 an RPC log alone is clean but says
// the provider layer is not visible; with --wire=WIRELOG both layers are
// checked, each attempt's requests counted (text and JSON); a provider
// layer that retried too soon is a finding (exit 1); a profile without a
// layer or two logs are usage errors.
func TestAuditLayersCommand(t *testing.T) {
	rpc, wire := layerLogFiles(t, 1000)
	code, out, errOut := runMain(t, "audit", "--profile", "omp-18", rpc)
	if code != exitOK || !strings.HasSuffix(out, "; profile omp-18); protocol 2; provider layer not visible in this log\n") {
		t.Errorf("RPC log alone: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runMain(t, "audit", "--profile", "omp-18", "--wire="+wire, rpc)
	want := rpc + ":2: attempt 0: 3 requests (" + wire + " lines 1-3)\n" +
		"audit: clean in 1 log (7 lines: 6 events, 1 skipped, 0 bad; 0 chains, 0 retries; profile omp-18); protocol 2; provider layer checked with the wire log\n" +
		"audit --wire: clean in " + wire + " (3 lines: 3 requests, 0 skipped, 0 bad; 1 call, 2 retries over 1 session attempt; provider layer pi-ai-anthropic)\n"
	if code != exitOK || out != want {
		t.Errorf("both layers: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	code, out, _ = runMain(t, "audit", "--profile", "omp-18", "--json", "--wire="+wire, rpc)
	if code != exitOK || !strings.Contains(out, `{"type":"attempt","log":"`+rpc+`","line":2,"attempt":0,"requests":3,"wireFrom":1,"wireTo":3}`) ||
		!strings.Contains(out, `"providerLayer":"checked","layer":"pi-ai-anthropic","wire":{"lines":3,"events":3,"skipped":0,"bad":0,"chains":1,"retries":2,"findings":0},"attempts":1}`) {
		t.Errorf("--json: exit %d\n%s", code, out)
	}

	rpc, wire = layerLogFiles(t, 100) // the second retry 100 ms after the answer
	code, out, _ = runMain(t, "audit", "--profile", "omp-18", "--wire="+wire, rpc)
	if code != exitFail || !strings.Contains(out, wire+":3: wire-wait: retry 2 waited 100.0 ms") || !strings.Contains(out, "audit --wire: 1 finding in") {
		t.Errorf("a short wait: exit %d\n%s", code, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profile", "omp-2026-06", "--wire=" + wire, rpc}, "profile omp-2026-06 has no provider layer"},
		{[]string{"--profile", "omp-18", "--wire=" + wire, rpc, rpc}, "--wire=WIRELOG takes one RPC log, the run's (got 2 logs)"},
		{[]string{"--profile", "omp-18", "--wire=-", "-"}, "cannot both be the standard input"},
	} {
		code, _, errOut := runMain(t, append([]string{"audit"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestAuditRealAgentLogsCommand: the real agent's logs (the audit's
// testdata/realagent) through the command: the RPC log as the agent wrote
// it (no timestamps) with its wire log is clean without --slack, the runs
// placed by order, the slack widened by the log's jitter; the wire log alone says which layer it checks, that the profiles that
// fit cannot be told apart, and which requests it could not place.
func TestAuditRealAgentLogsCommand(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "audit", "testdata", "realagent", "529-forever")
	code, out, errOut := runAuditOn(t, "", "--profile", "omp-18", "--wire="+filepath.Join(dir, "wire.jsonl"), filepath.Join(dir, "rpc.jsonl"))
	if code != exitOK || strings.Count(out, ": 11 requests (") != 11 || !strings.Contains(out, "11 calls, 110 retries over 11 session attempts; provider layer pi-ai-anthropic; slack widened by 380.4 ms, the lateness of 10 session retries)") {
		t.Errorf("both logs: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runAuditOn(t, "", "--wire", "--profile", "omp-18", "--slack", "500", filepath.Join(dir, "wire.jsonl"))
	for _, want := range []string{"profile omp-18, its provider layer pi-ai-anthropic on the wire", "best fit: omp-2026-06, omp-18, pi-ai-anthropic (0 findings; the log cannot tell them apart)",
		"; 10 requests after an answer the profile does not retry taken as new calls"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("wire log alone: exit %d, want %q in\n%s%s", code, want, out, errOut)
		}
	}
	code, out, _ = runAuditOn(t, "", "--profile", "omp-18", "--json", "--wire="+filepath.Join(dir, "wire.jsonl"), filepath.Join(dir, "rpc.jsonl"))
	if code != exitOK || !strings.Contains(out, `"attempts":11,"jitterMs":380.39`) || !strings.Contains(out, `,"jitterRetries":10}`) {
		t.Errorf("both logs, --json: exit %d\n%s", code, out)
	}
}

// TestAuditWireMissingLog: as the RPC audit (SPEC §16), a wire log that
// cannot be read (missing, a folder) prints no summary on stdout and
// exits 2; with a readable one beside it, the summary counts that one.
func TestAuditWireMissingLog(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"--wire", filepath.Join(dir, "nonexistent.jsonl")}, {"--wire", dir}, {"--wire", "--json", dir}} {
		code, out, errOut := runAuditOn(t, "", args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "retrysim audit: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2, nothing on stdout", args, code, out, errOut)
		}
	}
	_, wire := layerLogFiles(t, 1000)
	code, out, _ := runAuditOn(t, "", "--wire", "--json", wire, filepath.Join(dir, "nonexistent.jsonl"))
	if code != exitUsage || !strings.Contains(out, `"logs":1,`) || !strings.Contains(out, `"lines":3,`) {
		t.Errorf("one log read of two: exit %d\n%s", code, out)
	}
}

// TestAuditSlackFlag: --slack takes milliseconds from 0 to 3600000, a
// bad value quoted as written (NaN is not a number of milliseconds), and
// only with a wire log.
func TestAuditSlackFlag(t *testing.T) {
	rpc, wire := layerLogFiles(t, 1000)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--wire", "--slack", "NaN", wire}, `--slack: "NaN" is not a number of milliseconds from 0 to 3600000`},
		{[]string{"--wire", "--slack", "1e20", wire}, `--slack: "1e20" is not a number of milliseconds from 0 to 3600000`},
		{[]string{"--wire", "--slack", "-1", wire}, `--slack: "-1" is not a number`},
		{[]string{"--wire", "--slack", "soon", wire}, `"soon" is not a number`},
		{[]string{"--slack", "100", rpc}, "--slack 100: the slack is a wire log's (allowed with --wire or --wire=WIRELOG)"},
	} {
		code, out, errOut := runAuditOn(t, "", tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 saying %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if code, out, errOut := runAuditOn(t, "", "--wire", "--slack", "0", wire); code != exitOK {
		t.Errorf("--slack 0: exit %d\n%s%s", code, out, errOut)
	}
}
