package explore

import (
	"fmt"
	"math/bits"

	"github.com/ohmypi/retryfsm/session"
)

// Stepping a state through the session core is the same work for every
// state that differs from it only in its timers' remaining waits and Late
// flags, which the core never reads (it sees a timer's kind and id, and
// the ids are the timers' places in the queue): the original's 5.9 M
// states at maxRetries 11 fall into 13 k such classes. So an expander
// steps the core once per (class, input), the first time a state of the
// class takes the input, and keeps the outcome as a template: the
// target's key but for what the timers' order decides, the invariants,
// and the timers the step fires, cancels and arms. Every other state of
// the class takes the input by applying the template to its own timers
// (pop, cancel, insert in due order: the shell's own rules), with no core
// step and no State unpacked. TestTemplatesStepAsTheShell checks that a
// template reaches what stepping the shell reaches for every transition.

// classKey is the part of a key the session core reads: the key without
// the timers' Rem and Late.
type classKey struct {
	hdr   uint64 // key.hdr without the Late bits
	hist  uint32
	kinds uint8 // timer i's kind in bits 2i, 2i+1
}

// Bit fields of key.hdr the templates fill in per state (see key).
const (
	hdrCtlShift  = 45
	hdrCompShift = 48
	hdrNTShift   = 51
	hdrLateShift = 54
	hdrLate      = (1<<maxTimers - 1) << hdrLateShift
	hdrCodeMask  = 7
)

func (k *key) class() classKey {
	var kinds uint8
	for i := range maxTimers {
		kinds |= uint8(k.rem[i]>>remBits) << (2 * i)
	}
	return classKey{hdr: k.hdr &^ hdrLate, hist: k.hist, kinds: kinds}
}

// nt is the number of pending timers.
func (k *key) nt() int { return int(k.hdr >> hdrNTShift & hdrCodeMask) }

// due reports whether the first timer is due now (then only fire_timer is
// enabled: shell.enabled).
func (k *key) due() bool { return k.nt() > 0 && k.rem[0]&maxRem == 0 }

// template is the transition of a class by one input (see above).
type template struct {
	// hdr is the target's key.hdr without its Late bits, and without the
	// Ctl (CompTimer) code when ctl (comp) names a pending timer, whose
	// place in the queue is the code.
	hdr       uint64
	hist      uint32
	step      invSet // the step's invariants (shell.fails)
	state     invSet // the target's (checkState)
	ops       uint32 // the step's timer operations: memo.ops[ops : ops+nops]
	nops      uint8
	ctl, comp uint8 // the id of the timer Ctl (CompTimer) names, 0: none pending
	pruned    bool  // the step needs more than the timer bounds
	// self: the target is the source in every state of the class (the
	// step touches no timer and its key is its source's): a fifth of all
	// transitions, which keep drops unless they violate an invariant.
	self bool
}

// timerOp is a timer the step cancels (arm false: by id) or arms (kind,
// rem and late as shell.arm makes them).
type timerOp struct {
	rem  uint32 // the abstract wait
	id   uint8
	kind session.TimerKind
	arm  bool
	late bool
}

// hash mixes all of ck (as key.hash does).
func (ck *classKey) hash() uint64 {
	hi, lo := bits.Mul64(ck.hdr^0xa0761d6478bd642f, uint64(ck.hist)|uint64(ck.kinds)<<32^0xe7037ed1a0b428db)
	return hi ^ lo
}

// memoClass is one class: its enabled inputs and its templates.
type memoClass struct {
	key classKey
	// enabled are the inputs enabled in the class's states that have no
	// timer due (bit 1<<Input), the alphabet's left-out inputs removed.
	enabled uint32
	tmpl    [numInputs]int32 // 1 + index in memo.templates; 0: not made yet
}

// memo is one expander's classes and templates.
type memo struct {
	// index finds a class: open addressing (linear probing, at most half
	// full) of 1 + its index in classes, 0 for an empty slot. It is
	// looked up once for every state expanded, where Go's map cost twice
	// as much (generic hashing of the 16-byte key).
	index     []int32
	classes   []memoClass
	templates []template
	ops       []timerOp
}

// class returns the class of k, which is made from k if it is new.
func (x *expander) class(k *key) *memoClass {
	ck := k.class()
	m := &x.memo
	if len(m.index) == 0 {
		m.index = make([]int32, 64)
	}
	mask := uint64(len(m.index) - 1)
	p := ck.hash() & mask
	for ; m.index[p] != 0; p = (p + 1) & mask {
		if c := &m.classes[m.index[p]-1]; c.key == ck {
			return c
		}
	}
	c := memoClass{key: ck}
	s := k.state()
	if s.NT > 0 {
		s.T[0].Rem = 1 // not due: what the class enables otherwise
	}
	for in := Input(0); in < numInputs; in++ {
		if x.without&(1<<in) == 0 && x.sh.enabled(&s, in) {
			c.enabled |= 1 << in
		}
	}
	m.classes = append(m.classes, c)
	m.index[p] = int32(len(m.classes))
	if 2*len(m.classes) > len(m.index) {
		m.grow()
	}
	return &m.classes[len(m.classes)-1]
}

// grow doubles the index.
func (m *memo) grow() {
	m.index = make([]int32, 2*len(m.index))
	mask := uint64(len(m.index) - 1)
	for i := range m.classes {
		p := m.classes[i].key.hash() & mask
		for m.index[p] != 0 {
			p = (p + 1) & mask
		}
		m.index[p] = int32(i + 1)
	}
}

// template returns the template of input in for the class of k, which is
// made by stepping k's state through the shell the first time.
func (x *expander) template(c *memoClass, k *key, in Input) *template {
	if i := c.tmpl[in]; i != 0 {
		return &x.memo.templates[i-1]
	}
	sh := x.sh
	x.s = k.state()
	x.t = x.s
	sh.recording, sh.ops = true, x.memo.ops
	start := len(sh.ops)
	sh.step(&x.t, in)
	sh.cfg.saturate(&x.t)
	x.memo.ops, sh.ops, sh.recording = sh.ops, nil, false
	tp := template{pruned: sh.pruned}
	if !sh.pruned {
		for _, u := range sh.units {
			x.reached[u] = true
		}
		tk := x.t.key()
		tp.hdr, tp.hist = tk.hdr&^hdrLate, tk.hist
		tp.step, tp.state = sh.fails, checkState(&x.t)
		tp.ctl = pendingID(&x.t, x.t.Session.Ctl)
		tp.comp = pendingID(&x.t, x.t.Session.CompTimer)
		if tp.ctl != 0 {
			tp.hdr &^= hdrCodeMask << hdrCtlShift
		}
		if tp.comp != 0 {
			tp.hdr &^= hdrCodeMask << hdrCompShift
		}
		n := len(x.memo.ops) - start
		if n > 255 {
			panic(fmt.Sprintf("explore: %d timer operations in one step", n))
		}
		tp.ops, tp.nops = uint32(start), uint8(n)
		if got := x.memo.apply(&tp, k, in == FireTimer); got != tk {
			panic(fmt.Sprintf("explore: the template of %s from %v reaches %v, the shell %v", in, x.s, got.state(), x.t))
		}
		// With no timer touched, the Late bits and the timers' places are
		// the source's, and so are the codes; the rest is the class's.
		tp.self = in != FireTimer && n == 0 && tk == *k
	} else {
		x.memo.ops = x.memo.ops[:start]
	}
	x.memo.templates = append(x.memo.templates, tp)
	c.tmpl[in] = int32(len(x.memo.templates))
	return &x.memo.templates[len(x.memo.templates)-1]
}

// pendingID is id if a timer of s's queue has it, else 0 (ids of s are
// below 256: shell.arm's bounds).
func pendingID(s *State, id uint64) uint8 {
	for i := 0; i < int(s.NT); i++ {
		if s.T[i].ID == id {
			return uint8(id)
		}
	}
	return 0
}

// qtimer is a pending timer as apply moves it: key.rem's word, its id in
// the class's numbering (its place in k's queue + 1, or the id the step
// arms it with) and Late.
type qtimer struct {
	rk   uint32 // Rem | Kind<<remBits
	id   uint8
	late bool
}

// apply returns the key that tp, a template of k's class, reaches from k
// (fire: the input is fire_timer). It does to k's timers what shell.step
// does: pop the first (advancing the others by its wait unless it is a
// compaction continue), then cancel and arm (after every timer due no
// later, FIFO among equals, an armed timer before a Late one it ties
// with) in the core's order.
func (m *memo) apply(tp *template, k *key, fire bool) key {
	var ts [maxTimers]qtimer
	n := k.nt()
	for i := 0; i < n; i++ {
		ts[i] = qtimer{rk: k.rem[i], id: uint8(i + 1), late: k.hdr>>(hdrLateShift+i)&1 != 0}
	}
	if fire {
		f := ts[0]
		copy(ts[:], ts[1:n])
		n--
		if session.TimerKind(f.rk>>remBits) != session.CompactionTimer {
			for i := 0; i < n; i++ {
				ts[i].rk -= f.rk & maxRem
			}
		}
	}
	for _, op := range m.ops[tp.ops : tp.ops+uint32(tp.nops)] {
		if !op.arm {
			for i := 0; i < n; i++ {
				if ts[i].id == op.id {
					copy(ts[i:], ts[i+1:n])
					n--
					break
				}
			}
			continue
		}
		i := n
		for i > 0 && (ts[i-1].rk&maxRem > op.rem || ts[i-1].rk&maxRem == op.rem && ts[i-1].late && !op.late) {
			i--
		}
		copy(ts[i+1:n+1], ts[i:n])
		ts[i] = qtimer{rk: op.rem | uint32(op.kind)<<remBits, id: op.id, late: op.late}
		n++
	}
	t := key{hdr: tp.hdr, hist: tp.hist}
	for i := 0; i < n; i++ {
		q := &ts[i]
		t.rem[i] = q.rk
		if q.late {
			t.hdr |= 1 << (hdrLateShift + i)
		}
		if q.id == tp.ctl {
			t.hdr |= uint64(i+1) << hdrCtlShift
		}
		if q.id == tp.comp {
			t.hdr |= uint64(i+1) << hdrCompShift
		}
	}
	return t
}
