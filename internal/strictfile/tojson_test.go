package strictfile

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestAppendJSON: a file's free-form value as JSON text (numbers as
// written when that is JSON, else as YAML reads them; keys in file order)
// and as encoding/json reads it; what JSON cannot hold is an error at it.
func TestAppendJSON(t *testing.T) {
	for _, c := range []struct {
		src, text string
		value     any
	}{
		{"v: {b: 1, a: [x, null, true, 1.5e3]}", `{"b":1,"a":["x",null,true,1.5e3]}`,
			map[string]any{"a": []any{"x", nil, true, 1500.0}, "b": 1.0}},
		{"v: 0x1F", `31`, 31.0},
		{"v: 1_000", `1000`, 1000.0},
		{"v: 1.", `1.0`, 1.0},
		{"v: '1'", `"1"`, "1"},
		{"v: 12345678901234567890", `12345678901234567890`, 12345678901234567890.0},
	} {
		var text []byte
		var value any
		r := &Reader{File: "x.yaml", What: "test"}
		err := r.Read(func() {
			v := r.Decode([]byte(c.src)).Content[1]
			text, value = r.AppendJSON(nil, v, "v", 1, 3), r.JSONValue(v, "v", 1, 3)
		})
		if err != nil || string(text) != c.text || !reflect.DeepEqual(value, c.value) {
			t.Errorf("%q: %s %#v %v, want %s %#v", c.src, text, value, err, c.text, c.value)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"v: .inf", `x.yaml:1:4: v: expected a JSON value (string, finite number, boolean, null, list or mapping), got`},
		{"v: .nan", `x.yaml:1:4: v: expected a JSON value`},
		{"v: {a: 1, a: 2}", `x.yaml:1:11: v.a: duplicate key "a" (first at line 1:5)`},
		{"v: {1: x}", `x.yaml:1:5: v: keys must be strings, got`},
		{"v: [[[[1]]]]", `v[0][0][0]: value nested more than 3 levels deep`},
		{"v: !!binary aGk=", `x.yaml:1:4: v: expected a JSON value`},
	} {
		r := &Reader{File: "x.yaml", What: "test", At: map[string]*yaml.Node{}}
		err := r.Read(func() { r.JSONValue(r.Decode([]byte(c.src)).Content[1], "v", 1, 3) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}
