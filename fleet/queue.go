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
// binary heap (the run schedules a wire call's answer at its time when its
// latency is drawn: a delay of its own would take a lane to hold one
// event). The sources that hold events (the lanes and the heap) are
// kept in the order of their heads: the next event is the first one's
// head, and a source whose head changes (it was taken from, or was empty)
// moves to its place, usually a step or two. The same order as one heap of
// every event, at a fraction of the cost.
type queue struct {
	h []event // the heap
	// The lanes in use (nl) and their delays, apart so that a push reads
	// a few words.
	nl     int
	delays [maxLanes]time.Duration
	lanes  [maxLanes]lane
	// heads are the sources' heads' keys: lane i's at i, the heap's top
	// at heapSource (noKey when empty); order lists the no sources that
	// hold events, by their heads.
	heads [numSources]key
	order [numSources]uint8
	no    int
	seq   uint64
	n     int // events in the lanes and the heap
}

// The sources of events: the lanes, then the heap.
const (
	heapSource = maxLanes
	numSources = maxLanes + 1
)

// lane is a FIFO of the events scheduled a delay after their time of
// scheduling: a ring of len(buf) (a power of two) holding n from head.
type lane struct {
	buf     []event
	head, n int
}

func (q *queue) len() int { return q.n }

func before(a, b *event) bool { return a.at < b.at || (a.at == b.at && a.seq < b.seq) }

// enter puts source j, which had no event and now has head k, in order.
func (q *queue) enter(j int, k key) {
	q.heads[j] = k
	i := q.no
	q.no++
	q.raise(i, j)
}

// raise places source j, whose head is not later than it was, at or
// before position i.
func (q *queue) raise(i, j int) {
	k := &q.heads[j]
	for ; i > 0; i-- {
		p := q.order[i-1]
		if !k.before(&q.heads[p]) {
			break
		}
		q.order[i] = p
	}
	q.order[i] = uint8(j)
}

// settle sets the head of the first source, which was taken from, to k
// (noKey: it is empty), and moves it to its place.
func (q *queue) settle(k key) {
	j := q.order[0]
	if k == noKey {
		q.heads[j] = noKey
		q.no--
		copy(q.order[:q.no], q.order[1:q.no+1])
		return
	}
	q.heads[j] = k
	i := 0
	for ; i+1 < q.no; i++ {
		nx := q.order[i+1]
		if !q.heads[nx].before(&k) {
			break
		}
		q.order[i] = nx
	}
	q.order[i] = j
}

// pushAt schedules e at e.at (not before the time of the last event
// taken), stamping its sequence number.
func (q *queue) pushAt(e event) {
	q.seq++
	e.seq = q.seq
	q.n++
	q.heapPush(e)
}

// pushAfter schedules *e d after now, now being the time of the last
// event taken (or 0 before the first), setting its time and stamping its
// sequence number. (By pointer: an event is copied once, into its lane.)
func (q *queue) pushAfter(now, d time.Duration, e *event) {
	if d < 0 {
		d = 0
	}
	e.at = after(now, d)
	q.seq++
	e.seq = q.seq
	q.n++
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
			if q.lanes[j].n == 0 {
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
			q.heapPush(*e)
			return
		}
		q.delays[i] = d
	}
	l := &q.lanes[i]
	if l.n == len(l.buf) {
		l.grow()
	}
	l.buf[(l.head+l.n)&(len(l.buf)-1)] = *e
	if l.n++; l.n == 1 {
		q.enter(i, key{e.at, e.seq})
	}
}

// grow doubles l's ring, its events moved to the front in order.
func (l *lane) grow() {
	nb := make([]event, max(16, 2*len(l.buf)))
	k := copy(nb, l.buf[l.head:])
	copy(nb[k:], l.buf[:l.head])
	l.buf, l.head = nb, 0
}

// peek returns the next event (the queue is not empty).
func (q *queue) peek() *event {
	j := int(q.order[0])
	if j == heapSource {
		return &q.h[0]
	}
	l := &q.lanes[j]
	return &l.buf[l.head]
}

// pop removes the next event into *out (the queue is not empty).
func (q *queue) pop(out *event) {
	q.n--
	j := int(q.order[0])
	if j == heapSource {
		q.heapPop(out)
		return
	}
	l := &q.lanes[j]
	*out = l.buf[l.head]
	l.head = (l.head + 1) & (len(l.buf) - 1)
	if l.n--; l.n == 0 {
		q.settle(noKey)
		return
	}
	h := &l.buf[l.head]
	q.settle(key{h.at, h.seq})
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
	switch {
	case len(h) == 1:
		q.enter(heapSource, key{e.at, e.seq})
	case i == 0: // a new top, earlier: the heap moves up the order
		q.heads[heapSource] = key{e.at, e.seq}
		p := 0
		for q.order[p] != heapSource {
			p++
		}
		q.raise(p, heapSource)
	}
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
	if n == 0 {
		q.settle(noKey)
		return
	}
	h[i] = last
	q.settle(key{h[0].at, h[0].seq})
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

// localQueue holds one session's events while sessions run alone
// (runner.runAlone): a few at a time, taken in (at, seq) order as queue
// takes them.
type localQueue struct {
	ev  []event
	seq uint64
}

// push schedules *e d after now, setting its time and sequence number.
func (q *localQueue) push(now, d time.Duration, e *event) {
	e.at = after(now, d)
	q.seq++
	e.seq = q.seq
	q.ev = append(q.ev, *e)
}

// pop removes the next event into *out; false when there is none.
func (q *localQueue) pop(out *event) bool {
	n := len(q.ev)
	switch n {
	case 0:
		return false
	case 1: // the usual case: a session waits on one call or one timer
		*out = q.ev[0]
		q.ev = q.ev[:0]
		return true
	}
	b := 0
	for i := 1; i < n; i++ {
		if before(&q.ev[i], &q.ev[b]) {
			b = i
		}
	}
	*out = q.ev[b]
	q.ev[b] = q.ev[n-1]
	q.ev = q.ev[:n-1]
	return true
}

// reset drops the events left (a session's stale ones, once it ended).
func (q *localQueue) reset() { q.ev = q.ev[:0] }
