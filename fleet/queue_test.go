package fleet

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// refQueue is the queue's order spelled out: every event, sorted by (at,
// seq) when taken.
type refQueue struct {
	evs []event
	seq uint64
}

func (q *refQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.evs = append(q.evs, e)
}

func (q *refQueue) pop() event {
	i := 0
	for j := range q.evs {
		if before(&q.evs[j], &q.evs[i]) {
			i = j
		}
	}
	e := q.evs[i]
	q.evs = slices.Delete(q.evs, i, i+1)
	return e
}

// TestQueueOrder drives the queue as the run does (events taken in order,
// new ones scheduled at or after the time of the last taken, a few at a
// given time, the others a delay after it) with delays from few distinct
// values (every one in a lane) to many (the lanes full, the rest in the
// heap), lanes emptied and taken by other delays, equal times and
// saturation at the largest time, and checks that it hands out exactly
// the events, in exactly the order, of a plain sort by (at, seq).
func TestQueueOrder(t *testing.T) {
	for _, distinct := range []int{1, 3, maxLanes, maxLanes + 1, 40, 1 << 20} {
		rng := rand.New(rand.NewPCG(uint64(distinct), 7))
		delay := func() time.Duration {
			switch rng.IntN(20) {
			case 0:
				return 0
			case 1:
				return -time.Second // clamped to 0
			case 2:
				return math.MaxInt64 // saturates
			}
			return time.Duration(rng.IntN(distinct)) * 37 * time.Millisecond
		}
		var q queue
		var ref refQueue
		now := time.Duration(0)
		id := uint64(0)
		push := func() {
			id++
			e := event{id: id, slot: int32(rng.IntN(100))}
			if rng.IntN(10) == 0 {
				e.at = now + time.Duration(rng.IntN(5))*time.Second
				q.pushAt(e)
				ref.push(e)
				return
			}
			d := delay()
			q.pushAfter(now, d, &e)
			e.at = after(now, d)
			ref.push(e)
		}
		for range 50 {
			push()
		}
		for step := 0; step < 8000 && q.len() > 0; step++ {
			if q.len() != len(ref.evs) {
				t.Fatalf("distinct %d, step %d: %d events, want %d", distinct, step, q.len(), len(ref.evs))
			}
			if p := q.peek(); p.at != slices.MinFunc(ref.evs, cmpEvents).at {
				t.Fatalf("distinct %d, step %d: peek at %v", distinct, step, p.at)
			}
			var got event
			q.pop(&got)
			want := ref.pop()
			if got != want {
				t.Fatalf("distinct %d, step %d: took %+v, want %+v", distinct, step, got, want)
			}
			now = got.at
			if now == math.MaxInt64 {
				continue
			}
			// Bursts, so that lanes grow, and quiet spells, so that
			// they empty.
			n := rng.IntN(3) // one a step on average
			switch {
			case step%1000 < 20:
				n = rng.IntN(20)
			case step%1000 < 200:
				n = rng.IntN(2)
			}
			for range n {
				if step < 6000 {
					push()
				}
			}
		}
		if q.len() != 0 {
			for q.len() > 0 {
				var got event
				q.pop(&got)
				if want := ref.pop(); got != want {
					t.Fatalf("distinct %d, draining: took %+v, want %+v", distinct, got, want)
				}
			}
		}
		if len(ref.evs) != 0 {
			t.Fatalf("distinct %d: %d events left in the reference", distinct, len(ref.evs))
		}
	}
}

func cmpEvents(a, b event) int {
	switch {
	case before(&a, &b):
		return -1
	case before(&b, &a):
		return 1
	}
	return 0
}

// TestDrawnLatencyInHeap: in the one queue, a wire call's drawn latency
// goes to the heap, not to a lane (a lane would hold it alone and be
// taken from a delay that repeats): a fleet whose only delays are drawn
// latencies takes no lane, and every call is answered.
func TestDrawnLatencyInHeap(t *testing.T) {
	c := fleetspec.Default(300)
	c.PromptErrors = fleetspec.PromptErrors{}
	lat, err := fleetspec.ParseDuration("lognormal:2s,0.5")
	if err != nil {
		t.Fatal(err)
	}
	c.Latency = lat
	c.Capacity = fleetspec.Capacity{MaxInFlight: 10_000}
	r, err := newRunner(c.Normalized(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.run(); r.err != nil {
		t.Fatal(r.err)
	}
	if r.alone || r.q.nl != 0 {
		t.Errorf("alone %v, %d lanes taken; want the one queue and no lane", r.alone, r.q.nl)
	}
	if st := r.stats[0]; st.Sessions != 300 || st.Succeeded != 300 || st.Calls != 300 {
		t.Errorf("%d sessions, %d prompts done, %d calls; want 300 of each", st.Sessions, st.Succeeded, st.Calls)
	}
}
