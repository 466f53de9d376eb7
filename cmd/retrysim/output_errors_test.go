package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// brokenStdout fails every write, as stdout on a full disk does.
type brokenStdout struct{ writes int }

var errDiskFull = errors.New("no space left on device")

func (b *brokenStdout) Write(p []byte) (int, error) {
	b.writes++
	return 0, errDiskFull
}

// TestRunAndCheckReportWriteErrors: run and check report a write error on
// stdout and exit 1, as trace, fleet, audit and graph do (issue 19 §4:
// exit 0 with nothing written).
func TestRunAndCheckReportWriteErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{"pass.yaml": passScenario})
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", dir}, "retrysim run: writing the output: no space left on device"},
		{[]string{"check", "--max-retries", "1"}, "retrysim check: writing the output: no space left on device"},
	} {
		var stderr strings.Builder
		out := &brokenStdout{}
		code := realMain(c.args, out, &stderr)
		if code != exitFail || !strings.Contains(stderr.String(), c.want) || out.writes == 0 {
			t.Errorf("%v: exit %d (want %d), %d writes, stderr:\n%s\nwant %q", c.args, code, exitFail, out.writes, stderr.String(), c.want)
		}
		if n := strings.Count(stderr.String(), "writing the output"); n != 1 {
			t.Errorf("%v: the write error reported %d times", c.args, n)
		}
	}
}

// TestFleetPlotUnwritableFoundBeforeRun: a --plot path that cannot be
// written is reported before the fleets run (issue 19 §4: a 200,000-session
// run ended with exit 1 and nothing), and a file that was not there is not
// left behind by a failed run.
func TestFleetPlotUnwritableFoundBeforeRun(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "no-such-dir", "fleet.png")
	code, out, errOut := runMain(t, "fleet", "--sessions", "200000", "--plot", bad)
	if code != exitFail || out != "" || !strings.Contains(errOut, "retrysim fleet: --plot: open "+bad) || !strings.Contains(errOut, "(nothing was run)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// merge too, before reading its partials.
	code, _, errOut = runMain(t, "fleet", "merge", "--plot", bad, filepath.Join(dir, "missing.json"))
	if code != exitFail || !strings.Contains(errOut, "--plot: open "+bad) {
		t.Fatalf("merge: exit %d, stderr %q", code, errOut)
	}
	// A run that fails leaves no new plot file.
	fresh := filepath.Join(dir, "fresh.svg")
	code, _, _ = runMain(t, "fleet", "merge", "--plot", fresh, filepath.Join(dir, "missing.json"))
	if _, err := os.Stat(fresh); code == exitOK || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("exit %d; the plot file after a failed merge: %v", code, err)
	}
}

// TestFleetPlotWriteErrorStillPrintsTheTable: when the plot cannot be
// drawn after the run (here a device that refuses it), the table is
// printed all the same and the exit status is 1.
func TestFleetPlotWriteErrorStillPrintsTheTable(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	link := filepath.Join(t.TempDir(), "fleet.png")
	if err := os.Symlink("/dev/full", link); err != nil {
		t.Skip(err)
	}
	code, plain, _ := runMain(t, "fleet", "--sessions", "20")
	if code != exitOK {
		t.Fatal(code)
	}
	code, out, errOut := runMain(t, "fleet", "--sessions", "20", "--plot", link)
	if code != exitFail || out != plain || !strings.Contains(errOut, "retrysim fleet: --plot: ") {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errOut, out, plain)
	}
}
