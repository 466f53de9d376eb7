package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/jsonw"
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

// settingsKeys are the JSON keys of the retry settings group, in the order
// MarshalJSON writes them.
var settingsKeys = []string{"enabled", "maxRetries", "baseDelayMs"}

// MarshalJSON writes {"enabled","maxRetries","baseDelayMs"}; baseDelayMs is
// written as JavaScript writes the number, with any fraction of a
// millisecond kept (2000, 0.999).
func (s Settings) MarshalJSON() ([]byte, error) {
	b := append([]byte(`{"enabled":`), strconv.FormatBool(s.Enabled)...)
	b = append(b, `,"maxRetries":`...)
	b = strconv.AppendInt(b, int64(s.MaxRetries), 10)
	b = append(b, `,"baseDelayMs":`...)
	b = jsonw.AppendNumber(b, durationMs(s.BaseDelay))
	return append(b, '}'), nil
}

// UnmarshalJSON reads {"enabled","maxRetries","baseDelayMs"}. Keys are
// matched exactly (case included) and any other key is an error naming it
// and the allowed keys; a missing key keeps its default, and JSON null (for
// the whole group or a key) changes nothing. baseDelayMs is a number of
// milliseconds, fraction allowed (rounded to the nanosecond); one too large
// for a time.Duration saturates, so Validate rejects it instead of seeing a
// wrapped value. Ranges are not checked here: call Validate.
func (s *Settings) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	var fields map[string]json.RawMessage
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &fields) != nil {
		return fmt.Errorf("retry settings: want a JSON object with keys %s, got %s", strings.Join(settingsKeys, ", "), jsonKind(b))
	}
	out := DefaultSettings()
	// Report the first unknown key in sorted order, so the error is the same
	// whatever the map's iteration order.
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(settingsKeys, k) {
			return fmt.Errorf("retry settings: unknown key %s (allowed: %s)", strconv.Quote(k), strings.Join(settingsKeys, ", "))
		}
	}
	for _, k := range settingsKeys {
		raw, ok := fields[k]
		if !ok || string(raw) == "null" {
			continue
		}
		switch k {
		case "enabled":
			if json.Unmarshal(raw, &out.Enabled) != nil {
				return settingsTypeError(k, raw, "a boolean", "true or false")
			}
		case "maxRetries":
			if json.Unmarshal(raw, &out.MaxRetries) != nil {
				return settingsTypeError(k, raw, "an integer", fmt.Sprintf("an integer from 0 to %d", MaxRetriesLimit))
			}
		case "baseDelayMs":
			var n json.Number // (which would also take a string holding a number)
			if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
				return settingsTypeError(k, raw, "a number", fmt.Sprintf("0 to %d ms", MaxBaseDelay.Milliseconds()))
			}
			out.BaseDelay = msDuration(n)
		}
	}
	*s = out
	return nil
}

// msDuration converts a JSON number of milliseconds to a Duration: an
// integer exactly, a fraction rounded to the nanosecond, saturating at the
// largest and smallest Duration.
func msDuration(n json.Number) time.Duration {
	const perMs = int64(time.Millisecond)
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		switch {
		case i > math.MaxInt64/perMs:
			return math.MaxInt64
		case i < math.MinInt64/perMs:
			return math.MinInt64
		}
		return time.Duration(i * perMs)
	}
	f, err := n.Float64() // JSON has no NaN or infinity; a huge exponent gives ±Inf
	ns := math.Round(f * float64(perMs))
	switch {
	case err == nil && ns >= -math.MaxInt64 && ns < math.MaxInt64:
		return time.Duration(ns)
	case f < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}

// settingsTypeError says that key holds a value of the wrong type.
func settingsTypeError(key string, raw json.RawMessage, want, allowed string) error {
	v := string(raw)
	if r := []rune(v); len(r) > 40 {
		v = string(r[:40]) + "…"
	}
	return fmt.Errorf("retry settings: %s = %s is not %s (allowed: %s)", key, v, want, allowed)
}

// jsonKind names the kind of a JSON value by its first byte.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an invalid object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}
