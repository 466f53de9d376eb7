package cli

import (
	"strings"
	"sync"
	"testing"
)

// TestFlagErrorMessages: the usage errors of the flags that are parsed
// into typed options and then checked (a range, an integer of our own
// wording) are the whole message, byte for byte, with the usage lines.
func TestFlagErrorMessages(t *testing.T) {
	usage := func(cmd, synopsis string) string {
		return "Usage: retrysim " + cmd + " [flags]" + synopsis + "\nRun 'retrysim " + cmd + " --help' for details.\n"
	}
	tests := []struct {
		args []string
		want string // stderr
	}{
		{[]string{"audit", "--context-window", "-5", "x.jsonl"},
			"retrysim audit: --context-window: \"-5\" is not a number of tokens (allowed: 0 for none, or a positive integer)\n" + usage("audit", " LOG.jsonl...")},
		// the value as the flag package reads it (an octal -05 is -5)
		{[]string{"audit", "--context-window=-05", "x.jsonl"},
			"retrysim audit: --context-window: \"-5\" is not a number of tokens (allowed: 0 for none, or a positive integer)\n" + usage("audit", " LOG.jsonl...")},
		{[]string{"audit", "--context-window", "abc", "x.jsonl"},
			"retrysim audit: --context-window: \"abc\" is not an integer\n" + usage("audit", " LOG.jsonl...")},
		{[]string{"audit", "--wire", "--slack", "-1", "x.jsonl"},
			"retrysim audit: --slack: \"-1\" is not a number of milliseconds from 0 to 3600000\n" + usage("audit", " LOG.jsonl...")},
		{[]string{"audit", "--wire", "--slack", "1e9", "x.jsonl"},
			"retrysim audit: --slack: \"1e9\" is not a number of milliseconds from 0 to 3600000\n" + usage("audit", " LOG.jsonl...")},
		{[]string{"audit", "--wire=w.jsonl", "--profile", "omp-18", "--slack", "-3", "x.jsonl"},
			"retrysim audit: --slack: \"-3\" is not a number of milliseconds from 0 to 3600000\n" + usage("audit", " LOG.jsonl...")},
		{[]string{"check", "--max-retries-upto", "abc"},
			"retrysim check: --max-retries-upto: \"abc\" is not an integer\n" + usage("check", "")},
		{[]string{"check", "--max-retries-upto=0x3"},
			"retrysim check: --max-retries-upto: \"0x3\" is not an integer\n" + usage("check", "")},
		{[]string{"check", "--max-retries-upto="},
			"retrysim check: --max-retries-upto: \"\" is not an integer\n" + usage("check", "")},
		// the flag package's parse errors in the CLI's words: what the flag takes
		{[]string{"audit", "--wire", "--slack", "abc", "x.jsonl"},
			"retrysim audit: --slack: \"abc\" is not a number\n" + usage("audit", " LOG.jsonl...")},
		{[]string{"fleet", "--sessions", "99999999999999999999"},
			"retrysim fleet: --sessions: \"99999999999999999999\" is not an integer (value out of range)\n" + usage("fleet", " [FILE...] | merge PARTIAL...")},
		{[]string{"fleet", "--horizon", "5x"},
			"retrysim fleet: --horizon: \"5x\" is not a duration (such as 500ms, 2s or 1m30s)\n" + usage("fleet", " [FILE...] | merge PARTIAL...")},
		{[]string{"fleet", "--json=maybe"},
			"retrysim fleet: --json: \"maybe\" is not true or false\n" + usage("fleet", " [FILE...] | merge PARTIAL...")},
		{[]string{"rpc", "--protocol", "abc"},
			"retrysim rpc: --protocol: \"abc\" is not an integer\n" + usage("rpc", "")},
		{[]string{"rpc", "--protocol", "0x3"},
			"retrysim rpc: --protocol 3: unknown (allowed: 1, the original's, or 2, oh-my-pi 18.3.4's)\n" + usage("rpc", "")},
		{[]string{"rpc", "--model", "", "--provider", ""},
			"retrysim rpc: --model: empty (give the model's id, or leave the flag out for the scenario's)\n" + usage("rpc", "")},
		{[]string{"fleet", "--seed", "0"},
			"retrysim fleet: --seed: 0 (allowed: an integer from 1)\n" + usage("fleet", " [FILE...] | merge PARTIAL...")},
	}
	for _, tt := range tests {
		code, out, errOut := runMain(t, tt.args...)
		if code != exitUsage || out != "" || errOut != tt.want {
			t.Errorf("%q: exit %d, stdout %q, stderr\n%s\nwant exit %d, stderr\n%s", tt.args, code, out, errOut, exitUsage, tt.want)
		}
	}
}

// TestMaxRetriesUptoIsAnInteger: --max-retries-upto is read as an integer
// into check's options (2: the exploration of maxRetries 0 to 2).
func TestMaxRetriesUptoIsAnInteger(t *testing.T) {
	code, out, errOut := runMain(t, "check", "--max-retries-upto", "2")
	if code != exitOK || !strings.Contains(out, "# retrysim check: variant sound, maxRetries 0 to 2\n") {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errOut)
	}
}

// TestCommandOptionsPerInvocation: each run of a command parses its flags
// into options of its own: one run's flags are not another's defaults,
// also when runs overlap.
func TestCommandOptionsPerInvocation(t *testing.T) {
	_, mermaid, _ := runMain(t, "graph", "--format", "mermaid")
	_, dot, _ := runMain(t, "graph")
	if !strings.HasPrefix(mermaid, "stateDiagram") || !strings.HasPrefix(dot, "digraph") {
		t.Fatalf("graph --format mermaid then graph: got\n%.40s\nthen\n%.40s", mermaid, dot)
	}
	var wg sync.WaitGroup
	outs := make([]string, 8)
	for i := range outs {
		wg.Go(func() {
			args := []string{"graph"}
			if i%2 == 1 {
				args = append(args, "--format=mermaid")
			}
			_, outs[i], _ = runMain(t, args...)
		})
	}
	wg.Wait()
	for i, out := range outs {
		if want := [2]string{dot, mermaid}[i%2]; out != want {
			t.Errorf("run %d: got\n%.60s\nwant\n%.60s", i, out, want)
		}
	}
}
