package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
)

// CheckSoundTrace checks the sound guarantees that a trace shows on its
// own: every auto_retry_start belongs to a chain that ends with exactly one
// auto_retry_end, attempts are consecutive from 1 within a chain, no
// auto_retry_end appears outside a chain (except the maxRetries-0 end with
// attempt 0), and no chain is open at the final line.
func CheckSoundTrace(trace []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(trace))
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	open, attempt, n := false, 0, 0
	for sc.Scan() {
		n++
		var m struct {
			Type       string `json:"type"`
			Attempt    int    `json:"attempt"`
			Success    bool   `json:"success"`
			IsRetrying bool   `json:"isRetrying"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		switch m.Type {
		case "auto_retry_start":
			if m.Attempt != attempt+1 {
				return fmt.Errorf("line %d: auto_retry_start attempt %d, want %d", n, m.Attempt, attempt+1)
			}
			open, attempt = true, m.Attempt
		case "auto_retry_end":
			if !open && !(m.Attempt == 0 && !m.Success) {
				return fmt.Errorf("line %d: auto_retry_end outside a chain", n)
			}
			if open && m.Attempt != attempt {
				return fmt.Errorf("line %d: auto_retry_end attempt %d, want %d", n, m.Attempt, attempt)
			}
			open, attempt = false, 0
		case "final":
			if open || m.IsRetrying {
				return fmt.Errorf("line %d: a chain is still open at the end", n)
			}
		}
	}
	return sc.Err()
}
