package retry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/suggest"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// Settings is the "retry" settings group. The zero value is not the default:
// use DefaultSettings. Every field after BaseDelay is opt-in, and its zero
// value is its default (a factor of 0 counts as 2, an empty mode as the
// default mode), which gives the original's behaviour of February 2026
// exactly.
type Settings struct {
	// Enabled switches automatic retry on or off (JSON "enabled").
	Enabled bool
	// MaxRetries is how many retries one chain may make (JSON "maxRetries");
	// a chain makes up to MaxRetries+1 model calls in all.
	MaxRetries int
	// BaseDelay is the wait before the first retry (JSON "baseDelayMs", in
	// milliseconds).
	BaseDelay time.Duration
	// BackoffFactor multiplies the wait at each retry: retry k waits
	// BaseDelay*BackoffFactor^(k-1) (JSON "backoffFactor", >= 1, default 2;
	// 0 means 2).
	BackoffFactor float64
	// MaxBackoff caps the computed backoff, before jitter (JSON
	// "maxBackoffMs"; 0: no cap).
	MaxBackoff time.Duration
	// Jitter spreads the capped backoff (JSON "jitter": {mode, ratio}).
	Jitter Jitter
	// RetryAfter says how provider hints set the wait and when a wait is
	// too long (JSON "retryAfter": {use, maxHintMs, maxWaitMs}).
	RetryAfter RetryAfter
	// Classify is how an error is found retryable (JSON "classify":
	// "message", "status" or "strict"; default "message").
	Classify string
	// RetryablePatterns and NonRetryablePatterns are Go regexps, matched
	// case-insensitively, that override Classify (non-retryable wins; JSON
	// "retryablePatterns", "nonRetryablePatterns").
	RetryablePatterns, NonRetryablePatterns []string
	// Persistent is the unattended mode: retryable errors other than usage
	// limits are retried with no count limit (MaxRetries still bounds usage
	// limits); it requires MaxBackoff > 0 (JSON "persistent").
	Persistent bool
	// Fallback lists the models to fall back to, in order, when a chain
	// would end exhausted or a wait would exceed RetryAfter.MaxWait (JSON
	// "fallback").
	Fallback []string
}

// Jitter is the jitter setting.
type Jitter struct {
	Mode  string  // JSON "mode"
	Ratio float64 // JSON "ratio", in [0,1] (down and updown)
}

// RetryAfter is the hint and ceiling setting.
type RetryAfter struct {
	Use string // JSON "use"
	// MaxHint > 0: a hint above it is not used (the backoff stands; JSON
	// "maxHintMs").
	MaxHint time.Duration
	// MaxWait > 0: a wait above it is not waited: the chain falls back to
	// the next model, or ends at once (fail-fast; JSON "maxWaitMs").
	MaxWait time.Duration
}

// DefaultSettings returns {Enabled: true, MaxRetries: 3, BaseDelay: 2 s}:
// factor 2, no cap, no jitter, hints ignored, message classification, no
// fallback.
func DefaultSettings() Settings {
	return Settings{Enabled: true, MaxRetries: DefaultMaxRetries, BaseDelay: DefaultBaseDelay}
}

// Normalized returns s with every zero value that stands for a default
// spelled out (factor 2, the modes "none", "ignore" and "message") and
// empty lists nil.
func (s Settings) Normalized() Settings {
	if s.BackoffFactor == 0 {
		s.BackoffFactor = DefaultBackoffFactor
	}
	if s.Jitter.Mode == "" {
		s.Jitter.Mode = JitterNone
	}
	if s.RetryAfter.Use == "" {
		s.RetryAfter.Use = HintIgnore
	}
	if s.Classify == "" {
		s.Classify = ClassifyMessage
	}
	for _, l := range []*[]string{&s.RetryablePatterns, &s.NonRetryablePatterns, &s.Fallback} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return s
}

// Equal reports whether s and o are the same settings (defaults spelled
// out or not).
func (s Settings) Equal(o Settings) bool {
	s, o = s.Normalized(), o.Normalized()
	return s.Enabled == o.Enabled && s.MaxRetries == o.MaxRetries && s.BaseDelay == o.BaseDelay &&
		s.BackoffFactor == o.BackoffFactor && s.MaxBackoff == o.MaxBackoff && s.Jitter == o.Jitter && s.RetryAfter == o.RetryAfter &&
		s.Classify == o.Classify && slices.Equal(s.RetryablePatterns, o.RetryablePatterns) &&
		slices.Equal(s.NonRetryablePatterns, o.NonRetryablePatterns) && s.Persistent == o.Persistent && slices.Equal(s.Fallback, o.Fallback)
}

// Clone returns s with its lists copied.
func (s Settings) Clone() Settings {
	s.RetryablePatterns = slices.Clone(s.RetryablePatterns)
	s.NonRetryablePatterns = slices.Clone(s.NonRetryablePatterns)
	s.Fallback = slices.Clone(s.Fallback)
	return s
}

// SettingsError says which field of a Settings value is out of range.
type SettingsError struct {
	Field   string // JSON path: "maxRetries", "jitter.ratio", ...
	Value   string
	Allowed string
}

// Error implements error.
func (e *SettingsError) Error() string {
	return fmt.Sprintf("retry settings: %s = %s is out of range (allowed: %s)", e.Field, e.Value, e.Allowed)
}

func msText(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// Validate reports the first out-of-range field: a negative maxRetries or
// one above MaxRetriesLimit, a negative delay or one above MaxBaseDelay, a
// backoffFactor below 1, a cap below the base, an unknown mode, a ratio
// outside [0,1], an invalid regexp, persistent without a cap, an empty
// fallback model.
func (s Settings) Validate() error {
	_, _, err := s.validate()
	return err
}

// validate is Validate, which returns the patterns it compiled to check
// them (nil when there are none): Compile's classifier.
func (s Settings) validate() (retryable, nonRetryable []*regexp.Regexp, err error) {
	s = s.Normalized()
	maxMs := fmt.Sprintf("0 to %d ms", MaxBaseDelay.Milliseconds())
	switch {
	case s.MaxRetries < 0 || s.MaxRetries > MaxRetriesLimit:
		return nil, nil, &SettingsError{Field: "maxRetries", Value: fmt.Sprint(s.MaxRetries), Allowed: fmt.Sprintf("an integer from 0 to %d", MaxRetriesLimit)}
	case s.BaseDelay < 0 || s.BaseDelay > MaxBaseDelay:
		return nil, nil, &SettingsError{Field: "baseDelayMs", Value: msText(s.BaseDelay), Allowed: maxMs}
	case !(s.BackoffFactor >= 1 && s.BackoffFactor <= MaxBackoffFactor):
		return nil, nil, &SettingsError{Field: "backoffFactor", Value: strconv.FormatFloat(s.BackoffFactor, 'g', -1, 64),
			Allowed: fmt.Sprintf("a number from 1 to %d", MaxBackoffFactor)}
	case s.MaxBackoff < 0 || s.MaxBackoff > MaxBaseDelay:
		return nil, nil, &SettingsError{Field: "maxBackoffMs", Value: msText(s.MaxBackoff), Allowed: "0 (no cap) or " + maxMs}
	case s.MaxBackoff > 0 && s.MaxBackoff < s.BaseDelay:
		return nil, nil, &SettingsError{Field: "maxBackoffMs", Value: msText(s.MaxBackoff),
			Allowed: fmt.Sprintf("0 (no cap) or at least baseDelayMs (%s)", msText(s.BaseDelay))}
	}
	switch s.Jitter.Mode {
	case JitterNone, JitterDown, JitterUpDown, JitterFull, JitterEqual:
	default:
		return nil, nil, &SettingsError{Field: "jitter.mode", Value: strconv.Quote(string(s.Jitter.Mode)), Allowed: "none, down, updown, full or equal"}
	}
	if !(s.Jitter.Ratio >= 0 && s.Jitter.Ratio <= 1) {
		return nil, nil, &SettingsError{Field: "jitter.ratio", Value: strconv.FormatFloat(s.Jitter.Ratio, 'g', -1, 64), Allowed: "a number from 0 to 1"}
	}
	switch s.RetryAfter.Use {
	case HintIgnore, HintFloor, HintReplace:
	default:
		return nil, nil, &SettingsError{Field: "retryAfter.use", Value: strconv.Quote(string(s.RetryAfter.Use)), Allowed: "ignore, floor or replace"}
	}
	if d := s.RetryAfter.MaxHint; d < 0 || d > MaxBaseDelay {
		return nil, nil, &SettingsError{Field: "retryAfter.maxHintMs", Value: msText(d), Allowed: "0 (none) or " + maxMs}
	}
	if d := s.RetryAfter.MaxWait; d < 0 || d > MaxBaseDelay {
		return nil, nil, &SettingsError{Field: "retryAfter.maxWaitMs", Value: msText(d), Allowed: "0 (none) or " + maxMs}
	}
	if _, err := classify.ParseMode(s.Classify); err != nil {
		return nil, nil, &SettingsError{Field: "classify", Value: strconv.Quote(string(s.Classify)), Allowed: "message, status or strict"}
	}
	for _, l := range []struct {
		name string
		ps   []string
		re   *[]*regexp.Regexp
	}{{"retryablePatterns", s.RetryablePatterns, &retryable}, {"nonRetryablePatterns", s.NonRetryablePatterns, &nonRetryable}} {
		if *l.re, err = classify.CompilePatterns(l.ps); err != nil {
			return nil, nil, &SettingsError{Field: l.name, Value: err.Error(), Allowed: "Go regular expressions (RE2), not empty"}
		}
	}
	if s.Persistent && s.MaxBackoff <= 0 {
		return nil, nil, &SettingsError{Field: "persistent", Value: "true", Allowed: "true only with maxBackoffMs > 0 (an unattended chain needs a cap)"}
	}
	if len(s.Fallback) > MaxFallbacks {
		return nil, nil, &SettingsError{Field: "fallback", Value: fmt.Sprintf("%d models", len(s.Fallback)), Allowed: fmt.Sprintf("at most %d models", MaxFallbacks)}
	}
	for i, m := range s.Fallback {
		if strings.TrimSpace(m) == "" {
			return nil, nil, &SettingsError{Field: fmt.Sprintf("fallback[%d]", i), Value: strconv.Quote(m), Allowed: "a model id (not empty)"}
		}
	}
	return retryable, nonRetryable, nil
}

// Delay is the backoff before retry number attempt (1-based), before the
// cap and jitter: BaseDelay * BackoffFactor^(attempt-1) (a factor of 0
// counts as 2). It saturates at the largest time.Duration instead of
// wrapping, and is 0 for attempt < 1 or a non-positive BaseDelay.
func (s Settings) Delay(attempt int) time.Duration { return s.delay(attempt) }

// delay is Delay without copying the settings.
func (s *Settings) delay(attempt int) time.Duration {
	if attempt < 1 || s.BaseDelay <= 0 {
		return 0
	}
	shift := attempt - 1
	if s.BackoffFactor == 0 || s.BackoffFactor == 2 {
		if shift >= 63 || s.BaseDelay > time.Duration(math.MaxInt64>>uint(shift)) {
			return time.Duration(math.MaxInt64)
		}
		return s.BaseDelay << uint(shift)
	}
	f := float64(s.BaseDelay) * math.Pow(s.BackoffFactor, float64(shift))
	if !(f < math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(f)
}

// Backoff is the wait before retry number attempt before any hint: Delay,
// capped at MaxBackoff, then jittered with the draw u in [0,1).
func (s Settings) Backoff(attempt int, u float64) time.Duration { return s.backoff(attempt, u) }

// backoff is Backoff without copying the settings.
func (s *Settings) backoff(attempt int, u float64) time.Duration {
	// (an empty jitter mode is none)
	b := s.delay(attempt)
	if s.MaxBackoff > 0 && b > s.MaxBackoff {
		b = s.MaxBackoff
	}
	if m := s.Jitter.Mode; m == "" || m == JitterNone {
		return b
	}
	bf := float64(b)
	switch s.Jitter.Mode {
	case JitterDown:
		bf *= 1 - s.Jitter.Ratio*u
	case JitterUpDown:
		bf *= 1 + s.Jitter.Ratio*(2*u-1)
	case JitterFull:
		bf *= u
	case JitterEqual:
		bf = bf/2 + bf/2*u
	default:
		return b
	}
	if !(bf < math.MaxInt64) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(max(0, bf)) // (the builtin: math.Max's result here, NaN excluded above, without its call)
}

// Jittered reports whether the backoff takes a draw (a jitter mode other
// than none).
func (s Settings) Jittered() bool { return s.Jitter.Mode != JitterNone && s.Jitter.Mode != "" }

// settingsKeys are the JSON keys of the retry settings group, in the order
// MarshalJSON writes them.
var settingsKeys = []string{"enabled", "maxRetries", "baseDelayMs", "backoffFactor", "maxBackoffMs", "jitter", "retryAfter",
	"classify", "retryablePatterns", "nonRetryablePatterns", "persistent", "fallback"}

var (
	jitterKeys     = []string{"mode", "ratio"}
	retryAfterKeys = []string{"use", "maxHintMs", "maxWaitMs"}
)

// MarshalJSON writes the original's three keys, then each other key whose
// value is not its default, in settingsKeys' order (so the default settings
// write exactly {"enabled","maxRetries","baseDelayMs"}); durations in
// milliseconds as JavaScript writes the number (a fraction of a
// millisecond kept).
func (s Settings) MarshalJSON() ([]byte, error) {
	s = s.Normalized()
	b := append([]byte(`{"enabled":`), strconv.FormatBool(s.Enabled)...)
	b = append(b, `,"maxRetries":`...)
	b = strconv.AppendInt(b, int64(s.MaxRetries), 10)
	b = append(b, `,"baseDelayMs":`...)
	b = jsonw.AppendNumber(b, durationMs(s.BaseDelay))
	if s.BackoffFactor != DefaultBackoffFactor {
		b = jsonw.AppendNumber(append(b, `,"backoffFactor":`...), s.BackoffFactor)
	}
	if s.MaxBackoff != 0 {
		b = jsonw.AppendNumber(append(b, `,"maxBackoffMs":`...), durationMs(s.MaxBackoff))
	}
	if s.Jitter != (Jitter{Mode: JitterNone}) {
		b = jsonw.AppendString(append(b, `,"jitter":{"mode":`...), string(s.Jitter.Mode))
		b = jsonw.AppendNumber(append(b, `,"ratio":`...), s.Jitter.Ratio)
		b = append(b, '}')
	}
	if s.RetryAfter != (RetryAfter{Use: HintIgnore}) {
		b = jsonw.AppendString(append(b, `,"retryAfter":{"use":`...), string(s.RetryAfter.Use))
		b = jsonw.AppendNumber(append(b, `,"maxHintMs":`...), durationMs(s.RetryAfter.MaxHint))
		b = jsonw.AppendNumber(append(b, `,"maxWaitMs":`...), durationMs(s.RetryAfter.MaxWait))
		b = append(b, '}')
	}
	if s.Classify != ClassifyMessage {
		b = jsonw.AppendString(append(b, `,"classify":`...), string(s.Classify))
	}
	strs := func(b []byte, k string, vs []string) []byte {
		if len(vs) == 0 {
			return b
		}
		b = append(b, k...)
		for i, v := range vs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendString(b, v)
		}
		return append(b, ']')
	}
	b = strs(b, `,"retryablePatterns":[`, s.RetryablePatterns)
	b = strs(b, `,"nonRetryablePatterns":[`, s.NonRetryablePatterns)
	if s.Persistent {
		b = append(b, `,"persistent":true`...)
	}
	b = strs(b, `,"fallback":[`, s.Fallback)
	return append(b, '}'), nil
}

// UnmarshalJSON reads the settings object onto the defaults: see Apply.
func (s *Settings) UnmarshalJSON(b []byte) error {
	out, err := DefaultSettings().Apply(b)
	if err != nil {
		return err
	}
	*s = out
	return nil
}

// Apply returns s with the keys of the JSON object b applied: a given key
// replaces the value, a nested object (jitter, retryAfter) merges key by
// key, JSON null (for the whole object or a key) changes nothing, a missing
// key keeps its value. Keys are matched exactly (case included); any other
// key, or a key given twice at any depth, is an error naming its path. Durations are
// numbers of milliseconds, fraction allowed (rounded to the nanosecond);
// one too large for a time.Duration is a *SettingsError quoting the number
// as written. Other ranges are not checked here: call Validate.
func (s Settings) Apply(b []byte) (Settings, error) {
	out := s.Clone()
	fields, err := jsonObject(b, "", settingsKeys)
	if err != nil || fields == nil {
		return s, err
	}
	if k := duplicateKey(b); k != "" {
		return s, fmt.Errorf("retry settings: key %s given twice (allowed: each key once)", clipRaw(strconv.Quote(k)))
	}
	for _, k := range settingsKeys {
		raw, ok := fields[k]
		if !ok || string(raw) == "null" {
			continue
		}
		var err error
		switch k {
		case "enabled":
			err = jsonBool(raw, k, &out.Enabled)
		case "maxRetries":
			if json.Unmarshal(raw, &out.MaxRetries) != nil {
				err = settingsTypeError(k, raw, "an integer", fmt.Sprintf("an integer from 0 to %d", MaxRetriesLimit))
			}
		case "baseDelayMs":
			err = jsonMs(raw, k, &out.BaseDelay)
		case "backoffFactor":
			err = jsonFloat(raw, k, &out.BackoffFactor, fmt.Sprintf("a number from 1 to %d", MaxBackoffFactor))
		case "maxBackoffMs":
			err = jsonMs(raw, k, &out.MaxBackoff)
		case "jitter":
			var sub map[string]json.RawMessage
			if sub, err = jsonObject(raw, "jitter.", jitterKeys); err == nil && sub != nil {
				if v, ok := sub["mode"]; ok && string(v) != "null" {
					err = jsonString(v, "jitter.mode", (*string)(&out.Jitter.Mode), "none, down, updown, full or equal")
				}
				if v, ok := sub["ratio"]; ok && string(v) != "null" && err == nil {
					err = jsonFloat(v, "jitter.ratio", &out.Jitter.Ratio, "a number from 0 to 1")
				}
			}
		case "retryAfter":
			var sub map[string]json.RawMessage
			if sub, err = jsonObject(raw, "retryAfter.", retryAfterKeys); err == nil && sub != nil {
				if v, ok := sub["use"]; ok && string(v) != "null" {
					err = jsonString(v, "retryAfter.use", (*string)(&out.RetryAfter.Use), "ignore, floor or replace")
				}
				if v, ok := sub["maxHintMs"]; ok && string(v) != "null" && err == nil {
					err = jsonMs(v, "retryAfter.maxHintMs", &out.RetryAfter.MaxHint)
				}
				if v, ok := sub["maxWaitMs"]; ok && string(v) != "null" && err == nil {
					err = jsonMs(v, "retryAfter.maxWaitMs", &out.RetryAfter.MaxWait)
				}
			}
		case "classify":
			err = jsonString(raw, k, (*string)(&out.Classify), "message, status or strict")
		case "retryablePatterns":
			err = jsonStrings(raw, k, &out.RetryablePatterns, "a list of regular expressions")
		case "nonRetryablePatterns":
			err = jsonStrings(raw, k, &out.NonRetryablePatterns, "a list of regular expressions")
		case "persistent":
			err = jsonBool(raw, k, &out.Persistent)
		case "fallback":
			err = jsonStrings(raw, k, &out.Fallback, "a list of model ids")
		}
		if err != nil {
			return s, err
		}
	}
	return out, nil
}

// duplicateKey is the path of the first key that a JSON object of the
// valid JSON b has twice (compared after unescaping, exactly), at any
// depth: "baseDelayMs", "jitter.mode", "fallback[1].x"; "" for none.
func duplicateKey(b []byte) string {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func(path string) string
	walk = func(path string) string {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				k, ok := kt.(string)
				if err != nil || !ok {
					return ""
				}
				at := k
				if path != "" {
					at = path + "." + k
				}
				if seen[k] {
					return at
				}
				seen[k] = true
				if d := walk(at); d != "" {
					return d
				}
			}
			dec.Token() // '}'
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if d := walk(path + "[" + strconv.Itoa(i) + "]"); d != "" {
					return d
				}
			}
			dec.Token() // ']'
		}
		return ""
	}
	return walk("")
}

// jsonObject reads an object whose keys must be among allowed (prefix is
// its path, for errors); nil for JSON null.
func jsonObject(b []byte, prefix string, allowed []string) (map[string]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &fields) != nil {
		what := "retry settings"
		if prefix != "" {
			what += ": " + strings.TrimSuffix(prefix, ".")
		}
		return nil, fmt.Errorf("%s: want a JSON object with keys %s, got %s", what, strings.Join(allowed, ", "), jsonKind(b))
	}
	// Report the first unknown key in sorted order, so the error is the same
	// whatever the map's iteration order.
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("retry settings: unknown key %s (allowed: %s)%s", strconv.Quote(prefix+k), strings.Join(allowed, ", "), suggest.Key(k, allowed))
		}
	}
	return fields, nil
}

func jsonBool(raw json.RawMessage, key string, dst *bool) error {
	if json.Unmarshal(raw, dst) != nil {
		return settingsTypeError(key, raw, "a boolean", "true or false")
	}
	return nil
}

func jsonFloat(raw json.RawMessage, key string, dst *float64, allowed string) error {
	if raw[0] == '"' || json.Unmarshal(raw, dst) != nil {
		return settingsTypeError(key, raw, "a number", allowed)
	}
	return nil
}

func jsonString(raw json.RawMessage, key string, dst *string, allowed string) error {
	if json.Unmarshal(raw, dst) != nil {
		return settingsTypeError(key, raw, "a string", allowed)
	}
	return nil
}

func jsonStrings(raw json.RawMessage, key string, dst *[]string, allowed string) error {
	var v []string
	if json.Unmarshal(raw, &v) != nil {
		return settingsTypeError(key, raw, "a list of strings", allowed)
	}
	if v == nil {
		v = []string{}
	}
	*dst = v
	return nil
}

func jsonMs(raw json.RawMessage, key string, dst *time.Duration) error {
	var n json.Number // (which would also take a string holding a number)
	if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return settingsTypeError(key, raw, "a number", fmt.Sprintf("0 to %d ms", MaxBaseDelay.Milliseconds()))
	}
	d, exact := msDuration(n)
	if !exact {
		// Out of any Duration's range: the error quotes the number as
		// written, not the saturated value Validate would see.
		return &SettingsError{Field: key, Value: clipRaw(string(n)), Allowed: msAllowed(key)}
	}
	*dst = d
	return nil
}

// msAllowed is what Validate allows for the milliseconds field key.
func msAllowed(key string) string {
	maxMs := fmt.Sprintf("0 to %d ms", MaxBaseDelay.Milliseconds())
	switch key {
	case "maxBackoffMs":
		return "0 (no cap) or " + maxMs
	case "retryAfter.maxHintMs", "retryAfter.maxWaitMs":
		return "0 (none) or " + maxMs
	}
	return maxMs
}

// clipRaw is a value as written, at most 40 characters of it.
func clipRaw(v string) string {
	if r := []rune(v); len(r) > 40 {
		v = string(r[:40]) + "…"
	}
	return v
}

// msDuration converts a JSON number of milliseconds to a Duration: an
// integer exactly, a fraction rounded to the nanosecond, saturating at the
// largest and smallest Duration (exact is then false).
func msDuration(n json.Number) (d time.Duration, exact bool) {
	const perMs = int64(time.Millisecond)
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		switch {
		case i > math.MaxInt64/perMs:
			return math.MaxInt64, false
		case i < math.MinInt64/perMs:
			return math.MinInt64, false
		}
		return time.Duration(i * perMs), true
	}
	f, err := n.Float64() // JSON has no NaN or infinity; a huge exponent gives ±Inf
	ns := math.Round(f * float64(perMs))
	switch {
	case err == nil && ns >= -math.MaxInt64 && ns < math.MaxInt64:
		return time.Duration(ns), true
	case f < 0:
		return math.MinInt64, false
	}
	return math.MaxInt64, false
}

// settingsTypeError says that key holds a value of the wrong type.
func settingsTypeError(key string, raw json.RawMessage, want, allowed string) error {
	return fmt.Errorf("retry settings: %s = %s is not %s (allowed: %s)", key, clipRaw(string(raw)), want, allowed)
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
