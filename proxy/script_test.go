package proxy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
)

// TestLoadScriptReader: a proxy script is read by the one strict reader
// (internal/strictfile), as scenario and fleet files are: what the
// script's own YAML walk let through or reported misleadingly is an
// error at its file:line:col, with its key path and what is allowed; and
// valid JSON the YAML library cannot read is read as JSON.
func TestLoadScriptReader(t *testing.T) {
	write := proxytest.Files(t)
	for _, tc := range []struct{ name, text, want string }{
		// An alias: once "faults[1]: not a mapping", "text: not a string".
		{"p.yaml", "faults:\n  - &f {kind: drop}\n  - *f\n", `p.yaml:3:5: YAML aliases (*f) are not supported; write the value out`},
		{"p.yaml", "repeat: &b true\ntext: *b\n", `p.yaml:2:7: YAML aliases (*b) are not supported; write the value out`},
		// A merge key: once an unknown key "<<".
		{"p.yaml", "faults:\n  - {kind: drop, <<: {events: 1}}\n", `p.yaml:2:18: faults[0]: YAML merge keys (<<) are not supported; write the keys out`},
		// A second document: once ignored.
		{"p.yaml", "text: a\n---\ntext: b\n", `p.yaml:3:1: more than one YAML document in the file (only one proxy script per file is allowed)`},
		// A JSON script's trailing comma: once read as YAML, accepted.
		{"p.json", "{\"faults\": [\n  {\"kind\": \"drop\"},\n]}\n", `p.json:2:19: invalid JSON: trailing comma before ']' (JSON allows none)`},
		{"p.json", "{\"faults\": [{\"kind\": \"drop\",}]}\n", `p.json:1:28: invalid JSON: trailing comma before '}' (JSON allows none)`},
		// A duplicate key in a fault: once the last one won.
		{"p.yaml", "faults:\n  - {kind: drop, kind: latency}\n", `p.yaml:2:18: faults[0].kind: duplicate key "kind" (first at line 2:6)`},
		{"p.json", "{\"repeat\": true,\n \"repeat\": false}\n", `p.json:2:2: repeat: duplicate key "repeat" (first at line 1:2)`},
		// Wrong types say what they got, at the key path.
		{"p.yaml", "faults:\n  - {kind: drop}\n  - {kind: latency, delayMs: 1.5}\n", `p.yaml:3:30: faults[1].delayMs: expected an integer from 0 to 3600000, got float 1.5`},
		{"p.json", "{\"faults\": [{\"kind\": \"drop\"},\n  {\"kind\": \"latency\", \"delayMs\": \"250\"}]}\n", `p.json:2:34: faults[1].delayMs: expected an integer from 0 to 3600000, got string "250"`},
		{"p.yaml", "faults:\n  - {kind: drop, request: null}\n", `p.yaml:2:27: faults[0].request: expected an integer from 0 to 1099511627776, got null`},
		{"p.yaml", "faults:\n  - [drop]\n", `p.yaml:2:5: faults[0]: expected a mapping with keys request, kind, delayMs, events, chunk, got a list`},
		{"p.yaml", "text: [a]\n", `p.yaml:1:7: text: expected a string, got a list`},
		{"p.yaml", "1: x\n", `p.yaml:1:1: keys must be strings, got integer 1 (allowed keys: scenario, fleet, repeat, text, faults)`},
		// An empty script: once "the scenario keys".
		{"p.yaml", "", `p.yaml: empty file: expected a mapping with the proxy script keys`},
	} {
		path := write(tc.name, tc.text)
		dir := filepath.Dir(path) + string(filepath.Separator)
		_, err := proxy.LoadScript(path)
		if got := ""; err == nil || strings.TrimPrefix(err.Error(), dir) != tc.want {
			if err != nil {
				got = strings.TrimPrefix(err.Error(), dir)
			}
			t.Errorf("%s %q: error %q, want %q", tc.name, tc.text, got, tc.want)
		}
	}
	// Valid JSON the YAML library rejects (\/, a surrogate pair) is read
	// as JSON: once an error about a scenario file's keys.
	s, err := proxy.LoadScript(write("q.yaml", `{"text": "a\/b \ud83d\ude00", "faults": [{"kind": "drop"}]}`))
	if err != nil || s.Text != "a/b \U0001F600" || len(s.Faults) != 1 || s.Faults[0].Kind != proxy.FaultDrop {
		t.Errorf("JSON script: %+v, %v", s, err)
	}
}

// TestScriptTurnsCarriable: a turn's headers and status must be what HTTP
// can carry and what leaves the proxy's framing whole: a control character
// in a value, a framing header, a status with no body for an error turn
// are refused in the script at the turn's file:line:col, and by New.
func TestScriptTurnsCarriable(t *testing.T) {
	write := proxytest.Files(t)
	const turn = "turns:\n  - {stopReason: stop}\n  - {stopReason: error, errorMessage: x, "
	for _, tc := range []struct{ text, want string }{
		{turn + "headers: {x-a: \"a\\r\\nx-b: c\"}}\n", `s.yaml:3:5: turns[1].headers.x-a: "a\r\nx-b: c" has a control character (allowed: printable text and tabs)`},
		{turn + "headers: {content-length: \"5\"}}\n", `s.yaml:3:5: turns[1].headers.content-length: the proxy frames the answer itself (not allowed: content-length, transfer-encoding, connection)`},
		{turn + "headers: {transfer-encoding: chunked}}\n", `s.yaml:3:5: turns[1].headers.transfer-encoding: the proxy frames the answer itself`},
		{turn + "status: 204}\n", `s.yaml:3:5: turns[1].status: 204 has no body (allowed for an error turn: 200 to 599 but 204 and 304)`},
		{turn + "status: 101}\n", `s.yaml:3:5: turns[1].status: 101 has no body (allowed for an error turn: 200 to 599 but 204 and 304)`},
		{turn + "status: 304}\n", `s.yaml:3:5: turns[1].status: 304 has no body`},
	} {
		path := write("s.yaml", tc.text)
		dir := filepath.Dir(path) + string(filepath.Separator)
		s, err := proxy.LoadScript(path)
		if err == nil || !strings.Contains(strings.TrimPrefix(err.Error(), dir), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
		// the same script built in Go is refused by New
		if err == nil {
			if _, err := proxy.New(proxy.Options{Script: s}); err == nil {
				t.Errorf("%q: New accepted it", tc.text)
			}
		}
	}
	// through a proxy script's scenario key too
	write("s.yaml", turn+"status: 204}\n")
	if _, err := proxy.LoadScript(write("p.yaml", "scenario: s.yaml\n")); err == nil || !strings.Contains(err.Error(), "s.yaml:3:5: turns[1].status: 204 has no body") {
		t.Errorf("a proxy script's scenario: %v", err)
	}
}
