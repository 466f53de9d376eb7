package sim

import (
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/trace"
)

// TestContextSummaryMatchesTheContext checks the constant-space summary the
// session's rules read (and StreamOnly keeps alone) against the full
// runtime context, after every trace line of every scenario and public
// conformance file, in both variants.
func TestContextSummaryMatchesTheContext(t *testing.T) {
	files, err := scenario.Files(filepath.Join("..", "scenarios"), filepath.Join("..", "testdata", "conformance", "public"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		sc, err := scenario.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, variant := range []string{"sound", "original"} {
			var s *Session
			s, err = NewSession(sc, Options{Variant: variant, NoJSON: true, Sink: trace.SinkFunc(func(*trace.Record) {
				checked++
				if msg := summaryMismatch(s.ctx, s.context); msg != "" {
					t.Fatalf("%s (%s) at t=%v: %s", path, variant, s.sched.Elapsed(), msg)
				}
			})})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d observations", checked)
	}
}

// summaryMismatch describes how c differs from the summary of ctx.
func summaryMismatch(c contextSummary, ctx []Message) string {
	if c.count != len(ctx) {
		return "count differs"
	}
	var last Role
	if len(ctx) > 0 {
		last = ctx[len(ctx)-1].Role
	}
	if c.last != last {
		return "last role differs"
	}
	for i := len(ctx) - 1; i >= 0; i-- {
		if ctx[i].Role == RoleAssistant {
			if !c.asst.ok || c.asst.msg != ctx[i] {
				return "last assistant message differs"
			}
			return ""
		}
	}
	if c.asst.ok {
		return "an assistant message where the context has none"
	}
	return ""
}

func TestContextSummaryDrop(t *testing.T) {
	var c contextSummary
	var ctx []Message
	step := func(m Message) {
		c.add(m)
		ctx = append(ctx, m)
	}
	drop := func() {
		if c.dropLastAssistant() {
			ctx = ctx[:len(ctx)-1]
		}
	}
	check := func(what string) {
		t.Helper()
		if msg := summaryMismatch(c, ctx); msg != "" {
			t.Fatalf("after %s: %s", what, msg)
		}
	}
	drop()
	check("a drop on an empty context")
	step(Message{Role: RoleUser})
	step(Message{Role: RoleAssistant, At: 1})
	step(Message{Role: RoleToolResult})
	step(Message{Role: RoleAssistant, At: 2})
	check("four messages")
	drop()
	check("dropping the trailing assistant")
	drop()
	check("a drop after a tool result")
	step(Message{Role: RoleAssistant, At: 3})
	drop()
	check("dropping again")
	step(Message{Role: RoleUser})
	step(Message{Role: RoleAssistant, At: 4})
	check("a new run")
}
