package sim

import (
	"fmt"
	"strings"

	"github.com/ohmypi/retryfsm/trace"
)

// CheckSoundTrace checks the sound guarantees that a trace shows on its
// own: every auto_retry_start belongs to a chain that ends with exactly one
// auto_retry_end, attempts are consecutive from 1 within a chain (restarting
// at 1 after a retry_fallback), an end reports the chain's attempt (a
// fail-fast end the attempt after it, SPEC §1.1 step 6), no auto_retry_end
// appears outside a chain (except the maxRetries-0 end with attempt 0 and a
// fail-fast end with attempt 1), and no chain is open at the final line.
// Errors name the 1-based line.
func CheckSoundTrace(records []trace.Record) error {
	open, attempt := false, 0
	for i := range records {
		r := &records[i]
		n := i + 1
		switch r.Type {
		case trace.AutoRetryStart:
			if r.Start.Attempt != attempt+1 {
				return fmt.Errorf("line %d: auto_retry_start attempt %d, want %d", n, r.Start.Attempt, attempt+1)
			}
			open, attempt = true, r.Start.Attempt
		case trace.RetryFallback:
			if !open && (i+1 >= len(records) || records[i+1].Type != trace.AutoRetryStart) {
				return fmt.Errorf("line %d: retry_fallback not followed by its auto_retry_start", n)
			}
			attempt = 0 // the counter restarts: the next start is attempt 1
		case trace.AutoRetryEnd:
			// Outside a chain only an end at once: maxRetries 0 (attempt 0),
			// or fail-fast at a first error (attempt 1, a failure).
			failFast := !r.End.Success && strings.HasPrefix(r.End.FinalError, "Provider requested ")
			if !open && (r.End.Success || r.End.Attempt > 1 || (r.End.Attempt == 1 && !failFast)) {
				return fmt.Errorf("line %d: auto_retry_end outside a chain", n)
			}
			// In a chain the end's attempt is the chain's; a fail-fast's is
			// the attempt it would have made.
			if open && r.End.Attempt != attempt && !(failFast && r.End.Attempt == attempt+1) {
				return fmt.Errorf("line %d: auto_retry_end attempt %d, want %d", n, r.End.Attempt, attempt)
			}
			open, attempt = false, 0
		case trace.Final:
			if open || r.Final.IsRetrying {
				return fmt.Errorf("line %d: a chain is still open at the end", n)
			}
		}
	}
	return nil
}
