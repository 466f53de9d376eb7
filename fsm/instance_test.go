package fsm_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	looplab "github.com/looplab/fsm"

	"github.com/ohmypi/retryfsm/fsm"
)

func TestFire(t *testing.T) {
	tests := []struct {
		name      string
		start     string
		event     string
		wantEdge  fsm.Edge
		wantState string
		wantErr   error // sentinel; nil means success
		wantAs    any   // pointer to a looplab error type errors.As must find
		wantMsg   []string
	}{
		{name: "transition", start: "closed", event: "open",
			wantEdge: fsm.Edge{"closed", "open", "open"}, wantState: "open"},
		{name: "second source of a multi-source transition", start: "locked", event: "kick",
			wantEdge: fsm.Edge{"locked", "kick", "broken"}, wantState: "broken"},
		{name: "declared self-loop is not an error", start: "closed", event: "knock",
			wantEdge: fsm.Edge{"closed", "knock", "closed"}, wantState: "closed"},
		{name: "event not allowed in state", start: "open", event: "lock",
			wantState: "open", wantErr: fsm.ErrEventNotAllowed, wantAs: &looplab.InvalidEventError{},
			wantMsg: []string{`fsm "door"`, `"lock"`, `state "open"`, "allowed: close"}},
		{name: "nothing allowed in a sink", start: "broken", event: "close",
			wantState: "broken", wantErr: fsm.ErrEventNotAllowed, wantAs: &looplab.InvalidEventError{},
			wantMsg: []string{`"close"`, `state "broken"`, "allowed: none"}},
		{name: "undeclared event", start: "closed", event: "fly",
			wantState: "closed", wantErr: fsm.ErrUnknownEvent, wantAs: &looplab.UnknownEventError{},
			wantMsg: []string{"unknown event", `"fly"`, `state "closed"`, "allowed: kick, knock, lock, open"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := fsm.MustNew(doorDef()).NewInstance()
			if err := inst.SetState(tt.start); err != nil {
				t.Fatal(err)
			}
			var observed []fsm.Edge
			inst.OnTransition(func(e fsm.Edge) { observed = append(observed, e) })

			edge, err := inst.Fire(tt.event)

			if got := inst.Current(); got != tt.wantState {
				t.Errorf("Current() = %q; want %q", got, tt.wantState)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Fire(%q) error = %v", tt.event, err)
				}
				if edge != tt.wantEdge {
					t.Errorf("Fire(%q) = %v; want %v", tt.event, edge, tt.wantEdge)
				}
				if h := inst.History(); !slices.Equal(h, []fsm.Edge{tt.wantEdge}) {
					t.Errorf("History() = %v; want [%v]", h, tt.wantEdge)
				}
				if !slices.Equal(observed, []fsm.Edge{tt.wantEdge}) {
					t.Errorf("OnTransition saw %v; want [%v]", observed, tt.wantEdge)
				}
				return
			}
			if err == nil {
				t.Fatalf("Fire(%q) = %v, nil; want an error", tt.event, edge)
			}
			if edge != (fsm.Edge{}) {
				t.Errorf("Fire(%q) returned edge %v with its error; want the zero Edge", tt.event, edge)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantErr)
			}
			if !errors.As(err, tt.wantAs) {
				t.Errorf("errors.As(%v, %T) = false", err, tt.wantAs)
			}
			var fe *fsm.FireError
			if !errors.As(err, &fe) || fe.State != tt.start || fe.Event != tt.event {
				t.Errorf("errors.As(*FireError) = %+v; want State %q, Event %q", fe, tt.start, tt.event)
			}
			for _, sub := range tt.wantMsg {
				if !strings.Contains(err.Error(), sub) {
					t.Errorf("error %q does not contain %q", err, sub)
				}
			}
			if h := inst.History(); len(h) != 0 {
				t.Errorf("History() = %v after a failed Fire; want empty", h)
			}
			if len(observed) != 0 {
				t.Errorf("OnTransition saw %v after a failed Fire", observed)
			}
		})
	}
}

// looplab's transition function is left pending by a cancelled context, after
// which every Event fails; Fire never passes one, so a failure must not stick.
func TestFireKeepsWorkingAfterErrors(t *testing.T) {
	inst := fsm.MustNew(doorDef()).NewInstance()
	steps := []struct {
		event string
		ok    bool
	}{
		{"unlock", false}, {"fly", false}, {"knock", true}, {"knock", true}, {"lock", true},
		{"lock", false}, {"unlock", true}, {"open", true}, {"open", false}, {"close", true},
	}
	for i, s := range steps {
		_, err := inst.Fire(s.event)
		if (err == nil) != s.ok {
			t.Fatalf("step %d Fire(%q) error = %v; want ok=%v", i, s.event, err, s.ok)
		}
	}
	if got := inst.Current(); got != "closed" {
		t.Errorf("Current() = %q; want closed", got)
	}
	if got := len(inst.History()); got != 6 {
		t.Errorf("len(History()) = %d; want 6 successful fires", got)
	}
}

func TestCallbacksRunInLooplabOrder(t *testing.T) {
	var (
		log  []string
		inst *fsm.Instance
	)
	// rec logs the hook, the edge, and what the Instance reports from inside
	// the callback (which must not deadlock).
	rec := func(hook string) fsm.Callback {
		return func(e fsm.Edge) {
			log = append(log, fmt.Sprintf("%s %v cur=%s can_close=%v hist=%d",
				hook, e, inst.Current(), inst.Can("close"), len(inst.History())))
		}
	}
	def := doorDef()
	keys := []string{
		"before_open", "before_event", "leave_closed", "leave_state",
		"enter_open", "enter_state", "after_open", "after_event",
		"before_knock", "after_knock", "enter_closed", "leave_open",
	}
	def.Callbacks = map[string]fsm.Callback{}
	for _, k := range keys {
		def.Callbacks[k] = rec(k)
	}
	inst = fsm.MustNew(def).NewInstance()
	inst.OnTransition(func(e fsm.Edge) { log = append(log, fmt.Sprintf("observer %v hist=%d", e, len(inst.History()))) })

	tests := []struct {
		event string
		want  []string
	}{
		{"open", []string{
			"before_open closed --open--> open cur=closed can_close=false hist=0",
			"before_event closed --open--> open cur=closed can_close=false hist=0",
			"leave_closed closed --open--> open cur=closed can_close=false hist=0",
			"leave_state closed --open--> open cur=closed can_close=false hist=0",
			"enter_open closed --open--> open cur=open can_close=true hist=0",
			"enter_state closed --open--> open cur=open can_close=true hist=0",
			"after_open closed --open--> open cur=open can_close=true hist=0",
			"after_event closed --open--> open cur=open can_close=true hist=0",
			"observer closed --open--> open hist=1",
		}},
		{"close", []string{
			"before_event open --close--> closed cur=open can_close=true hist=1",
			"leave_open open --close--> closed cur=open can_close=true hist=1",
			"leave_state open --close--> closed cur=open can_close=true hist=1",
			"enter_closed open --close--> closed cur=closed can_close=false hist=1",
			"enter_state open --close--> closed cur=closed can_close=false hist=1",
			"after_event open --close--> closed cur=closed can_close=false hist=1",
			"observer open --close--> closed hist=2",
		}},
		// A self-loop runs only the before_ and after_ hooks.
		{"knock", []string{
			"before_knock closed --knock--> closed cur=closed can_close=false hist=2",
			"before_event closed --knock--> closed cur=closed can_close=false hist=2",
			"after_knock closed --knock--> closed cur=closed can_close=false hist=2",
			"after_event closed --knock--> closed cur=closed can_close=false hist=2",
			"observer closed --knock--> closed hist=3",
		}},
		// A refused event runs nothing.
		{"unlock", nil},
	}
	for _, tt := range tests {
		log = nil
		done := make(chan struct{})
		go func() {
			defer close(done)
			inst.Fire(tt.event)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Fire(%q) deadlocked: a callback calling Current/Can/History must not block", tt.event)
		}
		if !slices.Equal(log, tt.want) {
			t.Errorf("Fire(%q) ran:\n%s\nwant:\n%s", tt.event, strings.Join(log, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

func TestBareCallbackKeys(t *testing.T) {
	var log []string
	def := fsm.Definition{
		Initial: "idle", States: []string{"idle", "busy"},
		Transitions: []fsm.Transition{
			{Event: "start", Src: []string{"idle"}, Dst: "busy"},
			{Event: "stop", Src: []string{"busy"}, Dst: "idle"},
		},
		Callbacks: map[string]fsm.Callback{
			"busy":  func(e fsm.Edge) { log = append(log, "enter busy via "+e.Event) },
			"start": func(e fsm.Edge) { log = append(log, "after start to "+e.To) },
		},
	}
	inst := fsm.MustNew(def).NewInstance()
	for _, ev := range []string{"start", "stop"} {
		if _, err := inst.Fire(ev); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"enter busy via start", "after start to busy"}; !slices.Equal(log, want) {
		t.Errorf("bare keys ran %q; want %q", log, want)
	}
}

func TestHistoryAndOnTransition(t *testing.T) {
	inst := fsm.MustNew(doorDef()).NewInstance()
	var first, second []fsm.Edge
	inst.OnTransition(func(e fsm.Edge) { first = append(first, e) })
	inst.OnTransition(nil) // ignored
	events := []string{"knock", "lock", "open", "unlock", "open", "close", "kick"}
	want := []fsm.Edge{
		{"closed", "knock", "closed"},
		{"closed", "lock", "locked"},
		{"locked", "unlock", "closed"},
		{"closed", "open", "open"},
		{"open", "close", "closed"},
		{"closed", "kick", "broken"},
	}
	for i, ev := range events {
		if i == 3 {
			// Registered mid-way: sees only later edges.
			inst.OnTransition(func(e fsm.Edge) { second = append(second, e) })
		}
		inst.Fire(ev) // "open" from locked fails and must leave no trace
	}
	if got := inst.History(); !slices.Equal(got, want) {
		t.Errorf("History() =\n%v; want\n%v", got, want)
	}
	if !slices.Equal(first, want) {
		t.Errorf("first observer saw\n%v; want\n%v", first, want)
	}
	if !slices.Equal(second, want[2:]) {
		t.Errorf("late observer saw\n%v; want\n%v", second, want[2:])
	}

	h := inst.History()
	h[0].Event = "mutated"
	if inst.History()[0].Event != "knock" {
		t.Error("History() returned the internal slice, not a copy")
	}

	inst.ResetHistory()
	if got := inst.History(); len(got) != 0 {
		t.Errorf("History() after ResetHistory = %v; want empty", got)
	}
	if err := inst.SetState("open"); err != nil {
		t.Fatal(err)
	}
	if got := inst.History(); len(got) != 0 {
		t.Errorf("SetState recorded %v; want nothing", got)
	}
	inst.Fire("close")
	if got, want := inst.History(), []fsm.Edge{{"open", "close", "closed"}}; !slices.Equal(got, want) {
		t.Errorf("History() after reset and one Fire = %v; want %v", got, want)
	}
	if got := len(first); got != len(want)+1 {
		t.Errorf("observer saw %d edges; want %d (ResetHistory must not unregister it)", got, len(want)+1)
	}
}

func TestSetStateCanAvailable(t *testing.T) {
	m := fsm.MustNew(doorDef())
	inst := m.NewInstance()
	if inst.Machine() != m || inst.Current() != "closed" {
		t.Fatalf("new instance: Machine()=%p Current()=%q; want %p, closed", inst.Machine(), inst.Current(), m)
	}
	tests := []struct {
		state     string
		wantErr   bool
		wantAvail []string
		can       string
		cannot    string
	}{
		{state: "locked", wantAvail: []string{"kick", "unlock"}, can: "unlock", cannot: "open"},
		{state: "closed", wantAvail: []string{"kick", "knock", "lock", "open"}, can: "knock", cannot: "close"},
		{state: "demolished", wantAvail: nil, cannot: "open"},
		{state: "ajar", wantErr: true},
		{state: "", wantErr: true},
	}
	for _, tt := range tests {
		before := inst.Current()
		err := inst.SetState(tt.state)
		if tt.wantErr {
			if !errors.Is(err, fsm.ErrUnknownState) {
				t.Errorf("SetState(%q) = %v; want ErrUnknownState", tt.state, err)
			} else if !strings.Contains(err.Error(), fmt.Sprintf("%q", tt.state)) || !strings.Contains(err.Error(), "declared states: closed, open") {
				t.Errorf("SetState(%q) error %q does not name the state and the allowed ones", tt.state, err)
			}
			if inst.Current() != before {
				t.Errorf("failed SetState(%q) moved the instance to %q", tt.state, inst.Current())
			}
			continue
		}
		if err != nil {
			t.Fatalf("SetState(%q) = %v", tt.state, err)
		}
		if inst.Current() != tt.state {
			t.Errorf("Current() = %q after SetState(%q)", inst.Current(), tt.state)
		}
		if got := inst.Available(); !slices.Equal(got, tt.wantAvail) {
			t.Errorf("Available() in %q = %v; want %v", tt.state, got, tt.wantAvail)
		}
		if tt.can != "" && !inst.Can(tt.can) {
			t.Errorf("Can(%q) in %q = false", tt.can, tt.state)
		}
		if inst.Can(tt.cannot) {
			t.Errorf("Can(%q) in %q = true", tt.cannot, tt.state)
		}
	}
}

// Several goroutines fire and read one Instance. Run with -race. Because
// Fire is serialized, the history must be one unbroken path and every
// observer must have seen it in the same order.
func TestConcurrentUse(t *testing.T) {
	inst := fsm.MustNew(fsm.Definition{
		Name: "ring", Initial: "a", States: []string{"a", "b", "c"},
		Transitions: []fsm.Transition{
			{Event: "next", Src: []string{"a"}, Dst: "b"},
			{Event: "next", Src: []string{"b"}, Dst: "c"},
			{Event: "next", Src: []string{"c"}, Dst: "a"},
			{Event: "stay", Src: []string{"a", "b", "c"}, Dst: "b"}, // a self-loop from b only
			{Event: "reset", Src: []string{"c"}, Dst: "a"},
		},
		Callbacks: map[string]fsm.Callback{"enter_state": nop, "before_event": nop},
	}).NewInstance()
	var observed []fsm.Edge // written only under Fire's serialization
	inst.OnTransition(func(e fsm.Edge) { observed = append(observed, e) })

	const firers, perFirer = 6, 300
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		succeeded int
	)
	for g := range firers {
		wg.Go(func() {
			events := []string{"next", "stay", "reset", "next", "bogus"}
			ok := 0
			for i := range perFirer {
				ev := events[(g+i)%len(events)]
				e, err := inst.Fire(ev)
				switch {
				case err == nil:
					ok++
					if e.Event != ev {
						t.Errorf("Fire(%q) returned %v", ev, e)
					}
				case errors.Is(err, fsm.ErrEventNotAllowed), errors.Is(err, fsm.ErrUnknownEvent):
				default:
					t.Errorf("Fire(%q): unexpected error %v", ev, err)
				}
			}
			mu.Lock()
			succeeded += ok
			mu.Unlock()
		})
	}
	for range 3 {
		wg.Go(func() {
			for range perFirer {
				if s := inst.Current(); !inst.Machine().HasState(s) {
					t.Errorf("Current() = %q", s)
				}
				inst.Can("next")
				inst.Available()
				inst.History()
			}
		})
	}
	wg.Go(func() {
		for range perFirer / 10 {
			inst.OnTransition(nop)
		}
	})
	wg.Wait()

	h := inst.History()
	if len(h) != succeeded {
		t.Fatalf("len(History()) = %d; want %d successful fires", len(h), succeeded)
	}
	if succeeded == 0 {
		t.Fatal("no Fire succeeded; the test exercises nothing")
	}
	if h[0].From != "a" {
		t.Errorf("history starts at %v; want from a", h[0])
	}
	for k := 1; k < len(h); k++ {
		if h[k].From != h[k-1].To {
			t.Fatalf("history broken at %d: %v then %v", k, h[k-1], h[k])
		}
	}
	if inst.Current() != h[len(h)-1].To {
		t.Errorf("Current() = %q; last edge %v", inst.Current(), h[len(h)-1])
	}
	if !slices.Equal(observed, h) {
		t.Error("observer order differs from History()")
	}
}
