package retry

import (
	"time"

	"github.com/ohmypi/retryfsm/policy/classify"
)

// The package's constants: texts, defaults, bounds and the names of the
// settings' modes.
const (
	// The classification modes (Settings.Classify): see package classify.
	ClassifyMessage = classify.ClassifyMessage // the original's (and "")
	ClassifyStatus  = classify.ClassifyStatus  // by HTTP status when there is one
	ClassifyStrict  = classify.ClassifyStrict  // status, quota messages never retried

	// Fixed finalError texts.
	RetryCancelled     = "Retry cancelled"
	NoAssistantMessage = "Agent run ended without an assistant message"
	// UnknownError is the finalError of an error without text (and the
	// loader's text for one: "Retry failed after N attempts: Unknown error").
	UnknownError = "Unknown error"

	// Defaults of the retry settings group, as in the original's settings schema.
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 2000 * time.Millisecond
	// MaxRetriesLimit is the largest maxRetries Validate accepts. The original
	// accepts any number; a bound keeps absurd settings from producing
	// chains that never end in practice.
	MaxRetriesLimit = 1000
	// MaxBaseDelay is the largest baseDelayMs Validate accepts (24 h).
	MaxBaseDelay = 24 * time.Hour

	// Jitter modes (Jitter.Mode), for a capped backoff b and a draw u.
	JitterNone   string = "none"   // b (the default)
	JitterDown   string = "down"   // b*(1-ratio*u)
	JitterUpDown string = "updown" // b*(1+ratio*(2u-1))
	JitterFull   string = "full"   // b*u
	JitterEqual  string = "equal"  // b/2 + (b/2)*u

	// Hint uses (RetryAfter.Use).
	HintIgnore  string = "ignore"  // hints only feed the credential switch (the default)
	HintFloor   string = "floor"   // wait = max(jittered backoff, hint)
	HintReplace string = "replace" // wait = the hint when there is one

	// MaxBackoffFactor and MaxFallbacks bound their settings.
	MaxBackoffFactor = 100
	MaxFallbacks     = 16

	// DefaultBackoffFactor is the default growth of the backoff.
	DefaultBackoffFactor = 2

	// DefaultProfile is the profile of a scenario or a command that names
	// none: the original's policy of February 2026, exactly.
	DefaultProfile = "omp-2026-02"
)
