package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rpcLogFile runs "retrysim rpc --virtual ARGS..." in-process on the
// commands and writes its output into a file of dir, whose path it returns.
func rpcLogFile(t *testing.T, dir, name, commands string, args ...string) string {
	t.Helper()
	c := lookup("rpc")
	var out, errOut bytes.Buffer
	fs := newFlagSet(c, &errOut)
	pos, err := parseInterspersed(fs, append([]string{"--virtual"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	if code := runRPC(fs, pos, strings.NewReader(commands), &out, &errOut); code != exitOK {
		t.Fatalf("rpc %v: exit %d: %s", args, code, errOut.String())
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runAuditOn runs "retrysim audit ARGS..." with stdin.
func runAuditOn(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	c := lookup("audit")
	var out, errOut bytes.Buffer
	fs := newFlagSet(c, &errOut)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return exitUsage, "", errOut.String()
	}
	code = runAudit(fs, pos, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// Scenario 10b (conformance): a fatal error leaves the chain open; after an
// abort the next prompt's chain starts at attempt 2 in the original.
const (
	scenario10b = publicDir + "/10b-non-retryable-mid-chain-then-abort-and-new-chain.json"
	commands10b = `{"id":"p1","type":"prompt","message":"hi"}
{"type":"advance","ms":6000}
{"id":"a1","type":"abort"}
{"type":"advance","ms":1000}
{"id":"p2","type":"prompt","message":"next"}
`
)

func TestAuditFindsTheOriginalsHazardsAndPassesSound(t *testing.T) {
	dir := t.TempDir()
	original := rpcLogFile(t, dir, "original.jsonl", commands10b, "--variant", "original", "--scenario", scenario10b)
	sound := rpcLogFile(t, dir, "sound.jsonl", commands10b, "--scenario", scenario10b)

	code, out, errOut := runMain(t, "audit", original)
	if code != exitFail || errOut != "" {
		t.Fatalf("audit original: exit %d, want 1; stderr %q", code, errOut)
	}
	want := []string{
		original + ":5: chain-not-ended: the chain that started here has no auto_retry_end before the run of the next prompt (accepted at line 13) started at line 14",
		original + ":17: stale-counter: a chain starts at attempt 2, not 1",
		"audit: 2 findings in 1 log (22 lines: 22 events, 0 skipped, 0 bad; 2 chains, 2 retries; profile omp-2026-02)",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("output:\n%s\nwant %d lines", out, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d:\n%s\nwant it to start with\n%s", i+1, lines[i], w)
		}
	}

	code, out, errOut = runMain(t, "audit", sound)
	if code != exitOK || errOut != "" || out != "audit: clean in 1 log (23 lines: 23 events, 0 skipped, 0 bad; 2 chains, 2 retries; profile omp-2026-02)\n" {
		t.Errorf("audit sound: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Both, from the standard input and a file.
	log, err := os.ReadFile(original)
	if err != nil {
		t.Fatal(err)
	}
	code, out, _ = runAuditOn(t, string(log), sound, "-")
	if code != exitFail || !strings.Contains(out, "<stdin>:17: stale-counter:") || !strings.Contains(out, "2 findings in 2 logs") {
		t.Errorf("audit sound -: exit %d, stdout:\n%s", code, out)
	}
}

func TestAuditJSON(t *testing.T) {
	dir := t.TempDir()
	original := rpcLogFile(t, dir, "original.jsonl", commands10b, "--variant", "original", "--scenario", scenario10b)
	code, out, errOut := runMain(t, "audit", "--json", original)
	if code != exitFail || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 2 findings and a summary:\n%s", out)
	}
	var f auditJSONFinding
	if err := json.Unmarshal([]byte(lines[0]), &f); err != nil {
		t.Fatal(err)
	}
	if f.Type != "finding" || f.Log != original || f.Line != 5 || f.Rule != "chain-not-ended" || f.Reason == "" {
		t.Errorf("first finding %+v", f)
	}
	if !strings.HasPrefix(lines[0], `{"type":"finding","log":`) {
		t.Errorf("key order: %s", lines[0])
	}
	var s auditJSONSummary
	if err := json.Unmarshal([]byte(lines[2]), &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "summary" || s.Profile != "omp-2026-02" || s.Logs != 1 || s.Findings != 2 || s.Chains != 2 || s.Lines != 22 {
		t.Errorf("summary %+v", s)
	}
	want := `{"type":"summary","profile":"omp-2026-02","logs":1,"lines":22,"events":22,"skipped":0,"bad":0,"chains":2,"retries":2,"findings":2}`
	if lines[2] != want {
		t.Errorf("summary line\n%s\nwant\n%s", lines[2], want)
	}
}

func TestAuditReportsBadJSONAtItsLine(t *testing.T) {
	dir := writeFiles(t, map[string]string{"log.jsonl": `{"type":"agent_start"}
{"type":"auto_retry_start","attempt":1,"delayMs":2000
{"type":"turn_start"}
`})
	path := filepath.Join(dir, "log.jsonl")
	code, out, _ := runMain(t, "audit", path)
	if code != exitFail || !strings.HasPrefix(out, path+":2: bad-json: invalid JSON, skipped: ") ||
		!strings.Contains(out, "(3 lines: 1 events, 1 skipped, 1 bad;") {
		t.Errorf("exit %d, stdout:\n%s", code, out)
	}
}

func TestAuditProfileAndSettings(t *testing.T) {
	// Delays of a base of 100 ms: not the default's 2000.
	dir := writeFiles(t, map[string]string{"log.jsonl": `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":100,"errorMessage":"529"}
{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":200,"errorMessage":"529"}
{"type":"auto_retry_end","success":true,"attempt":2}
`})
	path := filepath.Join(dir, "log.jsonl")
	code, out, _ := runMain(t, "audit", path)
	if code != exitFail || !strings.Contains(out, path+":1: delay: delayMs 100 for attempt 1: profile omp-2026-02 waits 2000") ||
		!strings.Contains(out, path+":2: delay:") {
		t.Errorf("default: exit %d, stdout:\n%s", code, out)
	}
	code, out, _ = runMain(t, "audit", "--settings", `{"baseDelayMs":100}`, path)
	if code != exitOK || !strings.Contains(out, "audit: clean in 1 log") || !strings.Contains(out, "profile omp-2026-02 with --settings") {
		t.Errorf("--settings: exit %d, stdout:\n%s", code, out)
	}
	code, out, _ = runMain(t, "audit", "--profile", "aider", path)
	if code != exitFail || !strings.Contains(out, "profile aider waits 250") {
		t.Errorf("--profile aider: exit %d, stdout:\n%s", code, out)
	}
}

func TestAuditContextWindow(t *testing.T) {
	dir := writeFiles(t, map[string]string{"log.jsonl": `{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error","usage":{"input":150000,"cacheRead":60000}}}
{"type":"agent_end"}
{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
{"type":"auto_retry_end","success":true,"attempt":1}
`})
	path := filepath.Join(dir, "log.jsonl")
	if code, out, _ := runMain(t, "audit", path); code != exitOK {
		t.Errorf("without a window: exit %d:\n%s", code, out)
	}
	code, out, _ := runMain(t, "audit", "--context-window", "200000", path)
	if code != exitFail || !strings.Contains(out, path+":4: overflow-retried: ") {
		t.Errorf("--context-window 200000: exit %d:\n%s", code, out)
	}
}

func TestAuditUsageAndReadErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"ok.jsonl": `{"type":"auto_retry_start","attempt":2,"delayMs":4000}` + "\n"})
	ok := filepath.Join(dir, "ok.jsonl")
	tests := []struct {
		name   string
		args   []string
		stderr string
		stdout string
	}{
		{"no log", []string{"audit"}, "no log given", ""},
		{"unknown profile", []string{"audit", "--profile", "nope", ok}, `--profile: unknown profile "nope"`, ""},
		{"bad settings", []string{"audit", "--settings", `{"maxRetries":"x"}`, ok}, "--settings: retry settings: maxRetries", ""},
		{"settings out of range", []string{"audit", "--settings", `{"jitter":{"ratio":2}}`, ok}, "jitter.ratio = 2 is out of range", ""},
		{"negative window", []string{"audit", "--context-window", "-1", ok}, "--context-window", ""},
		{"missing log, the others audited", []string{"audit", filepath.Join(dir, "nope.jsonl"), ok},
			"retrysim audit: " + filepath.Join(dir, "nope.jsonl") + ": open ", ok + ":1: stale-counter:"},
		{"a directory", []string{"audit", dir}, "is a directory", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.stderr) || !strings.Contains(out, tt.stdout) {
				t.Errorf("exit %d, want 2; stderr %q, want %q in it; stdout %q", code, errOut, tt.stderr, out)
			}
		})
	}
}

func TestAuditHelp(t *testing.T) {
	code, out, _ := runMain(t, "audit", "--help")
	for _, w := range []string{"Usage: retrysim audit [flags] LOG.jsonl...", "--profile NAME", "--settings JSON", "--context-window TOKENS", "--json",
		"chain-not-ended", "attempt-sequence", "stale-counter", "stray-end", "delay", "overflow-retried", "hint-window", "Exit status"} {
		if !strings.Contains(out, w) {
			t.Errorf("help lacks %q:\n%s", w, out)
		}
	}
	if code != exitOK {
		t.Errorf("exit %d", code)
	}
}

// TestReadmeAuditExample: docs/audit.md ("Auditing a log") runs the
// session of commands10b and prints what the audit prints for its log.
func TestReadmeAuditExample(t *testing.T) {
	section := markdownSection(t, readDoc(t, auditDoc), "# Auditing a log")
	blocks, _ := fences(t, section)
	if len(blocks) != 2 {
		t.Fatalf("the section has %d code blocks, want the commands and their output", len(blocks))
	}
	for _, w := range append(strings.Split(strings.TrimSpace(commands10b), "\n"),
		strings.TrimPrefix(scenario10b, "../../../"), "rpc --virtual --variant original", "> original.jsonl", "audit original.jsonl") {
		if !strings.Contains(blocks[0].body, w) {
			t.Errorf("the commands lack %q:\n%s", w, blocks[0].body)
		}
	}
	dir := t.TempDir()
	rpcLogFile(t, dir, "original.jsonl", commands10b, "--variant", "original", "--scenario", scenario10b)
	t.Chdir(dir)
	code, out, _ := runMain(t, "audit", "original.jsonl")
	if code != exitFail || out != blocks[1].body {
		t.Errorf("exit %d, output:\n%s\ndocs/audit.md shows:\n%s", code, out, blocks[1].body)
	}
}
