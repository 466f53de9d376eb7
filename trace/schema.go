package trace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/jsonw"
)

// Kind is the JSON kind of a field's value.
type Kind uint8

// Kinds of field values.
const (
	KindString Kind = iota + 1
	KindNumber
	KindBool
	KindObject
	KindNumbers      // an array of numbers
	KindNumberOrNull // a number, or null when absent (retryAfterMs)
)

// String names the kind as an error message says it: "a string", ...
func (k Kind) String() string {
	switch k {
	case KindString:
		return "a string"
	case KindNumber:
		return "a number"
	case KindBool:
		return "true or false"
	case KindObject:
		return "an object"
	case KindNumbers:
		return "a list of numbers"
	case KindNumberOrNull:
		return "a number or null"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Field is one field of a trace line type (SPEC.md §8): its JSON name, the
// kind of its value and, for an object, its own fields.
type Field struct {
	Name   string
	Kind   Kind
	Fields []Field // of an object
	get    func(r *Record) (v value, present bool)
}

// value is a field's value in a record.
type value struct {
	s    string
	n    float64
	b    bool
	null bool
	ints []int
}

func sv(s string) (value, bool)     { return value{s: s}, true }
func nv(n float64) (value, bool)    { return value{n: n}, true }
func iv(n int) (value, bool)        { return value{n: float64(n)}, true }
func bv(b bool) (value, bool)       { return value{b: b}, true }
func opt(s string) (value, bool)    { return value{s: s}, s != "" }
func present(*Record) (value, bool) { return value{}, true }
func msOf(d time.Duration) float64  { return float64(d) / float64(time.Millisecond) }

var common = []Field{
	{Name: "t", Kind: KindNumber, get: func(r *Record) (value, bool) { return nv(msOf(r.T)) }},
	{Name: "type", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Type.String()) }},
}

// schema lists each type's fields after t and type, in line order.
var schema = [numTypes][]Field{
	AgentRun: {
		{Name: "kind", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Run.String()) }},
		{Name: "model", Kind: KindString, get: func(r *Record) (value, bool) { return opt(r.Model) }},
	},
	MessageEnd: {
		{Name: "message", Kind: KindObject, get: present, Fields: []Field{
			{Name: "role", Kind: KindString, get: func(*Record) (value, bool) { return sv("assistant") }},
			{Name: "stopReason", Kind: KindString, get: func(r *Record) (value, bool) { return sv(string(r.Message.StopReason)) }},
			{Name: "errorMessage", Kind: KindString, get: func(r *Record) (value, bool) { return opt(r.Message.ErrorMessage) }},
		}},
		{Name: "model", Kind: KindString, get: func(r *Record) (value, bool) { return opt(r.Model) }},
	},
	AgentRunEnd: {},
	Transition: {
		{Name: "from", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Edge.From) }},
		{Name: "event", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Edge.Event) }},
		{Name: "to", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Edge.To) }},
		{Name: "input", Kind: KindString, get: func(r *Record) (value, bool) { return value{s: r.Edge.Input.String()}, r.Edge.Rule >= 0 }},
		{Name: "rule", Kind: KindNumber, get: func(r *Record) (value, bool) { return value{n: float64(r.Edge.Rule)}, r.Edge.Rule >= 0 }},
	},
	AutoRetryStart: {
		{Name: "attempt", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.Start.Attempt) }},
		{Name: "maxAttempts", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.Start.MaxAttempts) }},
		{Name: "delayMs", Kind: KindNumber, get: func(r *Record) (value, bool) { return nv(r.Start.DelayMs) }},
		{Name: "errorMessage", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Start.ErrorMessage) }},
	},
	AutoRetryEnd: {
		{Name: "success", Kind: KindBool, get: func(r *Record) (value, bool) { return bv(r.End.Success) }},
		{Name: "attempt", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.End.Attempt) }},
		{Name: "finalError", Kind: KindString, get: func(r *Record) (value, bool) { return value{s: r.End.FinalError}, !r.End.Success }},
	},
	AutoCompactionStart: {
		{Name: "reason", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Reason) }},
	},
	AutoCompactionEnd: {
		{Name: "result", Kind: KindObject, get: func(r *Record) (value, bool) { return value{}, r.CompactionEnd.Result }, Fields: []Field{
			{Name: "summary", Kind: KindString, get: func(r *Record) (value, bool) { return value{s: "(simulated)"}, r.CompactionEnd.Result }},
		}},
		{Name: "aborted", Kind: KindBool, get: func(r *Record) (value, bool) { return bv(r.CompactionEnd.Aborted) }},
		{Name: "willRetry", Kind: KindBool, get: func(r *Record) (value, bool) { return bv(r.CompactionEnd.WillRetry) }},
		{Name: "errorMessage", Kind: KindString, get: func(r *Record) (value, bool) { return opt(r.CompactionEnd.ErrorMessage) }},
	},
	MarkUsageLimitReached: {
		{Name: "provider", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.UsageLimit.Provider) }},
		{Name: "sessionId", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.UsageLimit.SessionID) }},
		{Name: "retryAfterMs", Kind: KindNumberOrNull, get: func(r *Record) (value, bool) {
			return value{n: r.UsageLimit.RetryAfterMs, null: !r.UsageLimit.HasRetryAfter}, true
		}},
		{Name: "baseUrl", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.UsageLimit.BaseURL) }},
		{Name: "returns", Kind: KindBool, get: func(r *Record) (value, bool) { return bv(r.UsageLimit.Returns) }},
	},
	PromptResolved: {
		{Name: "prompt", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.Prompt) }},
	},
	PromptRejected: {
		{Name: "prompt", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.Prompt) }},
		{Name: "error", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Error) }},
	},
	ContinueRejected: {
		{Name: "error", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Error) }},
	},
	Response: {
		{Name: "id", Kind: KindString, get: func(r *Record) (value, bool) { return opt(r.Response.ID) }},
		{Name: "command", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Response.Command) }},
		{Name: "success", Kind: KindBool, get: func(r *Record) (value, bool) { return bv(r.Response.Success) }},
		{Name: "data", Kind: KindObject, get: func(r *Record) (value, bool) { return value{}, r.Response.HasState }, Fields: stateFields},
		{Name: "error", Kind: KindString, get: func(r *Record) (value, bool) { return value{s: r.Response.Error}, !r.Response.Success }},
	},
	Final: {
		{Name: "state", Kind: KindString, get: func(r *Record) (value, bool) { return sv(string(r.Final.State)) }},
		{Name: "attempt", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.Final.Attempt) }},
		{Name: "isRetrying", Kind: KindBool, get: func(r *Record) (value, bool) { return bv(r.Final.IsRetrying) }},
		{Name: "unresolvedPrompts", Kind: KindNumbers, get: func(r *Record) (value, bool) { return value{ints: r.Final.UnresolvedPrompts}, true }},
		{Name: "turnsConsumed", Kind: KindNumber, get: func(r *Record) (value, bool) { return iv(r.Final.TurnsConsumed) }},
	},
	RetryFallback: {
		{Name: "from", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Fallback.From) }},
		{Name: "to", Kind: KindString, get: func(r *Record) (value, bool) { return sv(r.Fallback.To) }},
	},
}

// stateFields are get_state's data fields, as SessionState declares them.
var stateFields = stateSchema(statePlan, nil)

// Fields returns the fields of a line of type t, t and type first, in
// line order.
func Fields(t Type) []Field {
	if t == 0 || t >= numTypes {
		return nil
	}
	return append(append([]Field(nil), common...), schema[t]...)
}

// Lookup returns the field of a line of type t called name.
func Lookup(t Type, name string) (*Field, bool) {
	for i := range common {
		if common[i].Name == name {
			return &common[i], true
		}
	}
	if t == 0 || t >= numTypes {
		return nil, false
	}
	return find(schema[t], name)
}

// Sub returns the field of an object field called name.
func (f *Field) Sub(name string) (*Field, bool) { return find(f.Fields, name) }

func find(fs []Field, name string) (*Field, bool) {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i], true
		}
	}
	return nil, false
}

// Names joins the names of fs, for "allowed: ..." messages.
func Names(fs []Field) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// TypeNames joins the names of every type, for "allowed: ..." messages.
func TypeNames() string {
	names := make([]string, 0, numTypes-1)
	for _, t := range Types() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// Match reports whether r has every field of want with an equal value
// (JSON equality: want holds what encoding/json or the scenario loader
// decodes, numbers as float64). Fields not in want are ignored, and an
// object in want matches as a subset too: fields added to a line later
// never break an expectation.
func Match(r *Record, want map[string]any) bool {
	for k, w := range want {
		f, ok := Lookup(r.Type, k)
		if !ok || !f.match(r, w) {
			return false
		}
	}
	return true
}

func (f *Field) match(r *Record, want any) bool {
	v, present := f.get(r)
	if !present {
		return false
	}
	switch f.Kind {
	case KindString:
		s, ok := want.(string)
		return ok && s == v.s
	case KindNumber:
		n, ok := want.(float64)
		return ok && n == v.n
	case KindNumberOrNull:
		if want == nil {
			return v.null
		}
		n, ok := want.(float64)
		return ok && !v.null && n == v.n
	case KindBool:
		b, ok := want.(bool)
		return ok && b == v.b
	case KindNumbers:
		xs, ok := want.([]any)
		if !ok || len(xs) != len(v.ints) {
			return false
		}
		for i, x := range xs {
			if n, ok := x.(float64); !ok || n != float64(v.ints[i]) {
				return false
			}
		}
		return true
	case KindObject:
		m, ok := want.(map[string]any)
		if !ok {
			return false
		}
		for k, w := range m {
			sub, ok := f.Sub(k)
			if !ok || !sub.match(r, w) {
				return false
			}
		}
		return true
	}
	return false
}

// FieldJSON renders the value of r's field name as compact JSON (for
// messages that show how a line differs from an expectation).
func FieldJSON(r *Record, name string) (string, bool) {
	f, ok := Lookup(r.Type, name)
	if !ok {
		return "", false
	}
	return f.json(r)
}

func (f *Field) json(r *Record) (string, bool) {
	v, present := f.get(r)
	if !present {
		return "", false
	}
	switch f.Kind {
	case KindString:
		return string(jsonw.AppendString(nil, v.s)), true
	case KindNumber:
		return string(jsonw.AppendNumber(nil, v.n)), true
	case KindNumberOrNull:
		if v.null {
			return "null", true
		}
		return string(jsonw.AppendNumber(nil, v.n)), true
	case KindBool:
		return strconv.FormatBool(v.b), true
	case KindNumbers:
		parts := make([]string, len(v.ints))
		for i, n := range v.ints {
			parts[i] = strconv.Itoa(n)
		}
		return "[" + strings.Join(parts, ",") + "]", true
	case KindObject:
		var parts []string
		for i := range f.Fields {
			if s, ok := f.Fields[i].json(r); ok {
				parts = append(parts, string(jsonw.AppendString(nil, f.Fields[i].Name))+":"+s)
			}
		}
		return "{" + strings.Join(parts, ",") + "}", true
	}
	return "", false
}
