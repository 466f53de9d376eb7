package fsm_test

import (
	"errors"
	"fmt"

	"github.com/ohmypi/retryfsm/fsm"
)

func ExampleNew() {
	door, err := fsm.New(fsm.Definition{
		Name:    "door",
		Initial: "closed",
		States:  []string{"closed", "open", "locked"},
		Transitions: []fsm.Transition{
			{Event: "open", Src: []string{"closed"}, Dst: "open"},
			{Event: "close", Src: []string{"open"}, Dst: "closed"},
			{Event: "lock", Src: []string{"closed"}, Dst: "locked"},
			{Event: "unlock", Src: []string{"locked"}, Dst: "closed"},
			{Event: "knock", Src: []string{"closed", "locked"}, Dst: "closed"},
		},
		Callbacks: map[string]fsm.Callback{
			"enter_open": func(e fsm.Edge) { fmt.Println("creak:", e) },
		},
	})
	if err != nil {
		panic(err)
	}

	d := door.NewInstance()
	d.Fire("open")
	_, err = d.Fire("lock")
	fmt.Println(errors.Is(err, fsm.ErrEventNotAllowed), err)
	d.Fire("close")
	d.Fire("knock") // a declared self-loop is not an error
	fmt.Println(d.Current(), d.Available())
	fmt.Println(d.History())

	_, err = fsm.New(fsm.Definition{Initial: "closed", States: []string{"closed"},
		Callbacks: map[string]fsm.Callback{"enter_clsoed": func(fsm.Edge) {}}})
	fmt.Println(err)
	// Output:
	// creak: closed --open--> open
	// true fsm "door": event "lock" not allowed in state "open" (allowed: close): event lock inappropriate in current state open
	// closed [knock lock open]
	// [closed --open--> open open --close--> closed closed --knock--> closed]
	// fsm: callbacks: unknown callback key "enter_clsoed": "clsoed" is not a declared state; use enter_<state> or enter_state; declared states: closed
}

func ExampleMachine_Mermaid() {
	m := fsm.MustNew(fsm.Definition{
		Initial: "idle",
		States:  []string{"idle", "busy"},
		Transitions: []fsm.Transition{
			{Event: "start", Src: []string{"idle"}, Dst: "busy"},
			{Event: "stop", Src: []string{"busy"}, Dst: "idle"},
		},
	})
	fmt.Print(m.Mermaid())
	// Output:
	// stateDiagram-v2
	//     idle
	//     busy
	//     [*] --> idle
	//     idle --> busy: start
	//     busy --> idle: stop
}
