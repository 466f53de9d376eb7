package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommandLine: the program's arguments are retrysim proxy's, named or
// not ("retrysim proxy ARGS" runs "retrysim-proxy proxy ARGS").
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{"proxy"}},
		{[]string{"--listen", ":0", "s.yaml"}, []string{"proxy", "--listen", ":0", "s.yaml"}},
		{[]string{"proxy", "--help"}, []string{"proxy", "--help"}},
	} {
		if got := commandLine(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("commandLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestServeLinked: in this program the proxy command serves itself (no
// companion is looked for): a bad script is reported by the server, with
// its position, exit status 2.
func TestServeLinked(t *testing.T) {
	script := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(script, []byte("fualts: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no retrysim-proxy to run
	var out, errOut bytes.Buffer
	code := run([]string{script}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), `bad.yaml:1:1: unknown key "fualts"`) || strings.Contains(errOut.String(), "go install") {
		t.Errorf("exit %d, stderr %q; want 2 and the script's error from the server itself", code, errOut.String())
	}
}
