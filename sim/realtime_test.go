package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/sim"
)

func TestRealTime(t *testing.T) {
	clk := clock.NewMock()
	s := sim.NewScheduler(time.Unix(0, 0))
	rt := sim.NewRealTime(s, clk)
	defer rt.Stop()
	if rt.Wake(0) != nil {
		t.Fatal("Wake on an empty queue should give a nil channel")
	}
	var fired []time.Duration
	record := func() { fired = append(fired, s.Elapsed()) }
	s.At(100*time.Millisecond, record)
	s.At(300*time.Millisecond, func() {
		record()
		s.In(500*time.Millisecond, record) // counted from when it ran
	})

	// Nothing due yet; the wake-up is at the first event.
	if err := rt.RunDue(); err != nil || len(fired) != 0 {
		t.Fatalf("fired %v early (%v)", fired, err)
	}
	c := rt.Wake(0)
	clk.Add(99 * time.Millisecond)
	select {
	case <-c:
		t.Fatal("woke before the event was due")
	default:
	}
	clk.Add(time.Millisecond)
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up when the event was due")
	}
	if err := rt.RunDue(); err != nil || len(fired) != 1 || fired[0] != 100*time.Millisecond {
		t.Fatalf("fired %v (%v), want [100ms]", fired, err)
	}
	// Virtual time stays at the last event, the mapping goes on.
	if s.Elapsed() != 100*time.Millisecond || rt.Now() != 100*time.Millisecond {
		t.Fatalf("Elapsed %v, Now %v", s.Elapsed(), rt.Now())
	}

	// A limit wakes earlier than the next event.
	c = rt.Wake(50 * time.Millisecond)
	clk.Add(50 * time.Millisecond)
	select {
	case <-c:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up at the limit")
	}

	// The event at 300 ms is noticed 400 ms late: what it schedules counts
	// from when it ran, so the 500 ms wait is not shortened.
	clk.Add(600 * time.Millisecond) // wall 750 ms
	if err := rt.RunDue(); err != nil || len(fired) != 2 || fired[1] != 300*time.Millisecond {
		t.Fatalf("fired %v (%v)", fired, err)
	}
	if rt.Now() != 300*time.Millisecond {
		t.Fatalf("Now after a late event = %v, want 300ms", rt.Now())
	}
	clk.Add(499 * time.Millisecond)
	if err := rt.RunDue(); err != nil || len(fired) != 2 {
		t.Fatalf("fired %v before its wait was over", fired)
	}
	clk.Add(time.Millisecond)
	if err := rt.RunDue(); err != nil || len(fired) != 3 || fired[2] != 800*time.Millisecond {
		t.Fatalf("fired %v (%v)", fired, err)
	}

	// Do runs a command now; Jump skips a wait.
	var at time.Duration
	if err := rt.Do(func() { at = s.Elapsed() }); err != nil || at != 800*time.Millisecond {
		t.Fatalf("Do ran at %v (%v)", at, err)
	}
	s.In(time.Hour, record)
	rt.Jump(800*time.Millisecond + time.Hour)
	if err := rt.RunDue(); err != nil || len(fired) != 4 || fired[3] != 800*time.Millisecond+time.Hour {
		t.Fatalf("after Jump fired %v (%v)", fired, err)
	}
	rt.Jump(0) // backwards: nothing
	if rt.Now() != 800*time.Millisecond+time.Hour {
		t.Fatalf("Now after a backward Jump = %v", rt.Now())
	}
}

// steppingClock is a mock clock that moves forward by jump on the n-th
// call of Since (counting from 1), to make a timer come due between two
// steps of the code under test.
type steppingClock struct {
	*clock.Mock
	calls, n int
	jump     time.Duration
}

func (c *steppingClock) Since(t time.Time) time.Duration {
	c.calls++
	if c.calls == c.n {
		c.Mock.Add(c.jump)
	}
	return c.Mock.Since(t)
}

// TestRealTimeDoRunsTheCommandWhenATimerComesDueMeanwhile is issue 8's
// first defect: a timer that came due between Do's first RunDue and the
// queueing of the command moved the mapping back, the command was no
// longer due, and Do returned without running it (it ran inside the next
// command, whose response then carried its effects).
func TestRealTimeDoRunsTheCommandWhenATimerComesDueMeanwhile(t *testing.T) {
	for n, want := range []string{ // the jump at each of Do's reads of the clock
		1: "timer command", // in Do's first RunDue
		2: "timer command", // when the command is queued: the timer came due first
		3: "command timer", // after: the command was received first
	} {
		if n == 0 {
			continue
		}
		clk := &steppingClock{Mock: clock.NewMock()}
		s := sim.NewScheduler(time.Unix(0, 0))
		rt := sim.NewRealTime(s, clk)
		var order []string
		s.At(100*time.Millisecond, func() { order = append(order, "timer") })
		clk.Add(99 * time.Millisecond)
		clk.calls, clk.n, clk.jump = 0, n, 51*time.Millisecond
		if err := rt.Do(func() { order = append(order, "command") }); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(order, " "); got != want {
			t.Fatalf("jump at clock read %d: ran [%s] when Do returned, want [%s]", n, got, want)
		}
		if s.Pending() != 0 {
			t.Fatalf("jump at clock read %d: %d events left queued", n, s.Pending())
		}
		rt.Stop()
	}
}
