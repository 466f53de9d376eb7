package rpc_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/session"
)

// TestServeDuplicateKeysAtEveryDepth: a name twice in any object of a
// command line is refused, naming it and where it is, and the command does
// not run (issue 19: set_retry_settings with settings {baseDelayMs: 1,
// baseDelayMs: 70000} was accepted, the last value winning).
func TestServeDuplicateKeysAtEveryDepth(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"id":"a","type":"set_retry_settings","settings":{"baseDelayMs":1,"baseDelayMs":70000}}`,
			`{"id":"a","type":"response","command":"set_retry_settings","success":false,"error":"Failed to parse command: duplicate key \"baseDelayMs\" in settings (each key may appear once)"}`},
		{`{"id":"b","type":"set_retry_settings","settings":{"jitter":{"mode":"full","mode":"none"}}}`,
			`{"id":"b","type":"response","command":"set_retry_settings","success":false,"error":"Failed to parse command: duplicate key \"mode\" in settings.jitter (each key may appear once)"}`},
		{`{"id":"c","type":"prompt","message":"hi","images":[{"type":"image","type":"x"}]}`,
			`{"id":"c","type":"response","command":"prompt","success":false,"error":"Failed to parse command: duplicate key \"type\" in images.0 (each key may appear once)"}`},
	} {
		// The settings are unchanged: get_state still reports the default's.
		got := serveVirtual(t, "{}", c.line+"\n"+`{"id":"s","type":"get_state"}`+"\n")
		if len(got) != 2 || got[0] != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.line, got, c.want)
		}
	}
	got := serveVirtual(t, "{}", `{"id":"a","type":"set_retry_settings","settings":{"baseDelayMs":1,"baseDelayMs":70000}}`+"\n"+
		`{"id":"p","type":"prompt","message":"x"}`+"\n")
	if len(got) < 2 || !strings.Contains(got[1], `"command":"prompt","success":true`) {
		t.Fatalf("%q", got)
	}
}

// TestServeDidYouMean: an unknown command, or a field of a command that a
// field of the line nearly names, gets a "did you mean" (issue 19); a name
// far from every command gets none.
func TestServeDidYouMean(t *testing.T) {
	commands := commandList
	for _, c := range []struct{ line, want string }{
		{`{"id":"a","type":"get_stat"}`, `"error":"Unknown command: get_stat (commands: ` + commands + `); did you mean get_state?"}`},
		{`{"id":"a","type":"set_auto"}`, `"error":"Unknown command: set_auto (commands: ` + commands + `); did you mean set_auto_compaction or set_auto_retry?"}`},
		{`{"id":"a","type":"reboot"}`, `"error":"Unknown command: reboot (commands: ` + commands + `)"}`},
		{`{"id":"a","type":"prompt","mesage":"hi"}`, `"error":"prompt: missing \"message\" (a string); \"mesage\" is not a field of prompt; did you mean message?"}`},
		{`{"id":"a","type":"set_auto_retry","enable":true}`, `"error":"set_auto_retry: missing \"enabled\" (true or false); \"enable\" is not a field of set_auto_retry; did you mean enabled?"}`},
		{`{"id":"a","type":"advance","msec":5}`, `"error":"advance: missing \"ms\" (an integer from 0 to 1000000000000); \"msec\" is not a field of advance; did you mean ms?"}`},
		{`{"id":"a","typ":"abort"}`, `"error":"missing \"type\" (the command: one of ` + commands + `); \"typ\" is not a field; did you mean type?"}`},
	} {
		got := serveVirtual(t, "{}", c.line+"\n")
		if len(got) != 1 || !strings.HasSuffix(got[0], c.want) {
			t.Errorf("%s:\n got %q\nwant …%s", c.line, got, c.want)
		}
	}
}

// TestCommandsHelp: the help lists every command of session's table, with
// its fields, in the order the errors do, then the server's own advance.
func TestCommandsHelp(t *testing.T) {
	var usages []string
	for _, c := range session.Commands() {
		usages = append(usages, c.Usage())
	}
	want := strings.Join(usages, ", ") + ", and with --virtual advance {ms}"
	got := rpc.CommandsHelp()
	if got != want {
		t.Errorf("help\n got %s\nwant %s", got, want)
	}
	// Today's commands, as they were (new ones come after get_state).
	if prefix := "prompt {message} (streamingBehavior and images accepted; queueing is not simulated), abort, abort_retry, " +
		"set_auto_retry {enabled}, set_retry_settings {settings}, set_auto_compaction {enabled}, get_state"; !strings.HasPrefix(got, prefix) {
		t.Errorf("help\n got %s\nwant it to begin %s", got, prefix)
	}
}

// commandList is the commands' list in errors: session's, then advance.
var commandList = strings.Join(append(session.CommandNames(), "advance"), ", ")
