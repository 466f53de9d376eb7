package main

import (
	"strings"
	"testing"
)

var fiveStates = []string{"idle", "backoff", "continuing", "exhausted", "cancelled"}

func TestGraph(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		prefix string
		state  func(s string) string // how a state appears
	}{
		{"dot by default", []string{"graph"}, "digraph ", func(s string) string { return `"` + s + `"` }},
		{"--format dot", []string{"graph", "--format", "dot"}, "digraph ", func(s string) string { return `"` + s + `"` }},
		{"--format=mermaid", []string{"graph", "--format=mermaid"}, "stateDiagram-v2\n", func(s string) string { return "    " + s + "\n" }},
		{"--variant sound", []string{"graph", "--variant", "sound", "-format", "mermaid"}, "stateDiagram-v2\n", func(s string) string { return "    " + s + "\n" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			if !strings.HasPrefix(out, tt.prefix) || !strings.HasSuffix(out, "\n") {
				t.Fatalf("output does not start with %q and end in a newline:\n%s", tt.prefix, out)
			}
			for _, s := range fiveStates {
				if !strings.Contains(out, tt.state(s)) {
					t.Errorf("no state %s (%q) in:\n%s", s, tt.state(s), out)
				}
			}
			_, again, _ := runMain(t, tt.args...)
			if again != out {
				t.Fatal("two runs differ")
			}
		})
	}
}

func TestGraphUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"graph", "--format", "png"}, `unknown format "png" (allowed: dot, mermaid)`},
		{"unknown variant", []string{"graph", "--variant", "nope"}, `unknown variant "nope"`},
		{"positional argument", []string{"graph", "extra"}, "unexpected arguments: extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and stderr with %q", code, out, errOut, tt.want)
			}
		})
	}
}
