package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
)

// SessionState is get_state's data (SPEC.md §8), and the one declaration
// of its fields: a field's json tag is its key, and the fields' order is
// the line's. The writer (AppendState, generated from this declaration),
// the reader (Decode), the schema (Fields, Match) and the RPC client's
// rpc.State (generated from it too) all follow it. Adding a field is one
// edit here, after the existing ones (fields are never renamed or
// reordered), its sentence in SPEC.md §8, and go generate ./trace ./rpc.
// Two conventions say what JSON's null and an absent field are:
//
//   - a field X followed by a field HasX bool (tagged json:"-") is null
//     when HasX is false (rpc.State: a pointer, nil for null);
//   - a field tagged omitzero is left out when it is zero, as its IsZero
//     method says (rpc.State: a pointer tagged omitempty, nil when left
//     out).
type SessionState struct {
	// IsStreaming is true while a run is in flight or a prompt is
	// unresolved.
	IsStreaming bool `json:"isStreaming"`
	// MessageCount is the number of messages in the runtime context.
	MessageCount int `json:"messageCount"`
	// AutoCompactionEnabled is the scenario's compaction.enabled, as
	// set_auto_compaction changed it.
	AutoCompactionEnabled bool `json:"autoCompactionEnabled"`
	// SessionID is the session's id.
	SessionID string `json:"sessionId"`
	// AutoRetryEnabled is the retry settings' enabled, as set_auto_retry
	// changed it.
	AutoRetryEnabled bool `json:"autoRetryEnabled"`
	// IsRetrying is true while a retry chain is open.
	IsRetrying bool `json:"isRetrying"`
	// RetryAttempt is the open chain's attempt (0: none).
	RetryAttempt int `json:"retryAttempt"`
	// RetryState is the retry machine's state, e.g. "backoff".
	RetryState policy.State `json:"retryState"`
	// NextRetryAt is when the current backoff wait ends (virtual ms);
	// null outside a wait.
	NextRetryAt float64 `json:"nextRetryAt"`
	// HasNextRetryAt is false outside a wait: nextRetryAt is null.
	HasNextRetryAt bool `json:"-"`
	// Profile is the retry settings' profile.
	Profile string `json:"profile"`
	// Model is the model in use; left out when its ID is empty.
	Model ModelInfo `json:"model,omitzero"`
	// ThinkingLevel is the original's session option ("off" in the
	// simulator).
	ThinkingLevel string `json:"thinkingLevel"`
	// IsCompacting is true while an overflow compaction's continue is due.
	IsCompacting bool `json:"isCompacting"`
	// SteeringMode is the original's session option ("one-at-a-time" in
	// the simulator).
	SteeringMode string `json:"steeringMode"`
	// FollowUpMode is the original's session option ("one-at-a-time" in
	// the simulator).
	FollowUpMode string `json:"followUpMode"`
	// InterruptMode is the original's session option ("immediate" in the
	// simulator).
	InterruptMode string `json:"interruptMode"`
	// QueuedMessageCount is the number of steering and follow-up messages
	// waiting (0: the simulator queues none).
	QueuedMessageCount int `json:"queuedMessageCount"`
}

// ModelInfo is get_state's model: its id, its provider and the provider's
// API.
type ModelInfo struct {
	// ID is the model's id, e.g. "claude-sonnet-4-5".
	ID string `json:"id"`
	// Provider is the model's provider, e.g. "anthropic".
	Provider string `json:"provider"`
	// API is the provider's API, e.g. "anthropic-messages".
	API string `json:"api"`
}

// IsZero reports whether no model is known (its ID is empty): get_state
// then leaves the model out.
func (m ModelInfo) IsZero() bool { return m.ID == "" }

// stateField is one field of SessionState (or of an object in it) as the
// writer, the reader and the schema use it, read once from the
// declaration's tags.
type stateField struct {
	name     string       // the JSON key
	goName   string       // the Go field's name
	index    int          // and its index in its struct
	typ      reflect.Type // and its type
	kind     Kind         // KindString, KindNumber, KindBool, KindObject or KindNumberOrNull
	float    bool         // a number with a fraction (else an integer)
	has      int          // KindNumberOrNull: the index of its HasX field
	omitZero bool         // left out when zero
	fields   []stateField // KindObject: the object's
}

// zeroer is a type saying when it is zero (omitzero), as encoding/json
// asks it.
type zeroer interface{ IsZero() bool }

// statePlan is SessionState's fields, in line order.
var statePlan = planOf(reflect.TypeFor[SessionState]())

// stateWire is what the reader decodes get_state's data into: the plan's
// fields with their keys, a pointer where null or absence is possible.
var stateWire = wireOf(statePlan)

// planOf reads the fields of the struct type t from their tags. A
// declaration outside the conventions SessionState's doc states is a
// programming error, found when the package loads.
func planOf(t reflect.Type) []stateField {
	var fs []stateField
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("json")
		if !ok {
			panic(fmt.Sprintf("trace: %s.%s has no json tag", t.Name(), sf.Name))
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			if len(fs) == 0 || sf.Type.Kind() != reflect.Bool || "Has"+t.Field(i-1).Name != sf.Name {
				panic(fmt.Sprintf("trace: %s.%s is not the HasX of the field before it", t.Name(), sf.Name))
			}
			fs[len(fs)-1].kind, fs[len(fs)-1].has = KindNumberOrNull, i
			continue
		}
		f := stateField{name: name, goName: sf.Name, index: i, typ: sf.Type, has: -1, omitZero: opts == "omitzero"}
		switch sf.Type.Kind() {
		case reflect.Bool:
			f.kind = KindBool
		case reflect.Int:
			f.kind = KindNumber
		case reflect.Float64:
			f.kind, f.float = KindNumber, true
		case reflect.String:
			f.kind = KindString
		case reflect.Struct:
			f.kind, f.fields = KindObject, planOf(sf.Type)
		default:
			panic(fmt.Sprintf("trace: %s.%s has a type get_state does not write: %s", t.Name(), sf.Name, sf.Type))
		}
		if f.omitZero && (!sf.Type.Implements(reflect.TypeFor[zeroer]()) || len(fs) == 0) {
			panic(fmt.Sprintf("trace: %s.%s is omitzero without an IsZero method, or first", t.Name(), sf.Name))
		}
		fs = append(fs, f)
	}
	return fs
}

// wireOf builds the reader's struct for fs: a field of the same kind
// with the same key, a pointer where the field may be null or left out.
func wireOf(fs []stateField) reflect.Type {
	sfs := make([]reflect.StructField, len(fs))
	for i := range fs {
		f := &fs[i]
		var t reflect.Type
		switch f.kind {
		case KindBool:
			t = reflect.TypeFor[bool]()
		case KindNumber:
			t = reflect.TypeFor[int]()
			if f.float {
				t = reflect.TypeFor[float64]()
			}
		case KindNumberOrNull:
			t = reflect.TypeFor[*float64]()
		case KindString:
			t = reflect.TypeFor[string]()
		case KindObject:
			t = reflect.PointerTo(wireOf(f.fields))
		}
		if f.omitZero && t.Kind() != reflect.Pointer {
			t = reflect.PointerTo(t)
		}
		sfs[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: t, Tag: reflect.StructTag(`json:` + strconv.Quote(f.name))}
	}
	return reflect.StructOf(sfs)
}

// decodeState reads get_state's data object. A wrong type is an
// *json.UnmarshalTypeError whose Field is the key's path in data.
func decodeState(data []byte) (SessionState, error) {
	var s SessionState
	w := reflect.New(stateWire)
	if err := json.Unmarshal(data, w.Interface()); err != nil {
		return s, err
	}
	fromWire(reflect.ValueOf(&s).Elem(), w.Elem(), statePlan)
	return s, nil
}

// fromWire copies the reader's struct w into v.
func fromWire(v, w reflect.Value, fs []stateField) {
	for i := range fs {
		f := &fs[i]
		src, dst := w.Field(i), v.Field(f.index)
		if src.Kind() == reflect.Pointer {
			if src.IsNil() {
				continue
			}
			src = src.Elem()
			if f.kind == KindNumberOrNull {
				v.Field(f.has).SetBool(true)
			}
		}
		if f.kind == KindObject {
			fromWire(dst, src, f.fields)
			continue
		}
		dst.Set(src.Convert(dst.Type()))
	}
}

// isNull reports whether a raw JSON value is null.
func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

// stateSchema is the schema's fields of get_state's data (a response's
// "data"), from the plan.
func stateSchema(fs []stateField, path []stateField) []Field {
	out := make([]Field, len(fs))
	for i := range fs {
		p := append(append([]stateField(nil), path...), fs[i])
		out[i] = Field{Name: fs[i].name, Kind: fs[i].kind, get: stateGetter(p)}
		if fs[i].kind == KindObject {
			out[i].Fields = stateSchema(fs[i].fields, p)
		}
	}
	return out
}

// stateGetter gets the field at path (from SessionState down) of a
// response's state: present when the response has a state, the object
// fields on the way are present and the field is not left out.
func stateGetter(path []stateField) func(r *Record) (value, bool) {
	return func(r *Record) (value, bool) {
		if !r.Response.HasState {
			return value{}, false
		}
		v := reflect.ValueOf(&r.Response.State).Elem()
		var f *stateField
		for i := range path {
			f = &path[i]
			parent := v
			v = v.Field(f.index)
			if f.omitZero && v.Addr().Interface().(zeroer).IsZero() {
				return value{}, false
			}
			if f.kind == KindNumberOrNull {
				return value{n: v.Float(), null: !parent.Field(f.has).Bool()}, true
			}
		}
		switch f.kind {
		case KindBool:
			return value{b: v.Bool()}, true
		case KindString:
			return value{s: v.String()}, true
		case KindNumber:
			if f.float {
				return value{n: v.Float()}, true
			}
			return value{n: float64(v.Int())}, true
		}
		return value{}, true // an object
	}
}
