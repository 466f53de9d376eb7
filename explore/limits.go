package explore

import (
	"fmt"

	"github.com/ohmypi/retryfsm/session"
)

// The largest maxRetries the explorer accepts per variant: the largest for
// which `retrysim check --max-retries-upto N` (maxRetries 0..N, which costs
// more than N alone) was measured by BenchmarkExploreMaxRetries to run in
// under 10 s and 1 GB on 2 cores, with margin. The state space of the
// original grows about 2.2 times per step of maxRetries, sound's by 10
// states. SPEC.md §12.5 lists the measured figures.
const (
	// SoundMaxRetriesLimit is sound's limit: MaxMaxRetries, which the
	// state key encodes (0..20 together take about 10 ms and 7 MB).
	SoundMaxRetriesLimit = 20
	// OriginalMaxRetriesLimit is the original's limit (0..11 together
	// took about 4 s and 260 MB when it was set; today's larger space,
	// 10.8 M states, takes about 8.5 s of CPU time and 470 MiB: SPEC.md
	// §12.5). It was 13 until
	// the explorer drove the session core, whose original variant keeps
	// every compaction continue (and with the usage-limit replies): the
	// space grew about 2.8 times.
	OriginalMaxRetriesLimit = 11
)

// MaxRetriesLimit returns the largest maxRetries the explorer accepts for
// v: SoundMaxRetriesLimit for session.Sound (and nil, which means sound),
// OriginalMaxRetriesLimit for session.Original and for any other variant,
// whose cost was not measured.
func MaxRetriesLimit(v *session.Variant) int {
	if v == nil || v == session.Sound {
		return SoundMaxRetriesLimit
	}
	return OriginalMaxRetriesLimit
}

// MaxRetriesError is the error for a maxRetries outside 0..Limit.
type MaxRetriesError struct {
	Variant    string // the variant's name
	MaxRetries int    // the value asked for
	Limit      int    // MaxRetriesLimit of the variant
}

// Error states the value asked for, the variant and the allowed range
// 0..Limit.
func (e *MaxRetriesError) Error() string {
	return fmt.Sprintf("maxRetries %d is out of range for variant %s (allowed: 0 to %d, the range explored in under 10 s and 1 GB)",
		e.MaxRetries, e.Variant, e.Limit)
}

// ValidateMaxRetries returns a *MaxRetriesError unless 0 <= maxRetries <=
// MaxRetriesLimit(v).
func ValidateMaxRetries(v *session.Variant, maxRetries int) error {
	if lim := MaxRetriesLimit(v); maxRetries < 0 || maxRetries > lim {
		if v == nil {
			v = session.Sound
		}
		return &MaxRetriesError{Variant: v.Name, MaxRetries: maxRetries, Limit: lim}
	}
	return nil
}
