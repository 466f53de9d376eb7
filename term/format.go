package term

import (
	"fmt"
	"strings"

	"github.com/ohmypi/retryfsm/trace"
)

// FormatLine renders one trace line as "retrysim trace --format text"
// does (sim.FormatText), with fixed column widths so that lines printed
// one at a time stay aligned:
//
//	2000    2.000s  auto_retry_start          attempt=2 maxAttempts=3 delayMs=4000 ...
//
// A line that is not a JSON object is returned as it is.
func FormatLine(line []byte) string {
	out, err := trace.FormatText(line)
	s := strings.TrimRight(string(out), "\n")
	if err != nil || s == "" || strings.Contains(s, "\n") {
		return strings.TrimRight(string(line), "\r\n")
	}
	// The time, seconds and type columns hold no spaces; the fields keep
	// their rendering.
	rest := s
	var cols [3]string
	for i := range cols {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		cols[i], rest = rest[:j], rest[j:]
	}
	if !strings.HasSuffix(cols[1], "s") {
		return s // no "t": leave FormatText's layout
	}
	rest = strings.TrimLeft(rest, " ")
	return strings.TrimRight(fmt.Sprintf("%7s  %9s  %-24s  %s", cols[0], cols[1], cols[2], rest), " ")
}
