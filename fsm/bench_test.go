package fsm_test

import (
	"context"
	"testing"

	looplab "github.com/looplab/fsm"

	"github.com/ohmypi/retryfsm/fsm"
)

var sinkString string

func BenchmarkLookup(b *testing.B) {
	m := fsm.MustNew(doorDef())
	b.ReportAllocs()
	for b.Loop() {
		sinkString, _ = m.Lookup("locked", "unlock")
	}
}

// BenchmarkFire alternates open and close on one Instance. History grows
// with every Fire (kept in full by design), so its amortized append is
// included.
func BenchmarkFire(b *testing.B) {
	inst := fsm.MustNew(doorDef()).NewInstance()
	events := [2]string{"open", "close"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := inst.Fire(events[i&1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkFireSelfLoop measures the mapped NoTransitionError path.
func BenchmarkFireSelfLoop(b *testing.B) {
	inst := fsm.MustNew(doorDef()).NewInstance()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inst.Fire("knock"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareLooplab is the same open/close alternation on a bare
// looplab.FSM, for comparison with BenchmarkFire.
func BenchmarkBareLooplab(b *testing.B) {
	f := looplab.NewFSM("closed", looplab.Events{
		{Name: "open", Src: []string{"closed"}, Dst: "open"},
		{Name: "close", Src: []string{"open"}, Dst: "closed"},
		{Name: "lock", Src: []string{"closed"}, Dst: "locked"},
		{Name: "unlock", Src: []string{"locked"}, Dst: "closed"},
		{Name: "knock", Src: []string{"closed"}, Dst: "closed"},
		{Name: "kick", Src: []string{"closed", "locked"}, Dst: "broken"},
	}, looplab.Callbacks{})
	events := [2]string{"open", "close"}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := f.Event(ctx, events[i&1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkNewInstance(b *testing.B) {
	m := fsm.MustNew(doorDef())
	b.ReportAllocs()
	for b.Loop() {
		m.NewInstance()
	}
}
