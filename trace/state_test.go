package trace_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/trace"
)

// FillState sets every field of the struct v to a value of its own (a
// number from n on, strings with a character to escape, every HasX true),
// so that a field one place forgets or swaps shows.
func fillState(v reflect.Value, n *int) {
	for i := 0; i < v.NumField(); i++ {
		*n++
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(int64(*n))
		case reflect.Float64:
			f.SetFloat(float64(*n) + 0.5)
		case reflect.String:
			f.SetString("v\"" + strings.Repeat("x", *n))
		case reflect.Struct:
			fillState(f, n)
		}
	}
}

// stateKeys are the keys SessionState's declaration gives its fields, in
// order (json:"-" fields have none): read from the tags here, not through
// the package's plan.
func stateKeys(t reflect.Type) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// TestStateFollowsTheDeclaration: the writer, the reader and the schema
// all follow SessionState's one declaration: every field it declares, set
// to a value of its own, is written under its key in the declaration's
// order, read back, in the schema under the same key, and matched; a
// null and a field left out read back as zero.
func TestStateFollowsTheDeclaration(t *testing.T) {
	var full trace.SessionState
	n := 0
	fillState(reflect.ValueOf(&full).Elem(), &n)
	empty := trace.SessionState{RetryState: "idle"} // nextRetryAt null, model left out
	for _, st := range []trace.SessionState{full, empty} {
		r := trace.Record{Type: trace.Response, Response: trace.ResponseRecord{Command: "get_state", Success: true, HasState: true, State: st}}
		line := trace.AppendJSON(nil, &r)
		_, vals := keysInOrder(t, line)
		data := trace.AppendState(nil, &st)
		if string(vals["data"]) != string(data) {
			t.Fatalf("the response's data %s, AppendState %s", vals["data"], data)
		}
		keys, dvals := keysInOrder(t, data)
		want := stateKeys(reflect.TypeFor[trace.SessionState]())
		if st.Model.IsZero() {
			want = slicesDelete(want, "model")
		}
		if strings.Join(keys, ",") != strings.Join(want, ",") {
			t.Errorf("get_state keys %v, the declaration's %v", keys, want)
		}
		if st == full {
			if mk, _ := keysInOrder(t, dvals["model"]); strings.Join(mk, ",") != strings.Join(stateKeys(reflect.TypeFor[trace.ModelInfo]()), ",") {
				t.Errorf("model keys %v", mk)
			}
		}
		got, err := trace.Decode(line)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Response.State, st) {
			t.Errorf("read back\n %+v\nwritten\n %+v", got.Response.State, st)
		}
		f, ok := trace.Lookup(trace.Response, "data")
		if !ok {
			t.Fatal("no data field in the schema")
		}
		if names := trace.Names(f.Fields); names != strings.Join(stateKeys(reflect.TypeFor[trace.SessionState]()), ", ") {
			t.Errorf("schema's data fields %s", names)
		}
		var whole map[string]any
		if err := json.Unmarshal(data, &whole); err != nil {
			t.Fatal(err)
		}
		if !trace.Match(&r, map[string]any{"data": whole}) {
			t.Errorf("%s does not match its own data", line)
		}
		for k, v := range whole {
			if js, _ := trace.FieldJSON(&r, "data"); !strings.Contains(js, `"`+k+`":`) {
				t.Errorf("FieldJSON(data) = %s lacks %s", js, k)
			}
			other := map[string]any{k: "no such value"}
			if _, isString := v.(string); isString {
				other[k] = 0.25
			}
			if trace.Match(&r, map[string]any{"data": other}) {
				t.Errorf("data.%s matches %v", k, other[k])
			}
		}
	}
}

func slicesDelete(s []string, x string) []string {
	var out []string
	for _, v := range s {
		if v != x {
			out = append(out, v)
		}
	}
	return out
}

// TestDecodeStateTypeErrors: a get_state field of the wrong type is
// reported by its key path and what it takes.
func TestDecodeStateTypeErrors(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{`{"nextRetryAt":"soon"}`, `field "data.nextRetryAt": expected a number, got a JSON string`},
		{`{"messageCount":1.5}`, `field "data.messageCount": expected an integer, got a JSON number`},
		{`{"model":{"id":3}}`, `field "data.model.id": expected a string, got a JSON number`},
		{`{"model":"m"}`, `field "data.model": expected an object, got a JSON string`},
	} {
		_, err := trace.Decode([]byte(`{"t":0,"type":"response","command":"get_state","success":true,"data":` + tc.data + `}`))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.data, err, tc.want)
		}
	}
	r, err := trace.Decode([]byte(`{"t":0,"type":"response","command":"get_state","success":true,"data":null}`))
	if err != nil || r.Response.HasState {
		t.Errorf("data null: %+v, %v", r.Response, err)
	}
}
