package sim

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSchedulerOrderAndClock: same-instant events fire in scheduling order,
// virtual time jumps, Sleep runs the queue, and deadlines behave as
// context.WithDeadline.
func TestSchedulerOrderAndClock(t *testing.T) {
	epoch := time.UnixMilli(1771200000000).UTC()
	s := NewScheduler(epoch)
	var got []string
	s.At(2*time.Second, func() { got = append(got, "a") })
	s.AfterFunc(2*time.Second, func() { got = append(got, "b") })
	s.At(time.Second, func() { got = append(got, "c") })
	s.Sleep(-time.Millisecond) // must not run anything
	if len(got) != 0 || s.Elapsed() != 0 {
		t.Fatalf("negative Sleep ran %v, now %v", got, s.Elapsed())
	}
	for s.Step() {
	}
	if want := []string{"c", "a", "b"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("order %v, want %v", got, want)
	}
	if s.Elapsed() != 2*time.Second || !s.Now().Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("now %v / %v", s.Elapsed(), s.Now())
	}

	ctx, cancel := s.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(epoch.Add(3*time.Second)) {
		t.Fatalf("deadline %v %v", d, ok)
	}
	s.Sleep(999 * time.Millisecond)
	if ctx.Err() != nil {
		t.Fatal("done before its deadline")
	}
	s.Sleep(time.Millisecond)
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("err %v, want DeadlineExceeded", ctx.Err())
	}

	ctx2, cancel2 := s.WithTimeout(context.Background(), time.Hour)
	cancel2()
	if !errors.Is(ctx2.Err(), context.Canceled) {
		t.Fatalf("err %v, want Canceled", ctx2.Err())
	}
}
