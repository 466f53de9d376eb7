package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestMessagesQuoteTheInput: out-of-range numbers are quoted as the user
// wrote them, not as a saturated or converted value (issue 19 §5).
func TestMessagesQuoteTheInput(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"big.yaml":  "settings: {baseDelayMs: 1e300}\nturns: [{stopReason: stop}]\n",
		"big.json":  `{"settings": {"maxBackoffMs": -9223372036854775807}, "turns": [{"stopReason": "stop"}]}`,
		"log.jsonl": `{"type":"auto_retry_start","attempt":9223372036854775807,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}` + "\n",
	})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", filepath.Join(dir, "big.yaml")}, "big.yaml:1:25: settings.baseDelayMs: 1e300 is out of range (allowed: 0 to 86400000 ms)"},
		{[]string{"run", filepath.Join(dir, "big.json")}, "settings.maxBackoffMs: -9223372036854775807 is out of range"},
		{[]string{"fleet", "--latency", "9223372036854775807ns"}, `--latency: "9223372036854775807ns": 9223372036854775807ns is out of range (allowed: a duration from 0s to 8760h0m0s)`},
		{[]string{"fleet", "--think", "uniform:1s,9223372036854775807ns"}, `9223372036854775807ns is out of range`},
		{[]string{"audit", filepath.Join(dir, "log.jsonl")}, "attempt = 9223372036854775807 is not a whole number from 0"},
	} {
		_, out, errOut := runMain(t, c.args...)
		if !strings.Contains(out+errOut, c.want) {
			t.Errorf("%v: want %q in\nstdout:\n%s\nstderr:\n%s", c.args, c.want, out, errOut)
		}
		if strings.Contains(out+errOut, "9223372036854.775") || strings.Contains(out+errOut, "9223372036854776000") || strings.Contains(out+errOut, "-2562047h") {
			t.Errorf("%v: a converted value quoted:\n%s%s", c.args, out, errOut)
		}
	}
}

// TestAuditMissingLog: a log that cannot be opened prints nothing on
// stdout and exits 2 (issue 19 §5: "audit: clean in 1 log"); with others,
// the summary counts the logs read only.
func TestAuditMissingLog(t *testing.T) {
	dir := writeFiles(t, map[string]string{"empty.jsonl": ""})
	missing := filepath.Join(dir, "MISSING.jsonl")
	for _, args := range [][]string{{"audit", missing}, {"audit", "--json", missing}} {
		code, out, errOut := runMain(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "MISSING.jsonl: open ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	code, out, _ := runMain(t, "audit", missing, filepath.Join(dir, "empty.jsonl"))
	if code != exitUsage || !strings.Contains(out, "audit: clean in 1 log (0 lines") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	code, out, _ = runMain(t, "audit", "--json", missing, filepath.Join(dir, "empty.jsonl"))
	if code != exitUsage || !strings.Contains(out, `"logs":1`) {
		t.Errorf("--json: exit %d, stdout %q", code, out)
	}
}

// TestDuplicateKeysInAuditSettings: audit --settings refuses a key given
// twice, at any depth (issue 19 §5: the last one won).
func TestDuplicateKeysInAuditSettings(t *testing.T) {
	dir := writeFiles(t, map[string]string{"empty.jsonl": ""})
	for _, c := range []struct{ settings, want string }{
		{`{"baseDelayMs":1,"baseDelayMs":70000}`, `--settings: retry settings: key "baseDelayMs" given twice`},
		{`{"jitter":{"mode":"full","ratio":1,"mode":"none"}}`, `key "jitter.mode" given twice`},
	} {
		code, out, errOut := runMain(t, "audit", "--settings", c.settings, filepath.Join(dir, "empty.jsonl"))
		if code != exitUsage || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.settings, code, out, errOut)
		}
	}
}

// TestFlagHelpNotGarbled: fleet's --sessions help reads as a sentence
// (issue 19 §5: "--sessions N  the number of agent N: sessions").
func TestFlagHelpNotGarbled(t *testing.T) {
	_, out, _ := runMain(t, "fleet", "--help")
	if !strings.Contains(out, "  --sessions N\n      the number N of agent sessions (key sessions)") {
		t.Errorf("fleet --help:\n%s", out)
	}
}
