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

// maxLanes bounds the queue's lanes: the distinct delays it keeps in
// order without a heap.
const maxLanes = 8

// key is an event's place in the queue's order; a lane's head key is
// noKey while the lane is empty.
type key struct {
	at  time.Duration
	seq uint64
}

var noKey = key{at: math.MaxInt64, seq: math.MaxUint64}

func (k *key) before(o *key) bool { return k.at < o.at || (k.at == o.at && k.seq < o.seq) }

// queue is the simulation's event queue, ordered by (at, seq), so that
// events due at the same instant fire in the order they were scheduled. It
// is the one piece of time machinery the fleet owns.
//
// An event scheduled a delay d after now goes to d's lane, a FIFO: virtual
// time never goes back, so the events of one delay arrive in (at, seq)
// order and a lane needs no sorting (a fleet's fixed latencies and its
// backoff waits without jitter take a handful of delays). Events of other
// delays, once every lane is taken, and those at a given time go to a
// binary heap. The next event is the least of the lanes' heads and the
// heap's top: the same order as one heap of every event, at a fraction of
// the cost.
type queue struct {
	h []event // the heap
	// The lanes in use (nl), their delays and their heads' keys, apart so
	// that a push and the search for the next event read a few words.
	nl     int
	delays [maxLanes]time.Duration
	heads  [maxLanes]key
	lanes  [maxLanes]lane
	seq    uint64
	n      int // events in the lanes and the heap
	// next is where the least event is: -1 the heap, i lane i; valid while
	// nextOK.
	next   int
	nextOK bool
}

// lane is a FIFO of the events scheduled a delay after their time of
// scheduling: a ring of len(buf) (a power of two) holding n from head.
type lane struct {
	buf     []event
	head, n int
}

func (q *queue) len() int { return q.n }

func before(a, b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// pushAt schedules e at e.at (not before the time of the last event
// taken), stamping its sequence number.
func (q *queue) pushAt(e event) {
	q.seq++
	e.seq = q.seq
	q.n++
	q.nextOK = false
	q.heapPush(e)
}

// pushAfter schedules e d after now, now being the time of the last event
// taken (or 0 before the first), stamping its sequence number.
func (q *queue) pushAfter(now, d time.Duration, e event) {
	if d < 0 {
		d = 0
	}
	e.at = after(now, d)
	q.seq++
	e.seq = q.seq
	q.n++
	q.nextOK = false
	i := 0
	for _, ld := range q.delays[:q.nl] {
		if ld == d {
			break
		}
		i++
	}
	if i == q.nl { // no lane of d: an empty one, a new one, or the heap
		free := -1
		for j := range q.nl {
			if q.heads[j].seq == noKey.seq {
				free = j
				break
			}
		}
		switch {
		case free >= 0:
			i = free
		case q.nl < maxLanes:
			q.nl++
		default:
			q.heapPush(e)
			return
		}
		q.delays[i] = d
	}
	l := &q.lanes[i]
	if l.n == 0 {
		q.heads[i] = key{e.at, e.seq}
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = e
	l.n++
}

// grow doubles l's ring, its events moved to the front in order.
func (l *lane) grow() {
	nb := make([]event, max(16, 2*len(l.buf)))
	k := copy(nb, l.buf[l.head:])
	copy(nb[k:], l.buf[:l.head])
	l.buf, l.head = nb, 0
}

// find sets q.next to where the least event is (the queue is not empty).
func (q *queue) find() {
	best, top := -1, noKey
	if len(q.h) > 0 {
		top = key{q.h[0].at, q.h[0].seq}
	}
	heads := q.heads[:q.nl]
	for i := range heads {
		// Most heads are later than the best so far: one comparison.
		if heads[i].at > top.at {
			continue
		}
		if heads[i].before(&top) {
			best, top = i, heads[i]
		}
	}
	q.next, q.nextOK = best, true
}

// peek returns the next event (the queue is not empty).
func (q *queue) peek() *event {
	if !q.nextOK {
		q.find()
	}
	if q.next < 0 {
		return &q.h[0]
	}
	l := &q.lanes[q.next]
	return &l.buf[l.head]
}

// pop removes the next event into *out (the queue is not empty).
func (q *queue) pop(out *event) {
	if !q.nextOK {
		q.find()
	}
	q.nextOK = false
	q.n--
	i := q.next
	if i < 0 {
		q.heapPop(out)
		return
	}
	l := &q.lanes[i]
	*out = l.buf[l.head]
	l.head = (l.head + 1) & (len(l.buf) - 1)
	if l.n--; l.n == 0 {
		q.heads[i] = noKey
	} else {
		h := &l.buf[l.head]
		q.heads[i] = key{h.at, h.seq}
	}
}

// heapPush adds e to the heap. The sifts move a hole rather than swap.
func (q *queue) heapPush(e event) {
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

// heapPop removes the heap's top into *out (the heap is not empty).
func (q *queue) heapPop(out *event) {
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
