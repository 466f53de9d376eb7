package strictfile

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestReadPositions: YAML and JSON files read by one reader give the same
// key paths and errors, each at its line and column.
func TestReadPositions(t *testing.T) {
	keys := []string{"a", "b"}
	for _, c := range []struct{ name, src, want string }{
		{"x.yaml", "a: 1\nb: x\n", `x.yaml:2:4: b: expected an integer from 0 to 9, got string "x"`},
		{"x.json", "{\"a\": 1,\n \"b\": \"x\"}", `x.json:2:7: b: expected an integer from 0 to 9, got string "x"`},
		{"x.yaml", "a: 1\nzzz: 2\n", `x.yaml:2:1: zzz: unknown key "zzz" (allowed: a, b)`},
		{"x.yaml", "a: 1\na: 2\n", `x.yaml:2:1: a: duplicate key "a" (first at line 1:1)`},
		{"x.yaml", "a: 10\n", `x.yaml:1:4: a: 10 is out of range (allowed: an integer from 0 to 9)`},
		{"x.yaml", "a: 99999999999999999999\n", `x.yaml:1:4: a: 99999999999999999999 is out of range (allowed: an integer from 0 to 9)`},
		{"x.yaml", "", `x.yaml: empty file: expected a mapping with the test keys`},
		{"x.yaml", "- 1\n", `x.yaml:1:1: the top level must be a mapping with the test keys, got a list`},
		{"x.json", "{\"a\": 1,\n \"b\": \"\xff\"}", `x.json:2:8: invalid JSON: invalid UTF-8 (found byte 0xff)`},
		{"x.yaml", "a: [1\n", `x.yaml:1:4: invalid YAML: did not find expected ',' or ']' (the '[' here is not closed)`},
		// text after the first document's mapping, not a new document: an
		// error, not the mapping alone (what yaml.Unmarshal would read)
		{"x.yaml", " a: 1\nb: x\n", `x.yaml:2:1: invalid YAML: did not find expected <document start>`},
	} {
		r := &Reader{File: c.name, What: "test", At: map[string]*yaml.Node{}}
		err := r.Read(func() {
			root := r.Decode([]byte(c.src))
			r.Mapping(root, "", keys, func(e Entry) { r.Integer(e.V, e.Key, 0, 9, "an integer from 0 to 9") })
		})
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %q: error %v, want %q", c.name, c.src, err, c.want)
		}
	}
}

// TestReadAt: At records the value of every key path read, and PosOf
// places a path under them at its nearest parent.
func TestReadAt(t *testing.T) {
	r := &Reader{File: "f", What: "test", At: map[string]*yaml.Node{}}
	if err := r.Read(func() {
		root := r.Decode([]byte("a:\n  b: 1\n"))
		r.Mapping(root, "", []string{"a"}, func(e Entry) { r.Mapping(e.V, "a", []string{"b"}, nil) })
	}); err != nil {
		t.Fatal(err)
	}
	if got := r.PosOf("a.b").String(); got != "f:2:6" {
		t.Errorf("a.b at %s", got)
	}
	if got := r.PosOf("a.c[2]").String(); got != "f:2:3" {
		t.Errorf("a.c[2] at %s (want a's value)", got)
	}
}

// TestReadPanics: Read turns the reader's own failure into an *Error and
// lets any other panic go on.
func TestReadPanics(t *testing.T) {
	r := &Reader{File: "f"}
	base := errors.New("base")
	err := r.Read(func() { r.FailErr(Pos{File: "f", Line: 1}, strings.Repeat("k.", 200), "bad", base) })
	if err == nil || !errors.Is(err, base) || len(err.Field) > MaxPath+len("…") {
		t.Errorf("error %v", err)
	}
	defer func() {
		if v := recover(); v != "bug" {
			t.Errorf("recovered %v, want the bug's panic", v)
		}
	}()
	r.Read(func() { panic("bug") })
}

// TestReadOptions: Top words the error for a top level that is not a
// mapping, and UnknownAtMapping gives an unknown key's error its
// mapping's path; without them, the default wording and the key's path.
func TestReadOptions(t *testing.T) {
	read := func(r *Reader, src string) string {
		err := r.Read(func() {
			root := r.Decode([]byte(src))
			r.Mapping(root, "", []string{"alpha"}, func(e Entry) { r.Mapping(e.V, e.Key, []string{"beta"}, nil) })
		})
		if err == nil {
			return ""
		}
		return err.Error()
	}
	for _, c := range []struct {
		r         Reader
		src, want string
	}{
		{Reader{File: "f", What: "test"}, "- 1\n", `f:1:1: the top level must be a mapping with the test keys, got a list`},
		{Reader{File: "f", What: "test", Top: "a test is a mapping (keys alpha)"}, "- 1\n", `f:1:1: a test is a mapping (keys alpha), got a list`},
		{Reader{File: "f", What: "test"}, "alpha: {zzz: 1}\n", `f:1:9: alpha.zzz: unknown key "zzz" (allowed: beta)`},
		{Reader{File: "f", What: "test", UnknownAtMapping: true}, "alpha: {zzz: 1}\n", `f:1:9: alpha: unknown key "zzz" (allowed: beta)`},
		{Reader{File: "f", What: "test", UnknownAtMapping: true}, "zzz: 1\n", `f:1:1: unknown key "zzz" (allowed: alpha)`},
		{Reader{File: "f", What: "test", UnknownAtMapping: true}, "alpha: {beta: 1, beta: 2}\n", `f:1:18: alpha.beta: duplicate key "beta" (first at line 1:9)`},
	} {
		if got := read(&c.r, c.src); got != c.want {
			t.Errorf("%+v %q: error %q, want %q", c.r, c.src, got, c.want)
		}
	}
}
