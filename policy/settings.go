package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Defaults of the retry settings group, as in the original's settings schema.
const (
	DefaultMaxRetries = 3
	DefaultBaseDelay  = 2000 * time.Millisecond
	// MaxRetriesLimit is the largest maxRetries Validate accepts. The original
	// accepts any number; a bound keeps absurd settings from producing
	// chains that never end in practice.
	MaxRetriesLimit = 1000
	// MaxBaseDelay is the largest baseDelayMs Validate accepts (24 h).
	MaxBaseDelay = 24 * time.Hour
)

// Settings is the "retry" settings group. The zero value is not the default:
// use DefaultSettings.
type Settings struct {
	// Enabled switches automatic retry on or off (JSON "enabled").
	Enabled bool
	// MaxRetries is how many retries one chain may make (JSON "maxRetries");
	// a chain makes up to MaxRetries+1 model calls in all.
	MaxRetries int
	// BaseDelay is the wait before the first retry; retry k waits
	// BaseDelay*2^(k-1) (JSON "baseDelayMs", in milliseconds).
	BaseDelay time.Duration
}

// DefaultSettings returns {Enabled: true, MaxRetries: 3, BaseDelay: 2 s}.
func DefaultSettings() Settings {
	return Settings{Enabled: true, MaxRetries: DefaultMaxRetries, BaseDelay: DefaultBaseDelay}
}

// SettingsError says which field of a Settings value is out of range.
type SettingsError struct {
	Field   string // JSON name: "maxRetries" or "baseDelayMs"
	Value   string
	Allowed string
}

// Error implements error.
func (e *SettingsError) Error() string {
	return fmt.Sprintf("retry settings: %s = %s is out of range (allowed: %s)", e.Field, e.Value, e.Allowed)
}

// Validate reports the first out-of-range field: a negative maxRetries or
// one above MaxRetriesLimit, a negative delay or one above MaxBaseDelay.
func (s Settings) Validate() error {
	if s.MaxRetries < 0 || s.MaxRetries > MaxRetriesLimit {
		return &SettingsError{Field: "maxRetries", Value: fmt.Sprint(s.MaxRetries), Allowed: fmt.Sprintf("an integer from 0 to %d", MaxRetriesLimit)}
	}
	if s.BaseDelay < 0 || s.BaseDelay > MaxBaseDelay {
		return &SettingsError{Field: "baseDelayMs", Value: strconv.FormatFloat(float64(s.BaseDelay)/float64(time.Millisecond), 'f', -1, 64),
			Allowed: fmt.Sprintf("0 to %d ms", MaxBaseDelay.Milliseconds())}
	}
	return nil
}

// Delay is the backoff before retry number attempt (1-based):
// BaseDelay * 2^(attempt-1). It saturates at the largest time.Duration
// instead of wrapping, and is 0 for attempt < 1 or a non-positive BaseDelay.
func (s Settings) Delay(attempt int) time.Duration {
	if attempt < 1 || s.BaseDelay <= 0 {
		return 0
	}
	shift := attempt - 1
	if shift >= 63 || s.BaseDelay > time.Duration(math.MaxInt64>>uint(shift)) {
		return time.Duration(math.MaxInt64)
	}
	return s.BaseDelay << uint(shift)
}

type settingsJSON struct {
	Enabled     bool  `json:"enabled"`
	MaxRetries  int   `json:"maxRetries"`
	BaseDelayMs int64 `json:"baseDelayMs"`
}

// MarshalJSON writes {"enabled","maxRetries","baseDelayMs"}.
func (s Settings) MarshalJSON() ([]byte, error) {
	return json.Marshal(settingsJSON{s.Enabled, s.MaxRetries, s.BaseDelay.Milliseconds()})
}

// UnmarshalJSON reads {"enabled","maxRetries","baseDelayMs"}; a missing key
// keeps its default and JSON null changes nothing. A baseDelayMs too large
// for a time.Duration saturates, so Validate rejects it instead of seeing a
// wrapped value.
func (s *Settings) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	d := DefaultSettings()
	j := settingsJSON{d.Enabled, d.MaxRetries, d.BaseDelay.Milliseconds()}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	delay := time.Duration(j.BaseDelayMs) * time.Millisecond
	switch {
	case j.BaseDelayMs > math.MaxInt64/int64(time.Millisecond):
		delay = math.MaxInt64
	case j.BaseDelayMs < math.MinInt64/int64(time.Millisecond):
		delay = math.MinInt64
	}
	*s = Settings{Enabled: j.Enabled, MaxRetries: j.MaxRetries, BaseDelay: delay}
	return nil
}
