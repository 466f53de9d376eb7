package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case plotCommand: // this test binary as a stand-in retrysim-plot (companionOnPath)
		os.Exit(standInPlot(os.Args[1:]))
	case proxyCommand: // and as a stand-in retrysim-proxy (companionOnPath)
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr, WithProxy(standInServe)))
	case "go": // and as the go command of TestCompanionFromSource
		os.Exit(fakeGo(os.Args[1:]))
	}
	goleak.VerifyTestMain(cleanupM{m})
}

// cleanupM runs the tests, then removes what they built once for all
// (the stand-in companion commands: companionOnPath).
type cleanupM struct{ *testing.M }

func (m cleanupM) Run() int {
	code := m.M.Run()
	if companions.dir != "" {
		os.RemoveAll(companions.dir)
	}
	return code
}

const publicDir = "../../../testdata/conformance/public"

// runMain runs realMain with args and returns the exit code and outputs.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = realMain(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// writeFiles writes name -> content into a new temporary directory (a
// name may have directories: they are made).
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestHelp(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // substrings of stdout
	}{
		{"top --help", []string{"--help"}, []string{"Usage: retrysim COMMAND", "run ", "trace ", "graph ", "help "}},
		{"top -h", []string{"-h"}, []string{"Commands:"}},
		{"help", []string{"help"}, []string{"Commands:"}},
		{"help run", []string{"help", "run"}, []string{"Usage: retrysim run [flags] PATH..."}},
		{"run --help", []string{"run", "--help"}, []string{"Usage: retrysim run [flags] PATH...", "--variant NAME", "N passed, M failed"}},
		{"run -h", []string{"run", "-h"}, []string{"Usage: retrysim run"}},
		{"run -h after a path", []string{"run", "some/dir", "-h"}, []string{"Usage: retrysim run"}},
		{"trace --help", []string{"trace", "--help"}, []string{"Usage: retrysim trace [flags] FILE", "--format FORMAT", `(default "jsonl")`}},
		{"trace -h", []string{"trace", "-h"}, []string{"Usage: retrysim trace"}},
		{"graph --help", []string{"graph", "--help"}, []string{"Usage: retrysim graph [flags]", "--format FORMAT", `(default "dot")`, "--variant NAME"}},
		{"graph -h", []string{"graph", "-h"}, []string{"Usage: retrysim graph"}},
		{"help --help", []string{"help", "--help"}, []string{"Usage: retrysim help [COMMAND]"}},
		{"version --help", []string{"version", "--help"}, []string{"Usage: retrysim version\n", "--version"}},
		{"top --help names --version", []string{"--help"}, []string{"  version ", "'retrysim --version'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitOK {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, errOut)
			}
			if errOut != "" {
				t.Errorf("stderr not empty:\n%s", errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestTopLevelListsEveryCommand(t *testing.T) {
	_, out, _ := runMain(t, "--help")
	for _, c := range commands {
		if !strings.Contains(out, "  "+c.name+" ") || !strings.Contains(out, c.short) {
			t.Errorf("--help lacks %s (%q):\n%s", c.name, c.short, out)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // substring of stderr
	}{
		{"no command", nil, "Usage: retrysim COMMAND"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"unknown top-level flag", []string{"--verbose"}, "unknown flag --verbose"},
		{"unknown run flag", []string{"run", "--bogus", publicDir}, "flag provided but not defined: -bogus"},
		{"unknown flag after a path", []string{"run", publicDir, "--bogus"}, "flag provided but not defined: -bogus"},
		{"unknown trace flag", []string{"trace", "-x", "f.yaml"}, "flag provided but not defined: -x"},
		{"unknown graph flag", []string{"graph", "--bogus"}, "flag provided but not defined: -bogus"},
		{"flag without value", []string{"graph", "--format"}, "flag needs an argument: -format"},
		{"help of unknown command", []string{"help", "nope"}, `unknown command "nope"`},
		{"help with two commands", []string{"help", "run", "trace"}, "too many arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, exitUsage, out, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
		})
	}
}

func TestParseInterspersed(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		pos     []string
		format  string
		verbose bool
	}{
		{"none", nil, nil, "dflt", false},
		{"flags first", []string{"--format", "x", "-v", "a", "b"}, []string{"a", "b"}, "x", true},
		{"flags last", []string{"a", "b", "--format=x", "-v"}, []string{"a", "b"}, "x", true},
		{"flags between", []string{"a", "-format", "x", "b"}, []string{"a", "b"}, "x", false},
		{"double dash ends flags", []string{"a", "--", "-v", "--format=y"}, []string{"a", "-v", "--format=y"}, "dflt", false},
		{"double dash as a value", []string{"--format", "--", "a", "-v"}, []string{"a"}, "--", true},
		{"double dash after a bool flag", []string{"-v", "--", "-x"}, []string{"-x"}, "dflt", true},
		{"single dash is positional", []string{"-", "-v"}, []string{"-"}, "dflt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			format := fs.String("format", "dflt", "")
			verbose := fs.Bool("v", false, "")
			pos, err := parseInterspersed(fs, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(pos, tt.pos) || *format != tt.format || *verbose != tt.verbose {
				t.Fatalf("got %q format=%q v=%v, want %q format=%q v=%v", pos, *format, *verbose, tt.pos, tt.format, tt.verbose)
			}
		})
	}
}

// TestDidYouMean: a mistyped command, flag or flag value is answered with
// the closest names.
func TestDidYouMean(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // the stderr line
	}{
		{"command", []string{"rnu", "x.yaml"}, `retrysim: unknown command "rnu"; did you mean run?`},
		{"command, the closest", []string{"rp"}, `retrysim: unknown command "rp"; did you mean rpc?`},
		{"command, two as close", []string{"rpn"}, `retrysim: unknown command "rpn"; did you mean rpc or run?`},
		{"command, nothing close", []string{"frobnicate"}, `retrysim: unknown command "frobnicate" (commands: `},
		{"help's command", []string{"help", "trcae"}, `retrysim help: unknown command "trcae"; did you mean trace?`},
		{"top-level flag", []string{"--verison"}, "retrysim: unknown flag --verison (flags go after the command); did you mean --version?"},
		{"flag", []string{"run", "--profil", "pi", "x.yaml"}, "retrysim run: flag provided but not defined: -profil; did you mean --profile?"},
		{"flag with a value", []string{"graph", "--formt=dot"}, "retrysim graph: flag provided but not defined: -formt; did you mean --format?"},
		{"flag prefix", []string{"run", "--cov", "x.yaml"}, "retrysim run: flag provided but not defined: -cov; did you mean --coverage?"},
		{"flag, nothing close", []string{"run", "--bogus", "x.yaml"}, "retrysim run: flag provided but not defined: -bogus\n"},
		{"format value", []string{"graph", "--format", "mermiad"}, `retrysim graph: --format: unknown format "mermiad" (allowed: dot, mermaid); did you mean mermaid?`},
		{"variant value", []string{"graph", "--variant", "sonud"}, "; did you mean sound?"},
		{"profile value", []string{"run", "--profile", "codx", "x.yaml"}, "; did you mean codex?"},
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

// TestErrorPrefix: every command reports its errors in one style, the
// first line "retrysim NAME: ...": flag errors, usage errors, invalid
// files and paths, whatever command meets them.
func TestErrorPrefix(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bad.yaml": "turns: [{stopReason: bogus}]\n"})
	bad := filepath.Join(dir, "bad.yaml")
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		cmd  string
		args []string
	}{
		{"run", []string{"run", bad}},
		{"run", []string{"run", missing}},
		{"run", []string{"run", "--bogus", bad}},
		{"run", []string{"run", "--coverage=maybe", bad}},
		{"run", []string{"run", "--watch", bad}},
		{"run", []string{"run", "--watch", dir}},
		{"trace", []string{"trace", bad}},
		{"trace", []string{"trace", dir}},
		{"trace", []string{"trace", "--format"}},
		{"graph", []string{"graph", "--bogus"}},
		{"graph", []string{"graph", "x"}},
		{"rpc", []string{"rpc", "--scenario", bad}},
		{"rpc", []string{"rpc", "--bogus"}},
		{"check", []string{"check", "--bogus"}},
		{"profiles", []string{"profiles", "--bogus"}},
		{"version", []string{"version", "--bogus"}},
		{"help", []string{"help", "--bogus"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, errOut := runMain(t, tt.args...)
			if code == exitOK {
				t.Fatalf("exit 0, stderr:\n%s", errOut)
			}
			first, _, _ := strings.Cut(errOut, "\n")
			if !strings.HasPrefix(first, "retrysim "+tt.cmd+": ") {
				t.Errorf("first stderr line %q does not start with %q", first, "retrysim "+tt.cmd+": ")
			}
		})
	}
}

// wantInOrder fails the test unless stdout out holds every text of wants,
// in that order.
func wantInOrder(t *testing.T, out string, wants []string) {
	t.Helper()
	rest := out
	for _, w := range wants {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("stdout lacks %q (in order):\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}
