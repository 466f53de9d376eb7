package session_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// TestCommandTable: the command table is one row per name and per event
// kind, found by either; a command carries at most one argument of each
// kind its event has a field for; the shell's events are no commands.
func TestCommandTable(t *testing.T) {
	// The protocol's commands, in the order its errors list them: a new
	// command comes last, and this is the one list of them to change.
	if got, want := strings.Join(session.CommandNames(), ", "),
		"prompt, abort, abort_retry, set_auto_retry, set_retry_settings, set_auto_compaction, get_state"; got != want {
		t.Errorf("commands %s, want %s", got, want)
	}
	names := map[string]bool{}
	for _, c := range session.Commands() {
		if c.Name == "" || names[c.Name] {
			t.Errorf("command %q: empty or declared twice", c.Name)
		}
		names[c.Name] = true
		if got, ok := session.CommandByName(c.Name); !ok || got.Kind != c.Kind {
			t.Errorf("CommandByName(%q) = %v, %v; want kind %v", c.Name, got.Kind, ok, c.Kind)
		}
		if got, ok := session.CommandOf(c.Kind); !ok || got.Name != c.Name {
			t.Errorf("CommandOf(%v) = %q, %v; want %q", c.Kind, got.Name, ok, c.Name)
		}
		kinds := map[session.ArgKind]bool{}
		for _, a := range c.Args {
			if kinds[a.Kind] {
				t.Errorf("%s: two arguments of kind %v (its event has one field for it)", c.Name, a.Kind)
			}
			kinds[a.Kind] = true
			if a.Kind.Want() == "" {
				t.Errorf("%s.%s: kind %d says nothing of its values", c.Name, a.Name, a.Kind)
			}
		}
	}
	for _, k := range []session.EventKind{session.Reply, session.TimerFired, session.Settle, 0, 200} {
		if c, ok := session.CommandOf(k); ok {
			t.Errorf("CommandOf(%d) = %q: not a command", k, c.Name)
		}
	}
	if _, ok := session.CommandByName("advance"); ok {
		t.Error(`CommandByName("advance"): the RPC server's own command is no session command`)
	}
	want := "prompt {message} (streamingBehavior and images accepted; queueing is not simulated)"
	if c, _ := session.CommandByName("prompt"); c.Usage() != want {
		t.Errorf("prompt's usage = %q, want %q", c.Usage(), want)
	}
	if c, _ := session.CommandByName("set_auto_retry"); c.Usage() != "set_auto_retry {enabled}" {
		t.Errorf("set_auto_retry's usage = %q", c.Usage())
	}
}

// TestEveryCommandAnswersByItsName: each command's event, stepped on an
// idle session, is answered once by its own id and its row's name (a
// rejected set_retry_settings with the shell's error).
func TestEveryCommandAnswersByItsName(t *testing.T) {
	core := &session.Core{Variant: session.Sound}
	for _, c := range session.Commands() {
		ev := c.Event("req_" + c.Name)
		if c.Kind == session.SetRetrySettings {
			ev.Error = "refused"
		}
		_, fx := core.Step(session.Initial(), policy.DefaultPolicy(), &ev, nil)
		var answers []trace.ResponseRecord
		for _, e := range fx {
			if e.Kind == session.Answer {
				answers = append(answers, e.Record.Response)
			}
		}
		if len(answers) != 1 {
			t.Fatalf("%s: %d responses, want 1: %+v", c.Name, len(answers), answers)
		}
		r := answers[0]
		if r.Command != c.Name || r.ID != ev.ID {
			t.Errorf("%s: answered as %q id %q", c.Name, r.Command, r.ID)
		}
		if wantOK := c.Kind != session.SetRetrySettings; r.Success != wantOK || (!wantOK && r.Error != "refused") {
			t.Errorf("%s: success %v error %q", c.Name, r.Success, r.Error)
		}
		if r.HasState != (c.Kind == session.GetState) {
			t.Errorf("%s: HasState %v", c.Name, r.HasState)
		}
	}
}
