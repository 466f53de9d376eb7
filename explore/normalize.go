package explore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// NormalizeTrace extracts from a sim trace the lines Replay.Lines predicts,
// in the same normalised form.
func NormalizeTrace(trace []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	for sc.Scan() {
		var l struct {
			T       int64  `json:"t"`
			Type    string `json:"type"`
			From    string `json:"from"`
			Event   string `json:"event"`
			To      string `json:"to"`
			Attempt int    `json:"attempt"`
			Success bool   `json:"success"`
			Prompt  int    `json:"prompt"`
			Kind    string `json:"kind"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, err
		}
		switch l.Type {
		case "transition":
			out = append(out, fmt.Sprintf("%d transition %s %s %s", l.T, l.From, l.Event, l.To))
		case "auto_retry_start":
			out = append(out, fmt.Sprintf("%d auto_retry_start attempt=%d", l.T, l.Attempt))
		case "auto_retry_end":
			out = append(out, fmt.Sprintf("%d auto_retry_end success=%t attempt=%d", l.T, l.Success, l.Attempt))
		case "prompt_resolved", "prompt_rejected":
			out = append(out, fmt.Sprintf("%d %s prompt=%d", l.T, l.Type, l.Prompt))
		case "agent_run":
			out = append(out, fmt.Sprintf("%d agent_run kind=%s", l.T, l.Kind))
		case "continue_rejected", "auto_compaction_start":
			out = append(out, fmt.Sprintf("%d %s", l.T, l.Type))
		}
	}
	return out, sc.Err()
}
