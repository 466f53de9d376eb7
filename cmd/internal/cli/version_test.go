package cli

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// versionLineRE matches the lines versionSynopsis describes.
var versionLineRE = regexp.MustCompile(`^retrysim \S+ go\S+( rev [0-9a-f]+(\+dirty)?( \S+)?)?$`)

func TestVersionLine(t *testing.T) {
	const rev = "54eda3f59b8697af284d6308bd1f465a7a68b80b"
	vcs := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"no build info", nil, "retrysim (unknown) " + runtime.Version()},
		{"empty build info", &debug.BuildInfo{}, "retrysim (unknown) " + runtime.Version()},
		{
			"go run: no vcs settings",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/ohmypi/retryfsm", Version: "(devel)"},
				Settings: vcs("-buildmode", "exe", "GOOS", "linux")},
			"retrysim (devel) go1.26.8",
		},
		{
			"go install module@version",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
			"retrysim v1.2.3 go1.26.8",
		},
		{
			"go build in a clean clone",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261130104609-54eda3f59b86"},
				Settings: vcs("-buildmode", "exe", "vcs", "git", "vcs.revision", rev, "vcs.time", "2026-11-30T10:46:09Z", "vcs.modified", "false")},
			"retrysim v0.0.0-20261130104609-54eda3f59b86 go1.26.8 rev 54eda3f59b86 2026-11-30T10:46:09Z",
		},
		{
			"uncommitted changes",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261130104609-54eda3f59b86+dirty"},
				Settings: vcs("vcs.modified", "true", "vcs.time", "2026-11-30T10:46:09Z", "vcs.revision", rev)},
			"retrysim v0.0.0-20261130104609-54eda3f59b86+dirty go1.26.8 rev 54eda3f59b86+dirty 2026-11-30T10:46:09Z",
		},
		{
			"short revision, no time, no version, no Go version",
			&debug.BuildInfo{Settings: vcs("vcs.revision", "abc123")},
			"retrysim (unknown) " + runtime.Version() + " rev abc123",
		},
		{
			"modified without a revision is not shown",
			&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: vcs("vcs.modified", "true")},
			"retrysim (devel) go1.26.8",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := versionLine(tt.info)
			if got != tt.want {
				t.Fatalf("versionLine = %q, want %q", got, tt.want)
			}
			if !versionLineRE.MatchString(got) {
				t.Fatalf("%q does not have the documented form %s", got, versionSynopsis)
			}
		})
	}
}

// TestVersionCommand: "version", "--version" and "-version" print the
// same one line, built from this binary's build information.
func TestVersionCommand(t *testing.T) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	line := versionLine(info)
	if !versionLineRE.MatchString(line) {
		t.Fatalf("%q does not have the documented form %s", line, versionSynopsis)
	}
	want := line + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runMain(t, args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			if out != want {
				t.Fatalf("stdout %q, want %q", out, want)
			}
		})
	}
}

func TestVersionUsage(t *testing.T) {
	for _, args := range [][]string{{"version", "extra"}, {"--version", "extra"}, {"version", "--bogus"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runMain(t, args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", code, exitUsage, out, errOut)
			}
			if out != "" {
				t.Errorf("stdout not empty:\n%s", out)
			}
			if !strings.Contains(errOut, "Usage: retrysim version") {
				t.Errorf("stderr lacks the usage line:\n%s", errOut)
			}
		})
	}
	code, out, _ := runMain(t, "version", "--help")
	if code != exitOK || !strings.Contains(out, "Usage: retrysim version\n") || !strings.Contains(out, versionSynopsis) {
		t.Fatalf("version --help: exit %d:\n%s", code, out)
	}
}
