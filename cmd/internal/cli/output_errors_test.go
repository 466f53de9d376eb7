package cli

import (
	"errors"
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
