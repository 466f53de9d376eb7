package explore

import (
	"fmt"

	"github.com/ohmypi/retryfsm/session"
)

// The largest maxRetries the explorer accepts per variant: the largest for
// which `retrysim check --max-retries-upto N` (maxRetries 0..N, which costs
// more than N alone) was measured by BenchmarkExploreMaxRetries to run in
// under 10 s and 1 GB on 2 cores, with margin. The state space of the
// original grows about 2.2 times per step of maxRetries, sound's by 8
// states. SPEC.md §12 lists the measured figures.
const (
	// SoundMaxRetriesLimit is sound's limit: MaxMaxRetries, which the
	// state key encodes (0..20 together take about 15 ms and 10 MB).
	SoundMaxRetriesLimit = 20
	// OriginalMaxRetriesLimit is the original's limit (0..13 together take
	// about 5 s and 330 MB; 0..14, 17 s and 950 MB).
	OriginalMaxRetriesLimit = 13
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
