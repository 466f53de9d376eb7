package fleet

import (
	"math"
	"time"
)

// Kinds of queue events.
const (
	evArrive uint8 = iota + 1 // the next session arrives
	evPrompt                  // a session issues its next prompt
	evReply                   // a wire call's answer arrives
	evTimer                   // a session core's timer fires
	evOutage                  // an outage window starts (id: its index)
)

// Layers of a session: its agent core, and the SDK core under it.
const (
	layerAgent uint8 = iota
	layerSDK
)

// event is one queue entry: at, then seq, orders the queue; the rest says
// what it is for. slot and gen name the session (a freed slot's old events
// are stale).
type event struct {
	at    time.Duration
	seq   uint64
	id    uint64 // evTimer: the timer's id; evReply: the call's id
	slot  int32
	gen   uint32
	wire  uint32 // evReply: the session's wire call number
	kind  uint8
	layer uint8
	timer uint8 // evTimer: session.TimerKind
}

// queue is the simulation's event queue: a binary heap keyed by (at, seq),
// so that events due at the same instant fire in the order they were
// scheduled. It is the one piece of time machinery the fleet owns.
type queue struct {
	h   []event
	seq uint64
}

func (q *queue) len() int { return len(q.h) }

func before(a, b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// push schedules e at e.at, stamping its sequence number. The sifts move
// a hole rather than swap.
func (q *queue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.h = append(q.h, e)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// peek returns the next event (the queue is not empty).
func (q *queue) peek() *event { return &q.h[0] }

// pop removes the next event into *out (the queue is not empty).
func (q *queue) pop(out *event) {
	h := q.h
	*out = h[0]
	n := len(h) - 1
	last := h[n]
	q.h = h[:n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && before(&h[r], &h[c]) {
			c = r
		}
		if !before(&h[c], &last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	if n > 0 {
		h[i] = last
	}
}

// after is now+d, saturating at the largest time.Duration.
func after(now, d time.Duration) time.Duration {
	if d < 0 {
		d = 0
	}
	at := now + d
	if at < now {
		return time.Duration(math.MaxInt64)
	}
	return at
}
