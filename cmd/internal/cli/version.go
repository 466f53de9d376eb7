package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// versionSynopsis is the form of the line "retrysim version" prints
// (README.md's Install section quotes it).
const versionSynopsis = "retrysim VERSION GOVERSION [rev REVISION[+dirty] [TIME]]"

func init() {
	register(&command{
		name:  "version",
		short: "print the version, Go version and VCS revision of this binary",
		long: `Prints one line read from the binary's build information:

    ` + versionSynopsis + `

VERSION is the main module's version: a release tag or pseudo-version when
built with go build or go install in a git clone, "(devel)" when the
revision was not recorded (go run, -buildvcs=false), "(unknown)" when the
binary carries no build information. GOVERSION is the Go release that built
it. REVISION is the first 12 hex digits of the commit, with "+dirty" when
the working tree had uncommitted changes; TIME is the commit time (RFC 3339,
UTC). The rev part is left out when the build recorded no revision.
"retrysim --version" prints the same line.

Exit status: 0, or 2 when given arguments.`,
		options: noFlags(runVersion),
	})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		return usageError(lookup("version"), stderr, "takes no arguments, got %q", strings.Join(args, " "))
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	if _, err := fmt.Fprintln(stdout, versionLine(info)); err != nil {
		fmt.Fprintf(stderr, "retrysim version: %v\n", err)
		return exitFail
	}
	return exitOK
}

// revisionDigits is how much of a commit hash versionLine prints (as many
// as a Go pseudo-version has).
const revisionDigits = 12

// versionLine formats info (nil: the binary has no build information) as
// versionSynopsis says. Missing
// fields fall back to "(unknown)" for the version and to the running Go
// release for the Go version.
func versionLine(info *debug.BuildInfo) string {
	version, goVersion := "", ""
	var revision, vcsTime string
	dirty := false
	if info != nil {
		version, goVersion = info.Main.Version, info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if version == "" {
		version = "(unknown)"
	}
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	line := "retrysim " + version + " " + goVersion
	if revision == "" {
		return line
	}
	if len(revision) > revisionDigits {
		revision = revision[:revisionDigits]
	}
	line += " rev " + revision
	if dirty {
		line += "+dirty"
	}
	if vcsTime != "" {
		line += " " + vcsTime
	}
	return line
}
