package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyErrors: a bad script, address or flag is exit status 2 with an
// error saying where, as this program answers "retrysim-proxy proxy ARGS",
// the command line "retrysim proxy ARGS" runs it with (the CLI's
// TestProxyCommandErrors checks the hand-over, with a stand-in for this
// program).
func TestProxyErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"bad.yaml":   "faults:\n  - {request: 1, kind: stream-cutt}\n",
		"key.yaml":   "fualts: []\n",
		"turns.yaml": "turns:\n  - {stopReason: eror}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", t.TempDir()) // no companion to run: the server is this program's
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"proxy", filepath.Join(dir, "bad.yaml")}, `bad.yaml:2:24: faults[0].kind: "stream-cutt" is not a fault (allowed: latency, slow-body, stream-cut, sse-error, drop); did you mean stream-cut?`},
		{[]string{"proxy", filepath.Join(dir, "key.yaml")}, `key.yaml:1:1: unknown key "fualts" (allowed: scenario, fleet, repeat, text, faults); did you mean faults?`},
		{[]string{"proxy", filepath.Join(dir, "turns.yaml")}, `turns.yaml:2:18: turns[0].stopReason`},
		{[]string{"proxy", "--listen", "256.0.0.1:1", filepath.Join(dir, "key.yaml")}, `unknown key`},
		{[]string{"proxy", "--listen", "nonsense", "--max-body", "10"}, `--listen:`},
		{[]string{"proxy", "--listen="}, `--listen: an empty address (it would listen on every interface, at a random port); give HOST:PORT, e.g. 127.0.0.1:8787`},
		{[]string{"proxy", "--max-body", "0"}, `--max-body: "0" is not a positive number of bytes`},
		{[]string{"proxy", "--upstream", "ftp://x", "--listen", "127.0.0.1:0"}, `upstream "ftp://x": not an http or https URL`},
		{[]string{"proxy", "a", "b"}, `one SCRIPT at most`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut.String(), tc.want)
		}
	}
}
