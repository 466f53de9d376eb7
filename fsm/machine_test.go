package fsm_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/fsm"
)

func TestNewRejectsBadDefinitions(t *testing.T) {
	ab := func(transitions ...fsm.Transition) fsm.Definition {
		return fsm.Definition{Name: "m", Initial: "a", States: []string{"a", "b"}, Transitions: transitions}
	}
	aToB := fsm.Transition{Event: "go", Src: []string{"a"}, Dst: "b"}
	tests := []struct {
		name      string
		def       fsm.Definition
		wantErr   error
		wantField string
		wantName  string
		wantMsg   []string // substrings of err.Error()
	}{
		{
			name:    "empty state name",
			def:     fsm.Definition{Initial: "a", States: []string{"a", ""}},
			wantErr: fsm.ErrEmptyName, wantField: "states[1]", wantName: "",
			wantMsg: []string{"states[1]", "non-empty"},
		},
		{
			name:    "duplicate state",
			def:     fsm.Definition{Initial: "a", States: []string{"a", "b", "a"}},
			wantErr: fsm.ErrDuplicateState, wantField: "states[2]", wantName: "a",
			wantMsg: []string{`"a"`, "states[0]"},
		},
		{
			name:    "initial not declared",
			def:     fsm.Definition{Name: "m", Initial: "c", States: []string{"a", "b"}},
			wantErr: fsm.ErrUndeclaredState, wantField: "initial", wantName: "c",
			wantMsg: []string{`fsm "m"`, `"c"`, "declared states: a, b"},
		},
		{
			name:    "initial empty",
			def:     fsm.Definition{States: []string{"a"}},
			wantErr: fsm.ErrUndeclaredState, wantField: "initial", wantName: "",
			wantMsg: []string{"initial", "declared states: a"},
		},
		{
			name:    "no states at all",
			def:     fsm.Definition{Initial: "a"},
			wantErr: fsm.ErrUndeclaredState, wantField: "initial", wantName: "a",
			wantMsg: []string{"declared states: none"},
		},
		{
			name:    "unknown src",
			def:     ab(fsm.Transition{Event: "go", Src: []string{"a", "x"}, Dst: "b"}),
			wantErr: fsm.ErrUndeclaredState, wantField: "transitions[0].src[1]", wantName: "x",
			wantMsg: []string{`"x"`, "declared states: a, b"},
		},
		{
			name:    "unknown dst",
			def:     ab(aToB, fsm.Transition{Event: "back", Src: []string{"b"}, Dst: "aa"}),
			wantErr: fsm.ErrUndeclaredState, wantField: "transitions[1].dst", wantName: "aa",
			wantMsg: []string{`"aa"`, "declared states: a, b"},
		},
		{
			name:    "empty event name",
			def:     ab(fsm.Transition{Src: []string{"a"}, Dst: "b"}),
			wantErr: fsm.ErrEmptyName, wantField: "transitions[0].event",
			wantMsg: []string{"non-empty event name"},
		},
		{
			name:    "no source",
			def:     ab(fsm.Transition{Event: "go", Dst: "b"}),
			wantErr: fsm.ErrNoSource, wantField: "transitions[0].src", wantName: "go",
			wantMsg: []string{"at least one"},
		},
		{
			name:    "nondeterministic",
			def:     ab(aToB, fsm.Transition{Event: "go", Src: []string{"b", "a"}, Dst: "a"}),
			wantErr: fsm.ErrNondeterministic, wantField: "transitions[1]", wantName: "go",
			wantMsg: []string{`from state "a"`, `transitions[0] already leads to "b"`},
		},
		{
			name:    "typo in enter_ key",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"enter_open": nop, "enter_lockd": nop}),
			wantErr: fsm.ErrUnknownCallback, wantField: "callbacks", wantName: "enter_lockd",
			wantMsg: []string{`"enter_lockd"`, `"lockd" is not a declared state`, "declared states: closed, open, locked"},
		},
		{
			name:    "typo in leave_ key",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"leave_clsoed": nop}),
			wantErr: fsm.ErrUnknownCallback, wantField: "callbacks", wantName: "leave_clsoed",
			wantMsg: []string{`"clsoed" is not a declared state`},
		},
		{
			name:    "typo in before_ key",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"before_unlcok": nop}),
			wantErr: fsm.ErrUnknownCallback, wantField: "callbacks", wantName: "before_unlcok",
			wantMsg: []string{`"unlcok" is not a declared event`, "declared events: close, kick, knock, lock, open, unlock"},
		},
		{
			name:    "after_ key naming a state, not an event",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"after_locked": nop}),
			wantErr: fsm.ErrUnknownCallback, wantField: "callbacks", wantName: "after_locked",
			wantMsg: []string{`"locked" is not a declared event`},
		},
		{
			name:    "empty target",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"enter_": nop}),
			wantErr: fsm.ErrUnknownCallback, wantField: "callbacks", wantName: "enter_",
		},
		{
			name:    "bare key naming nothing",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"bakoff": nop}),
			wantErr: fsm.ErrUnknownCallback, wantField: "callbacks", wantName: "bakoff",
			wantMsg: []string{"names no declared state or event", "enter_<state>", "declared events:"},
		},
		{
			name:    "bare key naming a state and an event",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"open": nop}),
			wantErr: fsm.ErrAmbiguousCallback, wantField: "callbacks", wantName: "open",
			wantMsg: []string{"both a state and an event", "enter_open or after_open"},
		},
		{
			name:    "two keys for one hook",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"enter_locked": nop, "locked": nop}),
			wantErr: fsm.ErrAmbiguousCallback, wantField: "callbacks", wantName: "locked",
			wantMsg: []string{`same hook as "enter_locked"`},
		},
		{
			name: "generic key shadowing a state named state",
			def: fsm.Definition{Initial: "state", States: []string{"state", "b"},
				Transitions: []fsm.Transition{{Event: "go", Src: []string{"state"}, Dst: "b"}},
				Callbacks:   map[string]fsm.Callback{"leave_state": nop}},
			wantErr: fsm.ErrAmbiguousCallback, wantField: "callbacks", wantName: "leave_state",
			wantMsg: []string{"generic leave_state"},
		},
		{
			name: "generic key shadowing an event named event",
			def: fsm.Definition{Initial: "a", States: []string{"a", "b"},
				Transitions: []fsm.Transition{{Event: "event", Src: []string{"a"}, Dst: "b"}},
				Callbacks:   map[string]fsm.Callback{"after_event": nop}},
			wantErr: fsm.ErrAmbiguousCallback, wantField: "callbacks", wantName: "after_event",
		},
		{
			name:    "nil callback",
			def:     withCallbacks(doorDef(), map[string]fsm.Callback{"enter_locked": nil}),
			wantErr: fsm.ErrNilCallback, wantField: "callbacks", wantName: "enter_locked",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := fsm.New(tt.def)
			if err == nil {
				t.Fatalf("New() = %v, nil; want an error wrapping %v", m, tt.wantErr)
			}
			if m != nil {
				t.Errorf("New() returned a machine with error %v", err)
			}
			if !errors.Is(err, fsm.ErrInvalidDefinition) {
				t.Errorf("errors.Is(%v, ErrInvalidDefinition) = false", err)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.wantErr)
			}
			var de *fsm.DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("errors.As(%v, *DefinitionError) = false", err)
			}
			if de.Field != tt.wantField || de.Name != tt.wantName {
				t.Errorf("Field, Name = %q, %q; want %q, %q", de.Field, de.Name, tt.wantField, tt.wantName)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.wantField) {
				t.Errorf("error %q does not name the field %q", msg, tt.wantField)
			}
			if tt.wantName != "" && !strings.Contains(msg, `"`+tt.wantName+`"`) {
				t.Errorf("error %q does not name %q", msg, tt.wantName)
			}
			for _, sub := range tt.wantMsg {
				if !strings.Contains(msg, sub) {
					t.Errorf("error %q does not contain %q", msg, sub)
				}
			}
		})
	}
}

func TestMustNewPanicsOnInvalidDefinition(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, fsm.ErrUndeclaredState) {
			t.Errorf("MustNew panicked with %v; want an error wrapping ErrUndeclaredState", r)
		}
	}()
	fsm.MustNew(fsm.Definition{Initial: "nowhere", States: []string{"a"}})
	t.Error("MustNew did not panic")
}

func TestNewAcceptsRepeatedIdenticalEdge(t *testing.T) {
	m, err := fsm.New(fsm.Definition{Initial: "a", States: []string{"a", "b"}, Transitions: []fsm.Transition{
		{Event: "go", Src: []string{"a", "a"}, Dst: "b"},
		{Event: "go", Src: []string{"a"}, Dst: "b"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.Edges(), []fsm.Edge{{"a", "go", "b"}}; !slices.Equal(got, want) {
		t.Errorf("Edges() = %v; want %v", got, want)
	}
}

func TestAccessors(t *testing.T) {
	def := doorDef()
	m := fsm.MustNew(def)
	if m.Name() != "door" || m.Initial() != "closed" {
		t.Errorf("Name, Initial = %q, %q", m.Name(), m.Initial())
	}
	wantStates := []string{"closed", "open", "locked", "broken", "demolished"}
	if got := m.States(); !slices.Equal(got, wantStates) {
		t.Errorf("States() = %v; want %v (display order)", got, wantStates)
	}
	wantEvents := []string{"close", "kick", "knock", "lock", "open", "unlock"}
	if got := m.Events(); !slices.Equal(got, wantEvents) {
		t.Errorf("Events() = %v; want %v", got, wantEvents)
	}
	wantEdges := []fsm.Edge{
		{"closed", "kick", "broken"},
		{"closed", "knock", "closed"},
		{"closed", "lock", "locked"},
		{"closed", "open", "open"},
		{"locked", "kick", "broken"},
		{"locked", "unlock", "closed"},
		{"open", "close", "closed"},
	}
	if got := m.Edges(); !slices.Equal(got, wantEdges) {
		t.Errorf("Edges() =\n%v; want\n%v", got, wantEdges)
	}
	if !m.HasState("demolished") || m.HasState("ajar") || !m.HasEvent("kick") || m.HasEvent("closed") {
		t.Error("HasState/HasEvent disagree with the definition")
	}

	// The Machine is immutable: neither the Definition it came from nor the
	// slices it hands out can change it.
	def.States[0] = "mutated"
	def.Transitions[0].Src[0] = "mutated"
	m.States()[1] = "mutated"
	m.Events()[0] = "mutated"
	m.Edges()[0].To = "mutated"
	m.Available("closed")[0] = "mutated"
	if !slices.Equal(m.States(), wantStates) || !slices.Equal(m.Events(), wantEvents) || !slices.Equal(m.Edges(), wantEdges) {
		t.Error("mutating the Definition or a returned slice changed the Machine")
	}
	if to, ok := m.Lookup("closed", "open"); !ok || to != "open" {
		t.Errorf("after mutating def, Lookup(closed, open) = %q, %v", to, ok)
	}
	if got := m.Available("closed"); got[0] != "kick" {
		t.Errorf("Available(closed)[0] = %q after mutating a returned slice", got[0])
	}
}

func TestLookup(t *testing.T) {
	m := fsm.MustNew(doorDef())
	tests := []struct {
		from, event string
		to          string
		ok          bool
	}{
		{"closed", "open", "open", true},
		{"closed", "knock", "closed", true},
		{"locked", "kick", "broken", true},
		{"closed", "kick", "broken", true},
		{"open", "lock", "", false},
		{"broken", "close", "", false},
		{"closed", "fly", "", false},
		{"nowhere", "open", "", false},
	}
	for _, tt := range tests {
		to, ok := m.Lookup(tt.from, tt.event)
		if to != tt.to || ok != tt.ok {
			t.Errorf("Lookup(%q, %q) = %q, %v; want %q, %v", tt.from, tt.event, to, ok, tt.to, tt.ok)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { m.Lookup("locked", "unlock") }); allocs != 0 {
		t.Errorf("Lookup allocates %v times; want 0", allocs)
	}
}

func TestAvailable(t *testing.T) {
	m := fsm.MustNew(doorDef())
	tests := []struct {
		from string
		want []string
	}{
		{"closed", []string{"kick", "knock", "lock", "open"}},
		{"open", []string{"close"}},
		{"locked", []string{"kick", "unlock"}},
		{"broken", nil},
		{"nowhere", nil},
	}
	for _, tt := range tests {
		if got := m.Available(tt.from); !slices.Equal(got, tt.want) {
			t.Errorf("Available(%q) = %v; want %v", tt.from, got, tt.want)
		}
	}
}

func TestReachable(t *testing.T) {
	m := fsm.MustNew(doorDef())
	tests := []struct {
		from string
		want []string
	}{
		{"closed", []string{"closed", "open", "locked", "broken"}},
		{"open", []string{"closed", "open", "locked", "broken"}},
		{"broken", []string{"broken"}},
		{"demolished", []string{"demolished"}},
		{"nowhere", nil},
	}
	for _, tt := range tests {
		if got := m.Reachable(tt.from); !slices.Equal(got, tt.want) {
			t.Errorf("Reachable(%q) = %v; want %v", tt.from, got, tt.want)
		}
	}

	// A chain a -> b -> c with d off to the side: reachability is directed.
	chain := fsm.MustNew(fsm.Definition{Initial: "a", States: []string{"d", "c", "b", "a"}, Transitions: []fsm.Transition{
		{Event: "next", Src: []string{"a", "b"}, Dst: "c"},
		{Event: "skip", Src: []string{"a"}, Dst: "b"},
		{Event: "side", Src: []string{"d"}, Dst: "a"},
	}})
	if got, want := chain.Reachable("a"), []string{"c", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("Reachable(a) = %v; want %v (display order, d excluded)", got, want)
	}
	if got, want := chain.Reachable("d"), []string{"d", "c", "b", "a"}; !slices.Equal(got, want) {
		t.Errorf("Reachable(d) = %v; want %v", got, want)
	}
}

// Every derived list and diagram must be byte-identical however Go's map
// iteration happens to run, both across calls on one Machine and across
// Machines built from the same Definition.
func TestDerivedOutputIsDeterministic(t *testing.T) {
	build := func() *fsm.Machine {
		return fsm.MustNew(withCallbacks(doorDef(), map[string]fsm.Callback{
			"enter_open": nop, "leave_closed": nop, "before_event": nop, "after_kick": nop, "locked": nop,
		}))
	}
	type snapshot struct {
		events, edges, availClosed, availLocked, reach, dot, mermaid string
	}
	take := func(m *fsm.Machine) snapshot {
		return snapshot{
			events:      strings.Join(m.Events(), ","),
			edges:       edgesString(m.Edges()),
			availClosed: strings.Join(m.Available("closed"), ","),
			availLocked: strings.Join(m.Available("locked"), ","),
			reach:       strings.Join(m.Reachable("open"), ","),
			dot:         m.DOT(),
			mermaid:     m.Mermaid(),
		}
	}
	shared := build()
	first := take(shared)
	for i := range 100 {
		if got := take(shared); got != first {
			t.Fatalf("repetition %d on one Machine differs:\n%+v\nfirst:\n%+v", i, got, first)
		}
		if got := take(build()); got != first {
			t.Fatalf("repetition %d on a new Machine differs:\n%+v\nfirst:\n%+v", i, got, first)
		}
	}
}

func edgesString(edges []fsm.Edge) string {
	parts := make([]string, len(edges))
	for i, e := range edges {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}
