package fsm_test

import (
	"github.com/ohmypi/retryfsm/fsm"
)

// doorDef is the test machine: a door with a self-loop (knock), a
// transition with two sources (kick), a sink (broken) and a state no edge
// touches (demolished). "open" is both a state and an event.
func doorDef() fsm.Definition {
	return fsm.Definition{
		Name:    "door",
		Initial: "closed",
		States:  []string{"closed", "open", "locked", "broken", "demolished"},
		Transitions: []fsm.Transition{
			{Event: "open", Src: []string{"closed"}, Dst: "open"},
			{Event: "close", Src: []string{"open"}, Dst: "closed"},
			{Event: "lock", Src: []string{"closed"}, Dst: "locked"},
			{Event: "unlock", Src: []string{"locked"}, Dst: "closed"},
			{Event: "knock", Src: []string{"closed"}, Dst: "closed"},
			{Event: "kick", Src: []string{"closed", "locked"}, Dst: "broken"},
		},
	}
}

// withCallbacks returns def with callbacks added.
func withCallbacks(def fsm.Definition, cbs map[string]fsm.Callback) fsm.Definition {
	def.Callbacks = cbs
	return def
}

func nop(fsm.Edge) {}
