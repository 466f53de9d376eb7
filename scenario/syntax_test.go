package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scnSyntaxCases are syntax errors, each with the whole error line wanted:
// the position of the offending character (or, for something left open,
// of where it opens) and the library's problem, with a hint where one
// helps.
var scnSyntaxCases = []struct {
	name, file, in, want string
}{
	// JSON files are read as JSON: line:col of the offending character.
	{"json trailing comma in object", "t.json", `{"a":1,}`,
		`t.json:1:7: invalid JSON: trailing comma before '}' (JSON allows none)`},
	{"json trailing comma in array", "t.json", `[1,]`,
		`t.json:1:3: invalid JSON: trailing comma before ']' (JSON allows none)`},
	{"json trailing comma on its own line", "t.json", "{\n \"turns\": [{\"stopReason\": \"stop\"},\n ],\n}",
		`t.json:2:34: invalid JSON: trailing comma before ']' (JSON allows none)`},
	{"json missing colon", "t.json", `{"a" 1}`,
		`t.json:1:6: invalid JSON: invalid character '1' after object key`},
	{"json missing comma", "t.json", "{\"name\": \"x\"\n \"prompt\": \"y\"}",
		`t.json:2:2: invalid JSON: invalid character '"' after object key:value pair`},
	{"json unquoted key", "t.json", "{name: 1}",
		`t.json:1:2: invalid JSON: invalid character 'n' looking for beginning of object key string`},
	{"json unclosed object", "t.json", "{\"turns\": [\n  {\"stopReason\": \"stop\"}\n",
		`t.json:1:11: invalid JSON: unexpected end of file (the '[' here is not closed)`},
	{"json unclosed string", "t.json", "{\"name\": \"abc\n",
		`t.json:1:14: invalid JSON: invalid character '\n' in string literal (is the string's closing quote missing?)`},
	{"json unclosed string at the end", "t.json", `{"name": "abc`,
		`t.json:1:10: invalid JSON: unexpected end of file (the string that starts here is not closed)`},
	{"json second value", "t.json", "{}\n{}",
		`t.json:2:1: invalid JSON: invalid character '{' after top-level value`},
	{"json is not YAML", "t.json", "name: x\n",
		`t.json:1:2: invalid JSON: invalid character 'a' in literal null (expecting 'u')`},
	{"json with a tab", "t.json", "{\n\t\"name\": \"x\",\n\t\"prompt\": @\n}",
		`t.json:3:12: invalid JSON: invalid character '@' looking for beginning of value`},
	{"json empty", "t.json", " \n", `t.json: empty file: expected a mapping with the scenario keys`},
}

func TestScenarioSyntaxErrors(t *testing.T) {
	for _, tc := range scnSyntaxCases {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := Parse(tc.file, []byte(tc.in))
			if err == nil {
				t.Fatalf("no error; got %+v", sc)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *Error", err, err)
			}
			if err.Error() != tc.want {
				t.Errorf("got  %s\nwant %s", err, tc.want)
			}
			if strings.HasSuffix(tc.file, ".json") && strings.Contains(err.Error(), "YAML") {
				t.Errorf("JSON file error mentions YAML: %v", err)
			}
		})
	}
}

// TestScenarioJSONByExtension checks that a .json file is read as JSON
// whatever it holds, and a file with another name as YAML.
func TestScenarioJSONByExtension(t *testing.T) {
	dir := t.TempDir()
	in := []byte(`{"name": "x", "turns": [{"stopReason": "stop"},]}`) // a trailing comma: valid YAML, not JSON
	for name, want := range map[string]string{
		"t.json": `:1:47: invalid JSON: trailing comma before ']' (JSON allows none)`,
		"t.yaml": "",
		"t.yml":  "",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := Load(path)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case want == "" && len(sc.Turns) != 1:
			t.Errorf("%s: turns %+v", name, sc.Turns)
		case want != "" && (err == nil || err.Error() != path+want):
			t.Errorf("%s: error %v, want %s", name, err, path+want)
		}
	}
	// Parse goes by the name too; JSON errors keep their field paths.
	_, err := Parse("t.json", []byte("{\"turns\": [{\"stopReason\": \"stop\",\n  \"stopReasn\": \"x\"}]}"))
	if want := `t.json:2:3: turns[0].stopReasn: unknown key "stopReasn" (allowed: stopReason, errorMessage, usage, switchModel, durationMs)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	_, err = Parse("t.json", []byte("{\"prompt\": \"a\",\n \"prompt\": \"b\"}"))
	if want := `t.json:2:2: prompt: duplicate key "prompt" (first at line 1:2)`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	// A byte order mark is skipped.
	if _, err := Parse("t.json", []byte("\ufeff{\"name\": \"x\"}")); err != nil {
		t.Errorf("JSON with a byte order mark: %v", err)
	}
}

// TestScenarioParsePanicIsNotAnError checks that Parse turns only its own
// bail-out into an error: a bug (here a nil dereference) still panics.
func TestScenarioParsePanicIsNotAnError(t *testing.T) {
	defer func() { scnTestHook = nil }()
	scnTestHook = func() {
		var p *Scenario
		_ = p.Name // nil dereference
	}
	var err error
	r := func() (r any) {
		defer func() { r = recover() }()
		_, err = Parse("t.yaml", []byte("name: x\n"))
		return nil
	}()
	if r == nil {
		t.Fatalf("no panic; error %v", err)
	}
	if re, ok := r.(error); !ok || !strings.Contains(re.Error(), "nil pointer dereference") {
		t.Errorf("panic %v, want the nil dereference", r)
	}
}
