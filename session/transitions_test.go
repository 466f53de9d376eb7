package session_test

import (
	"testing"

	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// TestCoreTransitionsLeavesOutOthers: a core with Transitions writes the
// transition records of the rules in the set and nothing else differs: a
// chain of two 503s then a success, stepped by a core writing every rule's
// transitions and by one keeping only the success's rule, gives the same
// state and effects but for the transitions left out.
func TestCoreTransitionsLeavesOutOthers(t *testing.T) {
	all := newCoreRun(t, session.Sound, false)
	some := newCoreRun(t, session.Sound, false)
	some.core.Transitions = []bool{} // filled with the success's rule below
	var kept, left int
	step := func(ms int, ev func(c *coreRun) session.Event) {
		t.Helper()
		all.step(ms, ev(all))
		some.step(ms, ev(some))
		if all.s != some.s {
			t.Fatalf("at %d ms: states differ:\n%+v\n%+v", ms, all.s, some.s)
		}
		j := 0
		for _, e := range all.fx {
			if e.Kind == session.Emit && e.Record.Type == trace.Transition {
				in := e.Record.Edge.Rule < len(some.core.Transitions) && some.core.Transitions[e.Record.Edge.Rule]
				if !in {
					left++
					continue
				}
				kept++
			}
			if j >= len(some.fx) {
				t.Fatalf("at %d ms: effect %+v missing", ms, e.Kind)
			}
			g := some.fx[j]
			j++
			if !sameEffect(&g, &e) {
				t.Fatalf("at %d ms: effect %d is %v %v, want %v %v", ms, j-1, g.Kind, g.Record.Type, e.Kind, e.Record.Type)
			}
		}
		if j != len(some.fx) {
			t.Fatalf("at %d ms: %d effects, want %d", ms, len(some.fx), j)
		}
	}
	call := func(c *coreRun) session.Event {
		return session.Event{Kind: session.Reply, Call: c.call, Reply: unavailable}
	}
	step(0, func(*coreRun) session.Event { return session.Event{Kind: session.Prompt, ID: "p"} })
	step(10, call)
	step(2010, func(c *coreRun) session.Event {
		return session.Event{Kind: session.TimerFired, Timer: c.armed[session.BackoffTimer]}
	})
	step(2020, call)
	step(6020, func(c *coreRun) session.Event {
		return session.Event{Kind: session.TimerFired, Timer: c.armed[session.BackoffTimer]}
	})
	// The success: find its rule in the full core's records and keep only it.
	all.step(6030, session.Event{Kind: session.Reply, Call: all.call, Reply: stop})
	success := -1
	for _, e := range all.fx {
		if e.Kind == session.Emit && e.Record.Type == trace.Transition {
			success = e.Record.Edge.Rule
		}
	}
	if success < 0 {
		t.Fatal("the success wrote no transition")
	}
	some.core.Transitions = make([]bool, success+1)
	some.core.Transitions[success] = true
	some.step(6030, session.Event{Kind: session.Reply, Call: some.call, Reply: stop})
	n := 0
	for _, e := range some.fx {
		if e.Kind == session.Emit && e.Record.Type == trace.Transition {
			if e.Record.Edge.Rule != success {
				t.Errorf("transition of rule %d written, want only %d", e.Record.Edge.Rule, success)
			}
			n++
		}
	}
	if left < 4 || kept != 0 || n != 1 {
		t.Errorf("before the success %d transitions left out, %d kept; the success wrote %d; want >= 4, 0, 1", left, kept, n)
	}
}

// sameEffect compares the fields that a and b's kind reads (the others
// are unspecified: a buffer's slots are reused).
func sameEffect(a, b *session.Effect) bool {
	switch {
	case a.Kind != b.Kind:
		return false
	case a.Kind == session.Arm || a.Kind == session.Cancel:
		return a.Timer == b.Timer
	case a.Kind == session.Call:
		return a.Call == b.Call
	case a.Kind == session.Emit || a.Kind == session.Answer || a.Kind == session.Resolve:
		return a.Record.Type == b.Record.Type && a.Record.T == b.Record.T &&
			(a.Record.Type != trace.Transition || a.Record.Edge == b.Record.Edge)
	}
	return true
}
