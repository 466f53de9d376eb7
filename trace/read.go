package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// MaxLineSize bounds one trace line the Scanner reads.
const MaxLineSize = 4 << 20

// Scanner reads a JSON Lines trace line by line, with a bounded line
// length; blank lines are skipped.
type Scanner struct {
	sc   *bufio.Scanner
	line []byte
	n    int
}

// NewScanner reads r.
func NewScanner(r io.Reader) *Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineSize)
	return &Scanner{sc: sc}
}

// Scan advances to the next non-blank line; false at the end or on an
// error (see Err).
func (s *Scanner) Scan() bool {
	for s.sc.Scan() {
		s.n++
		if line := bytes.TrimSpace(s.sc.Bytes()); len(line) > 0 {
			s.line = line
			return true
		}
	}
	return false
}

// Line returns the current line, valid until the next Scan.
func (s *Scanner) Line() []byte { return s.line }

// N is the current line's number (1-based, blank lines counted).
func (s *Scanner) N() int { return s.n }

// Err returns the first error other than the end of the input.
func (s *Scanner) Err() error {
	if err := s.sc.Err(); err != nil {
		return fmt.Errorf("trace line %d: %w", s.n+1, err)
	}
	return nil
}

// wire is every field a trace line can have.
type wire struct {
	T       *float64 `json:"t"`
	Type    string   `json:"type"`
	Kind    string   `json:"kind"`
	Model   string   `json:"model"`
	Message *struct {
		StopReason   policy.StopReason `json:"stopReason"`
		ErrorMessage string            `json:"errorMessage"`
	} `json:"message"`
	From, Event, To, Input string
	Rule                   *int
	Attempt                int
	MaxAttempts            int
	DelayMs                float64
	ErrorMessage           string
	Success                bool
	FinalError             string
	Reason                 string
	Result                 json.RawMessage
	Aborted, WillRetry     bool
	Provider               string
	SessionID              string `json:"sessionId"`
	RetryAfterMs           *float64
	BaseURL                string `json:"baseUrl"`
	Returns                bool
	Prompt                 int
	Error                  string
	ID                     string
	Command                string
	Data                   json.RawMessage // get_state's: decodeState
	State                  policy.State
	IsRetrying             bool
	UnresolvedPrompts      []int
	TurnsConsumed          int
}

// Decode reads one trace line written by AppendJSON.
func Decode(line []byte) (Record, error) {
	var w wire
	if err := json.Unmarshal(line, &w); err != nil {
		return Record{}, decodeError(err, "")
	}
	typ, ok := ParseType(w.Type)
	if !ok {
		return Record{}, fmt.Errorf("unknown type %q (allowed: %s)", w.Type, TypeNames())
	}
	if w.T == nil || *w.T < 0 || *w.T > math.MaxInt64/float64(time.Millisecond) {
		return Record{}, errors.New(`"t" missing or out of range`)
	}
	r := Record{T: time.Duration(math.Round(*w.T * float64(time.Millisecond))), Type: typ}
	switch typ {
	case AgentRun:
		r.Run, r.Model = RunPrompt, w.Model
		if w.Kind != "prompt" {
			r.Run = RunContinue
		}
	case MessageEnd:
		if w.Message != nil {
			r.Message = Message{StopReason: w.Message.StopReason, ErrorMessage: w.Message.ErrorMessage}
		}
		r.Model = w.Model
	case Transition:
		r.Edge = Edge{From: w.From, Event: w.Event, To: w.To, Rule: -1} // no rule: unknown
		if w.Rule != nil {
			r.Edge.Rule = *w.Rule
		}
		for _, in := range retry.Inputs() {
			if in.String() == w.Input {
				r.Edge.Input = in
			}
		}
	case AutoRetryStart:
		r.Start = policy.AutoRetryStart{Attempt: w.Attempt, MaxAttempts: w.MaxAttempts, DelayMs: w.DelayMs, ErrorMessage: w.ErrorMessage}
	case AutoRetryEnd:
		r.End = policy.AutoRetryEnd{Success: w.Success, Attempt: w.Attempt, FinalError: w.FinalError}
	case AutoCompactionStart:
		r.Reason = w.Reason
	case AutoCompactionEnd:
		r.CompactionEnd = CompactionEnd{Result: w.Result != nil, Aborted: w.Aborted, WillRetry: w.WillRetry, ErrorMessage: w.ErrorMessage}
	case MarkUsageLimitReached:
		r.UsageLimit = UsageLimit{Provider: w.Provider, SessionID: w.SessionID, BaseURL: w.BaseURL, Returns: w.Returns}
		if w.RetryAfterMs != nil {
			r.UsageLimit.RetryAfterMs, r.UsageLimit.HasRetryAfter = *w.RetryAfterMs, true
		}
	case PromptResolved:
		r.Prompt = w.Prompt
	case PromptRejected:
		r.Prompt, r.Error = w.Prompt, w.Error
	case ContinueRejected:
		r.Error = w.Error
	case Response:
		r.Response = ResponseRecord{ID: w.ID, Command: w.Command, Success: w.Success, Error: w.Error}
		if w.Data != nil && !isNull(w.Data) {
			st, err := decodeState(w.Data)
			if err != nil {
				return Record{}, decodeError(err, "data.")
			}
			r.Response.HasState, r.Response.State = true, st
		}
	case Final:
		r.Final = FinalRecord{State: w.State, Attempt: w.Attempt, IsRetrying: w.IsRetrying,
			UnresolvedPrompts: w.UnresolvedPrompts, TurnsConsumed: w.TurnsConsumed}
		if r.Final.UnresolvedPrompts == nil {
			r.Final.UnresolvedPrompts = []int{}
		}
	case RetryFallback:
		r.Fallback = policy.RetryFallback{From: w.From, To: w.To}
	}
	return r, nil
}

// decodeError says which field of the line had the wrong type (its key
// path after prefix) and what the field takes.
func decodeError(err error, prefix string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q: expected %s, got a JSON %s", prefix+wireKey(te.Field), wireKind(te.Type), te.Value)
	}
	return err
}

// Parse decodes a whole trace.
func Parse(trace []byte) ([]Record, error) {
	var out []Record
	sc := NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		r, err := Decode(sc.Line())
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", sc.N(), err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// wireKey is the trace's key path of a field path of wire, as
// encoding/json names it (Go names for untagged fields: "Prompt" is
// "prompt", "Final.State" "final.state").
func wireKey(path string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToLower(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, ".")
}

// wireKind says what JSON a field of Go type t takes.
func wireKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return wireKind(t.Elem()) + " or null"
	default:
		return "an object"
	}
}
