package retry

import (
	"encoding/json"
	"strconv"

	"github.com/ohmypi/retryfsm/internal/jsonw"
)

// Event is a session-level retry event, as emitted to subscribers. The
// concrete types are AutoRetryStart, AutoRetryEnd and RetryFallback (only
// with retry.fallback set); their MarshalJSON and AppendJSONFields write
// the original's exact JSON (key order included), so json.Marshal(e) works
// on an Event as it is. Note that json.Marshal and a default json.Encoder
// HTML-escape what MarshalJSON returns ("<" becomes \u003c, still the same
// JSON value); write with AppendJSONFields or an Encoder with
// SetEscapeHTML(false) to keep the original's bytes.
type Event interface {
	json.Marshaler
	// Type is the event's "type" field: "auto_retry_start",
	// "auto_retry_end" or "retry_fallback".
	Type() string
	// AppendJSONFields appends the event's JSON object without the leading "{", so
	// a caller can prefix fields of its own (the trace puts "t" first).
	AppendJSONFields(b []byte) []byte
}

// AutoRetryStart is emitted when a retry is scheduled, before the backoff
// wait starts.
type AutoRetryStart struct {
	Attempt     int // 1-based retry number
	MaxAttempts int // retry.maxRetries at the time of the decision
	// DelayMs is the backoff in milliseconds, with any fraction of a
	// millisecond kept (a 999 µs base delay gives 0.999); 0 after a
	// credential switch. It is written as JavaScript writes the number.
	DelayMs      float64
	ErrorMessage string // the error that caused the retry
}

// AutoRetryEnd is emitted exactly once when a chain ends (sound variant).
type AutoRetryEnd struct {
	Success    bool
	Attempt    int
	FinalError string // absent from the JSON when Success is true
}

// RetryFallback is emitted when a chain falls back to the next model of
// retry.fallback (opt-in): the chain stays open and goes on as attempt 1.
type RetryFallback struct {
	From, To string // model ids
}

// Type implements Event.
func (RetryFallback) Type() string { return "retry_fallback" }

// AppendJSONFields implements Event.
func (e RetryFallback) AppendJSONFields(b []byte) []byte {
	b = append(b, `"type":"retry_fallback","from":`...)
	b = jsonw.AppendString(b, e.From)
	b = append(b, `,"to":`...)
	b = jsonw.AppendString(b, e.To)
	return append(b, '}')
}

// Type implements Event.
func (AutoRetryStart) Type() string { return "auto_retry_start" }

// Type implements Event.
func (AutoRetryEnd) Type() string { return "auto_retry_end" }

// AppendJSONFields implements Event.
func (e AutoRetryStart) AppendJSONFields(b []byte) []byte {
	b = append(b, `"type":"auto_retry_start","attempt":`...)
	b = jsonw.AppendInt(b, int64(e.Attempt))
	b = append(b, `,"maxAttempts":`...)
	b = jsonw.AppendInt(b, int64(e.MaxAttempts))
	b = append(b, `,"delayMs":`...)
	b = jsonw.AppendNumber(b, e.DelayMs)
	b = append(b, `,"errorMessage":`...)
	b = jsonw.AppendString(b, e.ErrorMessage)
	return append(b, '}')
}

// AppendJSONFields implements Event.
func (e AutoRetryEnd) AppendJSONFields(b []byte) []byte {
	b = append(b, `"type":"auto_retry_end","success":`...)
	b = strconv.AppendBool(b, e.Success)
	b = append(b, `,"attempt":`...)
	b = jsonw.AppendInt(b, int64(e.Attempt))
	if !e.Success {
		b = append(b, `,"finalError":`...)
		b = jsonw.AppendString(b, e.FinalError)
	}
	return append(b, '}')
}

// MarshalJSON writes {"type":"auto_retry_start","attempt","maxAttempts","delayMs","errorMessage"}.
func (e AutoRetryStart) MarshalJSON() ([]byte, error) {
	return e.AppendJSONFields([]byte{'{'}), nil
}

// MarshalJSON writes {"type":"retry_fallback","from","to"}.
func (e RetryFallback) MarshalJSON() ([]byte, error) {
	return e.AppendJSONFields([]byte{'{'}), nil
}

// MarshalJSON writes {"type":"auto_retry_end","success","attempt","finalError"?}.
func (e AutoRetryEnd) MarshalJSON() ([]byte, error) {
	return e.AppendJSONFields([]byte{'{'}), nil
}
