package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// ConformanceFields are the trace lines compared with the original, and the
// fields of each that are compared (with "t").
var ConformanceFields = map[string][]string{
	"agent_run":                {"kind"},
	"auto_retry_start":         {"attempt", "maxAttempts", "delayMs", "errorMessage"},
	"auto_retry_end":           {"success", "attempt", "finalError"},
	"prompt_resolved":          {"prompt"},
	"mark_usage_limit_reached": {"retryAfterMs", "returns"},
}

// FilterConformance reduces a JSON Lines trace to the conformance subset:
// one canonical string per compared line, in order, "t" first.
func FilterConformance(trace []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("trace line %d: %w", n, err)
		}
		typ, _ := m["type"].(string)
		fields, ok := ConformanceFields[typ]
		if !ok {
			continue
		}
		s := fmt.Sprintf("t=%v %s", m["t"], typ)
		for _, f := range fields {
			if v, ok := m[f]; ok {
				b, _ := json.Marshal(v)
				s += fmt.Sprintf(" %s=%s", f, b)
			}
		}
		out = append(out, s)
	}
	return out, sc.Err()
}
