package retry_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestEventJSON pins the exact JSON of both events: key order, finalError
// absent on success (and present, even empty, on failure), and strings
// escaped as JavaScript's JSON.stringify does.
func TestEventJSON(t *testing.T) {
	cases := []struct {
		name string
		e    retry.Event
		typ  string
		want string
	}{
		{"start", retry.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded_error"}, "auto_retry_start",
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}`},
		{"cancelled", retry.AutoRetryEnd{Success: false, Attempt: 1, FinalError: retry.RetryCancelled}, "auto_retry_end",
			`{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}`},
		{"success omits finalError", retry.AutoRetryEnd{Success: true, Attempt: 2, FinalError: "ignored"}, "auto_retry_end",
			`{"type":"auto_retry_end","success":true,"attempt":2}`},
		{"failure keeps an empty finalError", retry.AutoRetryEnd{Attempt: 0}, "auto_retry_end",
			`{"type":"auto_retry_end","success":false,"attempt":0,"finalError":""}`},
		{"escapes", retry.AutoRetryStart{Attempt: 2, MaxAttempts: 3, DelayMs: 4000, ErrorMessage: "a\"b\\c\n\t\x01é"}, "auto_retry_start",
			`{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"a\"b\\c\n\t\u0001é"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.e.Type() != tc.typ {
				t.Errorf("Type() = %q, want %q", tc.e.Type(), tc.typ)
			}
			got, err := json.Marshal(tc.e)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("json.Marshal = %s\n          want %s", got, tc.want)
			}
			if f := string(tc.e.AppendJSONFields([]byte(`{"t":5,`))); f != `{"t":5,`+tc.want[1:] {
				t.Errorf("AppendJSONFields = %s", f)
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil || m["type"] != tc.typ {
				t.Errorf("not valid JSON with its type: %v %v", err, m)
			}
		})
	}
}

// TestEventJSONNoHTMLEscaping: the events' own MarshalJSON writes '<', '>'
// and '&' as they are (JSON.stringify does), which json.Marshal would turn
// into \u003c...; an encoder with SetEscapeHTML(false) keeps them.
func TestEventJSONNoHTMLEscaping(t *testing.T) {
	e := retry.AutoRetryEnd{Attempt: 1, FinalError: "502 <html>Bad Gateway & co</html>"}
	want := `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"502 <html>Bad Gateway & co</html>"}`
	b, _ := e.MarshalJSON()
	if string(b) != want {
		t.Errorf("MarshalJSON = %s, want %s", b, want)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		t.Fatal(err)
	}
	if buf.String() != want+"\n" {
		t.Errorf("Encoder without HTML escaping = %s", buf.String())
	}
}

// TestEventJSONMarshal: json.Marshal(e) on a retry.Event value (no type
// assertion) writes the event's own JSON: the original's bytes, except
// that json.Marshal HTML-escapes <, > and & (the same JSON value).
func TestEventJSONMarshal(t *testing.T) {
	events := []retry.Event{
		retry.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded_error: Overloaded"},
		retry.AutoRetryEnd{Attempt: 3, FinalError: "529 overloaded_error: Overloaded"},
		retry.AutoRetryEnd{Success: true, Attempt: 1},
		retry.RetryFallback{From: "claude-sonnet-4-5", To: "claude-haiku-4-5"},
	}
	for _, e := range events {
		got, err := json.Marshal(e)
		want := e.AppendJSONFields([]byte{'{'})
		if err != nil || string(got) != string(want) {
			t.Errorf("json.Marshal(%#v) = %s, %v; want %s", e, got, err, want)
		}
	}
	// HTML characters: escaped by json.Marshal, the same value once decoded.
	e := retry.Event(retry.AutoRetryEnd{Attempt: 1, FinalError: "502 <html>Bad Gateway & co</html>"})
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ FinalError string }
	if err := json.Unmarshal(b, &v); err != nil || v.FinalError != "502 <html>Bad Gateway & co</html>" {
		t.Errorf("%s decodes to %q, %v", b, v.FinalError, err)
	}
}
