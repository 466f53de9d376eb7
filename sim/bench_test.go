package sim

import (
	"context"
	"testing"
	"time"

	looplab "github.com/looplab/fsm"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
)

func benchScenario(errors int, maxRetries int) *scenario.Scenario {
	sc, err := scenario.Parse("bench", []byte(`{}`))
	if err != nil {
		panic(err)
	}
	sc.Settings.MaxRetries = maxRetries
	for i := 0; i < errors; i++ {
		sc.Turns = append(sc.Turns, scenario.Turn{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error"})
	}
	sc.Turns = append(sc.Turns, scenario.Turn{StopReason: policy.StopReasonStop})
	return sc
}

func benchSession(b *testing.B, sc *scenario.Scenario, want string, reuse bool) {
	benchSessionOpt(b, sc, want, reuse, Options{})
}

func benchSessionOpt(b *testing.B, sc *scenario.Scenario, want string, reuse bool, opt Options) {
	b.ReportAllocs()
	var virtual time.Duration
	s, err := NewSession(sc, opt)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if reuse {
			s.Reset()
		} else if s, err = NewSession(sc, opt); err != nil {
			b.Fatal(err)
		}
		f, err := s.Run()
		if err != nil || string(f.State) != want || f.IsRetrying || len(f.UnresolvedPrompts) != 0 {
			b.Fatalf("final %+v, %v", f, err)
		}
		virtual += f.At
	}
	b.ReportMetric(virtual.Seconds()/b.Elapsed().Seconds(), "virtual-s/s")
}

// BenchmarkChain: a whole simulated session, three retryable errors, then
// success (14 s of virtual backoff).
// The session is reset between iterations, so this is the cost of one chain.
func BenchmarkChain(b *testing.B) { benchSession(b, benchScenario(3, 3), "idle", true) }

// BenchmarkChainNoTrace is BenchmarkChain with the JSON trace off: the
// session core and the scheduler alone.
func BenchmarkChainNoTrace(b *testing.B) {
	benchSessionOpt(b, benchScenario(3, 3), "idle", true, Options{NoJSON: true})
}

// BenchmarkChainNewSession is BenchmarkChain with a new Session (scheduler,
// Controller, trace buffer) built for every chain.
func BenchmarkChainNewSession(b *testing.B) { benchSession(b, benchScenario(3, 3), "idle", false) }

// BenchmarkExhaustion: four retryable errors with maxRetries 3.
func BenchmarkExhaustion(b *testing.B) { benchSession(b, benchScenario(4, 3), "exhausted", true) }

// BenchmarkBareLooplabChain is the baseline: the bare looplab/fsm
// transitions of one default chain (retry, elapse x3, succeed), with
// callbacks, no clock, no policy.
func BenchmarkBareLooplabChain(b *testing.B) {
	b.ReportAllocs()
	n := 0
	cb := looplab.Callbacks{"enter_state": func(context.Context, *looplab.Event) { n++ }}
	events := looplab.Events{
		{Name: "retry", Src: []string{"idle", "continuing"}, Dst: "backoff"},
		{Name: "elapse", Src: []string{"backoff"}, Dst: "continuing"},
		{Name: "succeed", Src: []string{"continuing"}, Dst: "idle"},
	}
	m := looplab.NewFSM("idle", events, cb)
	ctx := context.Background()
	for b.Loop() {
		for _, e := range []string{"retry", "elapse", "retry", "elapse", "retry", "elapse", "succeed"} {
			if err := m.Event(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestResetRunAllocatesNothing: a reused session runs a whole chain, its
// JSON trace included, without allocating (Reset reseeds the jitter
// source in place rather than making a new one), with and without jitter.
func TestResetRunAllocatesNothing(t *testing.T) {
	for _, jitter := range []bool{false, true} {
		sc := benchScenario(3, 3)
		if jitter {
			sc.Settings.Jitter = policy.Jitter{Mode: policy.JitterFull, Ratio: 1}
		}
		s, err := NewSession(sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(); err != nil { // first run: buffers grow
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(50, func() {
			s.Reset()
			if _, err := s.Run(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("jitter %v: %.1f allocations per reset and run, want 0", jitter, allocs)
		}
	}
}
