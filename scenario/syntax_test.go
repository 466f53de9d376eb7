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
	// Quoted strings not closed: at the opening quote, on line 1 too (the
	// library names the line where it noticed then).
	{"unclosed double quote", "t.yaml", "name: x\nprompt: \"abc\nturns: []\n",
		`t.yaml:2:9: invalid YAML: found unexpected end of stream (the string quoted with " here is not closed)`},
	{"unclosed quote on line 1", "t.yaml", "prompt: \"abc\nturns: []\n",
		`t.yaml:1:9: invalid YAML: found unexpected end of stream (the string quoted with " here is not closed)`},
	{"unclosed single quote", "t.yaml", "name: x\nprompt: 'abc\nturns: []\n",
		`t.yaml:2:9: invalid YAML: found unexpected end of stream (the string quoted with ' here is not closed)`},
	{"unclosed quote with escaped quote", "t.yaml", "name: x\nprompt: \"a\\\"b\nturns: []\n",
		`t.yaml:2:9: invalid YAML: found unexpected end of stream (the string quoted with " here is not closed)`},
	{"unclosed quote in a list", "t.yaml", "turns:\n  - stopReason: stop\n    errorMessage: \"x\n",
		`t.yaml:3:19: invalid YAML: found unexpected end of stream (the string quoted with " here is not closed)`},
	{"unclosed quote on a long line", "t.yaml", "name: x\nprompt: \"" + strings.Repeat("abc ", 300) + "\nturns: []\n",
		`t.yaml:2:9: invalid YAML: found unexpected end of stream (the string quoted with " here is not closed)`},
	{"colon at the end of a long line", "t.yaml", "name: x\nprompt: " + strings.Repeat("abc ", 300) + "a: b\n",
		`t.yaml:2:1210: invalid YAML: mapping values are not allowed in this context (quote a value that contains ": ", or check this line's indentation)`},
	{"unknown escape", "t.yaml", "name: x\nprompt: \"a\\qb\"\n",
		`t.yaml:2:11: invalid YAML: found unknown escape character`},

	// Flow mappings and lists not closed: at the opening bracket.
	{"unclosed flow mapping", "t.yaml", "name: x\nsettings: {enabled: true\nturns: []\n",
		`t.yaml:2:11: invalid YAML: did not find expected ',' or '}' (the '{' here is not closed)`},
	{"unclosed flow mapping on line 1", "t.yaml", "settings: {enabled: true\nturns: []\n",
		`t.yaml:1:11: invalid YAML: did not find expected ',' or '}' (the '{' here is not closed)`},
	{"unclosed flow list", "t.yaml", "name: x\nturns: [a, b\nprompt: x\n",
		`t.yaml:2:8: invalid YAML: did not find expected ',' or ']' (the '[' here is not closed)`},
	{"unclosed flow list at the end", "t.yaml", "turns: [\n",
		`t.yaml:1:8: invalid YAML: did not find expected node content (the '[' here is not closed)`},
	{"flow list ends after a comma", "t.yaml", "turns: [a,\n\n\n",
		`t.yaml:1:10: invalid YAML: did not find expected node content (the file ends here: is a closing bracket missing?)`},
	{"flow mapping closed by ]", "t.yaml", "turns: [\n  {stopReason: stop},\n  {stopReason: error\n]\n",
		`t.yaml:3:3: invalid YAML: did not find expected ',' or '}' (the '{' here is not closed)`},
	{"flow list closed by }", "t.yaml", "a: [1, 2]\nb: {c: [3, 4}\n",
		`t.yaml:2:8: invalid YAML: did not find expected ',' or ']' (the '[' here is not closed)`},
	{"unclosed list in second document", "t.yaml", "a: 1\n---\nb: [\n",
		`t.yaml:3:4: invalid YAML: did not find expected node content (the '[' here is not closed)`},

	// A ',' missing between flow entries: at the entry after it.
	{"missing comma in flow list", "t.yaml", "actions: [{at: 1000, do: abort} {at: 2000, do: abort}]\n",
		`t.yaml:1:33: invalid YAML: did not find expected ',' or ']' (a ',' missing between two entries of the flow list?)`},
	{"missing comma in flow mapping", "t.yaml", "actions:\n  - {\"at\": 1000 \"do\": \"abort\"}\n",
		`t.yaml:2:21: invalid YAML: did not find expected ',' or '}' (a ',' missing between two entries of the flow mapping?)`},
	{"stray closing bracket", "t.yaml", "name: x\nprompt: [a]]\n",
		`t.yaml:2:12: invalid YAML: did not find expected key`},

	// Indentation.
	{"key indented less", "t.yaml", "turns:\n  - stopReason: stop\n errorMessage: x\n",
		`t.yaml:3:2: invalid YAML: did not find expected key (check this line's indentation)`},
	{"key indented less in a mapping", "t.yaml", "name: x\nsettings:\n  enabled: true\n maxRetries: 3\n",
		`t.yaml:4:2: invalid YAML: did not find expected key (check this line's indentation)`},
	{"list item in a mapping", "t.yaml", "name: x\n- a\n",
		`t.yaml:2:1: invalid YAML: did not find expected key (check this line's indentation)`},
	{"list item indented more", "t.yaml", "turns:\n  - stopReason: stop\n   - stopReason: error\n",
		`t.yaml:3:4: invalid YAML: did not find expected '-' indicator (check this line's indentation)`},
	{"key indented more", "t.yaml", "name: x\nsettings:\n  enabled: true\n   maxRetries: 3\n",
		`t.yaml:4:14: invalid YAML: mapping values are not allowed in this context (quote a value that contains ": ", or check this line's indentation)`},
	{"key without colon", "t.yaml", "a:\n  b: 1\n  c\n",
		`t.yaml:3:3: invalid YAML: could not find expected ':'`},

	// Tabs.
	{"tab indenting a key", "t.yaml", "name: x\nsettings:\n\tenabled: true\n",
		`t.yaml:3:1: invalid YAML: found character that cannot start any token (tabs are not allowed in YAML indentation; use spaces)`},
	{"tab on line 1", "t.yaml", "\tname: x\n",
		`t.yaml:1:1: invalid YAML: found character that cannot start any token (tabs are not allowed in YAML indentation; use spaces)`},
	{"tab after spaces", "t.yaml", "settings:\n  enabled: true\n  \tmaxRetries: 3\n",
		`t.yaml:3:3: invalid YAML: found a tab character that violates indentation (tabs are not allowed in YAML indentation; use spaces)`},
	{"tab after a value", "t.yaml", "name: x\nsettings:\n  enabled: true\n\tmaxRetries: 3\n",
		`t.yaml:4:1: invalid YAML: found a tab character that violates indentation (tabs are not allowed in YAML indentation; use spaces)`},
	{"tab indenting a list", "t.yaml", "name: x\nturns:\n\t- a\n",
		`t.yaml:3:1: invalid YAML: found character that cannot start any token (tabs are not allowed in YAML indentation; use spaces)`},
	{"tab in a block scalar", "t.yaml", "prompt: |\n  a\n\tb\n",
		`t.yaml:3:1: invalid YAML: found a tab character where an indentation space is expected (tabs are not allowed in YAML indentation; use spaces)`},

	// A stray ':' or a reserved character.
	{"colon in a value", "t.yaml", "name: x\nprompt: a: b\n",
		`t.yaml:2:10: invalid YAML: mapping values are not allowed in this context (quote a value that contains ": ", or check this line's indentation)`},
	{"colon in a value on line 1", "t.yaml", "prompt: a: b\n",
		`t.yaml:1:10: invalid YAML: mapping values are not allowed in this context (quote a value that contains ": ", or check this line's indentation)`},
	{"colon on a continuation line", "t.yaml", "name: x\n  prompt: y\n",
		`t.yaml:2:9: invalid YAML: mapping values are not allowed in this context (quote a value that contains ": ", or check this line's indentation)`},
	{"at sign", "t.yaml", "name: x\nprompt: @x\n",
		"t.yaml:2:9: invalid YAML: found character that cannot start any token (@ is reserved in YAML: quote the value)"},
	{"backquote", "t.yaml", "name: x\nprompt: `x\n",
		"t.yaml:2:9: invalid YAML: found character that cannot start any token (` is reserved in YAML: quote the value)"},
	{"text after a quoted string", "t.yaml", "name: x\nprompt: \"ab\"c\n",
		`t.yaml:2:13: invalid YAML: did not find expected key`},
	{"anchor without a name", "t.yaml", "name: x\nprompt: &\n",
		`t.yaml:2:9: invalid YAML: did not find expected alphabetic or numeric character`},
	{"unknown alias", "t.yaml", "name: x\nprompt: *nope\n",
		`t.yaml:2:9: invalid YAML: unknown anchor 'nope' referenced (aliases are not supported; write the value out)`},

	// Characters YAML does not allow.
	{"not UTF-8", "t.yaml", "name: x\nprompt: \xff\n",
		`t.yaml:2:9: invalid YAML: invalid leading UTF-8 octet (found byte 0xff)`},
	{"control character", "t.yaml", "name: x\nprompt: \x01\n",
		`t.yaml:2:9: invalid YAML: control characters are not allowed (found U+0001)`},
	{"CR LF line breaks", "t.yaml", "name: x\r\nprompt: @x\r\n",
		"t.yaml:2:9: invalid YAML: found character that cannot start any token (@ is reserved in YAML: quote the value)"},

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
	if want := `t.json:2:3: turns[0].stopReasn: unknown key "stopReasn" (allowed: stopReason, errorMessage, usage, switchModel, durationMs, status, headers); did you mean stopReason?`; err == nil || err.Error() != want {
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
