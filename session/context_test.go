package session

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestContextMatchesAFullList: the constant-space summary the session's
// rules read agrees with the full list of messages it stands for, under
// any sequence the session can produce (an assistant message follows a
// user message or a tool result; only a trailing assistant message is
// dropped).
func TestContextMatchesAFullList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c Context
		var list []Role
		var asst []Message // the assistant messages of list, in order
		at := time.Duration(0)
		check := func() {
			if c.Count != len(list) {
				t.Fatalf("count %d, list %v", c.Count, list)
			}
			last := RoleNone
			if len(list) > 0 {
				last = list[len(list)-1]
			}
			if c.Last != last {
				t.Fatalf("last %v, list %v", c.Last, list)
			}
			if c.HasAssistant != (len(asst) > 0) || (len(asst) > 0 && c.Assistant != asst[len(asst)-1]) {
				t.Fatalf("last assistant %+v (%v), list %v", c.Assistant, c.HasAssistant, asst)
			}
			// What push and dropLastAssistant rely on: no stale message
			// behind a false flag.
			if (!c.HasAssistant && c.Assistant != Message{}) || (!c.HasPrevious && c.Previous != Message{}) {
				t.Fatalf("a message without its flag: %+v", c)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"user": func(t *rapid.T) {
				c.add(RoleUser, Message{})
				list = append(list, RoleUser)
			},
			"assistant": func(t *rapid.T) {
				if c.Last != RoleUser && c.Last != RoleToolResult {
					t.Skip("an assistant message follows a user message or a tool result")
				}
				at += time.Millisecond
				m := Message{At: at}
				c.add(RoleAssistant, m)
				list, asst = append(list, RoleAssistant), append(asst, m)
			},
			"toolResult": func(t *rapid.T) {
				if c.Last != RoleAssistant {
					t.Skip("a tool result follows an assistant message")
				}
				c.add(RoleToolResult, Message{})
				list = append(list, RoleToolResult)
			},
			"drop": func(t *rapid.T) {
				dropped := c.dropLastAssistant()
				if want := len(list) > 0 && list[len(list)-1] == RoleAssistant; dropped != want {
					t.Fatalf("dropLastAssistant = %v on %v", dropped, list)
				}
				if dropped {
					list, asst = list[:len(list)-1], asst[:len(asst)-1]
				}
			},
			"": func(t *rapid.T) { check() },
		})
	})
}
