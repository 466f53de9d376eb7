package explore

import (
	"fmt"

	"github.com/ohmypi/retryfsm/trace"
)

// NormalizeTrace extracts from a sim trace's records the lines Replay.Lines
// predicts, in the same normalised form.
func NormalizeTrace(records []trace.Record) []string {
	var out []string
	for i := range records {
		l := &records[i]
		t := l.T.Milliseconds()
		switch l.Type {
		case trace.Transition:
			out = append(out, fmt.Sprintf("%d transition %s %s %s", t, l.Edge.From, l.Edge.Event, l.Edge.To))
		case trace.AutoRetryStart:
			out = append(out, fmt.Sprintf("%d %s attempt=%d", t, l.Type, l.Start.Attempt))
		case trace.AutoRetryEnd:
			out = append(out, fmt.Sprintf("%d %s success=%t attempt=%d", t, l.Type, l.End.Success, l.End.Attempt))
		case trace.PromptResolved, trace.PromptRejected:
			out = append(out, fmt.Sprintf("%d %s prompt=%d", t, l.Type, l.Prompt))
		case trace.AgentRun:
			out = append(out, fmt.Sprintf("%d %s kind=%s", t, l.Type, l.Run))
		case trace.ContinueRejected, trace.AutoCompactionStart:
			out = append(out, fmt.Sprintf("%d %s", t, l.Type))
		}
	}
	return out
}
