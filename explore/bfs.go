package explore

import (
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/ohmypi/retryfsm/session"
)

// The breadth-first search behind Explore. It has two halves:
//
//   - expanding a state (stepping the session core by every enabled input,
//     packing and hashing each target, checking the invariants of the step)
//     needs nothing but the state, so batches of states are expanded on
//     worker goroutines, each with its own shell;
//   - merging (numbering new targets and recording the first violation of
//     each invariant) is done by the calling goroutine alone, batch after
//     batch in state order, exactly as a one-goroutine BFS would.
//
// So the states, their numbers, the BFS tree and the counterexamples do not
// depend on the number of workers or on scheduling. Small explorations
// (and the start of every exploration, while the frontier is small) are
// expanded inline: handing them to workers would cost more than it saves.

const (
	// batchStates is how many states one batch expands at most.
	batchStates = 256
	// parallelFrontier is the smallest number of states waiting to be
	// expanded for which batches go to workers.
	parallelFrontier = 2 * batchStates
	// inFlightPerWorker bounds the batches dispatched and not yet merged,
	// per worker: enough to keep workers busy while the merge catches up.
	inFlightPerWorker = 8
)

// succ is one explored transition, computed from its source state alone
// (and the batch it is in): all the merge needs.
type succ struct {
	key  key
	from int32 // the source state's number
	// h is the high half of the key's hash (stateSet's slot and tag), set
	// unless known.
	h  uint32
	in Input
	// known: the target is the source or the target of an earlier
	// transition of the same batch, so the merge need not look it up: it
	// is not new. About a fifth of all transitions lead back to their
	// source, and a third of the others to a target of their batch
	// (keep, which drops those that violate nothing).
	known bool
	step  invSet // invariants the step violates (the shell's checks while it steps: sh.fails)
	state invSet // invariants the target violates if it is new (checkState)
}

// invSet is a set of invariants, bit i for Invariant i.
type invSet uint16

// expander computes the transitions of states with its own shell and
// templates (memo.go) and tallies what is summed or united over all
// expanders at the end.
type expander struct {
	// Each worker writes its expander and shell on every transition:
	// padding keeps two workers' from sharing a cache line (false sharing
	// made the core's steps three times slower on two cores).
	_           [128]byte
	sh          *shell
	without     uint32 // inputs left out of the alphabet
	reached     []bool // by rule*len(states)+Index(from)
	pruned      int
	transitions int
	memo        memo
	// seen is keep's table: a batch's targets by hash, gen<<16 | the
	// index of the first transition to each; other generations' slots
	// are empty.
	seen [dedupeSlots]uint32
	gen  uint32
	// s and t are a template's source and target: fields, not locals,
	// since the shell keeps a pointer to the state it steps (shell.cur),
	// which would move locals to the heap, two States per template.
	s, t State
	_    [128]byte
}

func newExpander(v *session.Variant, opt Options, c *config) *expander {
	return &expander{sh: newConfigShell(v, c, false), without: opt.without,
		reached: make([]bool, len(v.Retry.Rules())*len(states))}
}

// templatesFrom is the first state number expanded by templates: the
// states before it are stepped through the shell one transition at a
// time. A small exploration has nearly as many classes as states, and
// making a template costs more than stepping the shell once (sound's
// explorations have at most a few hundred states; the original's at
// maxRetries 11 has 5.9 M in 13 k classes).
const templatesFrom = 4096

// expand appends to out, the transitions of the batch so far, those of
// state number i, whose key is k, in input order, that keep keeps; pruned
// ones are only counted.
func (x *expander) expand(i int32, k key, out []succ) []succ {
	if i < templatesFrom {
		return x.expandByShell(i, k, out)
	}
	return x.expandByTemplates(i, k, out)
}

// expandByShell is expand stepping the shell for every transition.
func (x *expander) expandByShell(i int32, k key, out []succ) []succ {
	sh := x.sh
	x.s = k.state()
	s, t := &x.s, &x.t
	for in := Input(0); in < numInputs; in++ {
		if x.without&(1<<in) != 0 || !sh.enabled(s, in) {
			continue
		}
		*t = *s
		sh.step(t, in)
		sh.cfg.saturate(t)
		if sh.pruned {
			x.pruned++
			continue
		}
		x.transitions++
		for _, u := range sh.units {
			x.reached[u] = true
		}
		out = x.keep(out, succ{key: t.key(), from: i, in: in, step: sh.fails, state: checkState(t)}, &k)
	}
	return out
}

// expandByTemplates is expand applying the templates of k's class.
func (x *expander) expandByTemplates(i int32, k key, out []succ) []succ {
	c := x.class(&k)
	enabled := c.enabled
	if k.due() {
		enabled &= 1 << FireTimer
	}
	for ; enabled != 0; enabled &= enabled - 1 {
		in := Input(bits.TrailingZeros32(enabled))
		tp := x.template(c, &k, in)
		if tp.pruned {
			x.pruned++
			continue
		}
		x.transitions++
		if tp.self && tp.step == 0 {
			continue // keep would drop it
		}
		out = x.keep(out, succ{key: x.memo.apply(tp, &k, in == FireTimer), from: i, in: in, step: tp.step, state: tp.state}, &k)
	}
	return out
}

const (
	// dedupeBits sizes keep's table: 32 KiB, which stay in the core's
	// first-level cache, for at most 4,352 transitions a batch (1,700 on
	// average in the original's largest check).
	dedupeBits  = 13
	dedupeSlots = 1 << dedupeBits
)

// The table is never full (a probe ends) and the indices of a batch's
// transitions fit in 16 bits.
var _ [dedupeSlots - batchStates*int(numInputs)]struct{}

// newBatch starts a batch: keep forgets the targets of the batches
// before.
func (x *expander) newBatch() {
	x.gen = (x.gen + 1) & 0xffff
	if x.gen == 0 { // a wrap: the slots of the generation again in use go
		x.seen = [dedupeSlots]uint32{}
		x.gen = 1
	}
}

// keep appends to out, the batch's transitions so far, the transition s
// from the state whose key is src, unless the merge would do nothing with
// it: it is known (its target is src, or the target of a transition of
// out) and violates no invariant. Otherwise it sets s.known, and s.h
// unless s is known. The merge would find a known target in the visited
// set, where a lookup is a cache miss or two in hundreds of MB; here it
// is a probe in 64 KiB. Half of all transitions are dropped.
func (x *expander) keep(out []succ, s succ, src *key) []succ {
	s.known = s.key == *src
	if !s.known {
		s.h = s.key.tag()
		for p := s.h >> (32 - dedupeBits); ; p = (p + 1) & (dedupeSlots - 1) {
			v := x.seen[p]
			if v>>16 != x.gen {
				x.seen[p] = x.gen<<16 | uint32(len(out))
				break
			}
			if out[v&0xffff].key == s.key {
				s.known = true
				break
			}
		}
	}
	if s.known && s.step == 0 {
		return out
	}
	return append(out, s)
}

// batch is the expansion of consecutive states of one chunk.
type batch struct {
	lo    int32  // the number of nodes[0]
	nodes []node // read-only while the batch is out
	out   []succ
	// panicked carries a worker's panic to the merging goroutine.
	panicked any
	done     chan struct{} // one token when out is ready
}

// batchPool recycles batches and their buffers (about 200 KiB each)
// across explorations.
var batchPool = sync.Pool{New: func() any {
	return &batch{out: make([]succ, 0, batchStates*int(numInputs)), done: make(chan struct{}, 1)}
}}

// expandBatch fills bt.out and signals bt.done, even on a panic.
func (x *expander) expandBatch(bt *batch) {
	defer func() {
		bt.panicked = recover()
		bt.done <- struct{}{}
	}()
	bt.out = bt.out[:0]
	x.newBatch()
	for j := range bt.nodes {
		bt.out = x.expand(bt.lo+int32(j), bt.nodes[j].key(), bt.out)
	}
}

// bfs is one exploration in progress.
type bfs struct {
	v     *session.Variant
	opt   Options
	cfg   *config
	r     *Result
	set   *stateSet
	found invSet
	// Workers, started when the frontier first grows large enough.
	workers []*expander
	jobs    chan *batch
	wg      sync.WaitGroup
}

// run explores from the initial state and fills b.r.
func (b *bfs) run() {
	b.set = newStateSet()
	s0 := initial()
	k0 := s0.key()
	b.set.add(&k0, k0.tag(), -1, 0)
	local := newExpander(b.v, b.opt, b.cfg)
	defer b.stopWorkers()
	var (
		next  int32    // the first state not yet handed out for expansion
		queue []*batch // handed out, not yet merged, in state order
		buf   []succ
	)
	maxWorkers := runtime.GOMAXPROCS(0)
	for {
		if len(queue) == 0 {
			if next == b.set.n {
				break // every state is expanded and merged
			}
			if maxWorkers < 2 || b.set.n-next < parallelFrontier {
				hi := b.set.batchEnd(next)
				buf = buf[:0]
				local.newBatch()
				for ; next < hi; next++ {
					buf = local.expand(next, b.set.at(next).key(), buf)
				}
				b.merge(buf)
				continue
			}
			if b.jobs == nil {
				b.startWorkers(maxWorkers)
			}
		}
		for len(queue) < inFlightPerWorker*len(b.workers) && next < b.set.n {
			bt := batchPool.Get().(*batch)
			hi := b.set.batchEnd(next)
			bt.lo, bt.nodes = next, b.set.span(next, hi)
			next = hi
			b.jobs <- bt // never blocks: the channel holds every batch in flight
			queue = append(queue, bt)
		}
		bt := queue[0]
		queue = queue[1:]
		<-bt.done
		if bt.panicked != nil {
			panic(bt.panicked)
		}
		b.merge(bt.out)
		bt.nodes = nil
		batchPool.Put(bt)
	}
	b.stopWorkers() // their tallies are final once they have exited
	r := b.r
	r.Pruned, r.Transitions = local.pruned, local.transitions
	reached := local.reached
	for _, x := range b.workers {
		r.Pruned += x.pruned
		r.Transitions += x.transitions
		for i, ok := range x.reached {
			reached[i] = reached[i] || ok
		}
	}
	for i, ok := range reached {
		if ok {
			r.Reached[Unit{i / len(states), states[i%len(states)]}] = true
		}
	}
	sortViolations(r.Violations)
	b.set.trim()
	r.nodes = b.set.chunks
	r.States = int(b.set.n)
}

func (b *bfs) startWorkers(n int) {
	b.jobs = make(chan *batch, inFlightPerWorker*n)
	for range n {
		x := newExpander(b.v, b.opt, b.cfg)
		b.workers = append(b.workers, x)
		b.wg.Go(func() {
			for bt := range b.jobs {
				x.expandBatch(bt)
			}
		})
	}
}

// stopWorkers ends the workers, if any, and waits for them (idempotent).
func (b *bfs) stopWorkers() {
	if b.jobs != nil {
		close(b.jobs)
		b.wg.Wait()
		b.jobs = nil
	}
}

// merge adds the transitions of buf, a batch's (deduped), in order: it
// numbers new targets and records the first violation of each invariant.
func (b *bfs) merge(buf []succ) {
	r := b.r
	b.set.prefetch(buf)
	for k := range buf {
		x := &buf[k]
		f := x.step
		if !x.known && b.set.add(&x.key, x.h, x.from, x.in) {
			f |= x.state
		}
		if f&^b.found == 0 {
			continue
		}
		for inv := Invariant(0); inv < numInvariants; inv++ {
			if f&^b.found&(1<<inv) != 0 {
				b.found |= 1 << inv
				p := append(pathTo(b.set.chunks, int(x.from)), x.in)
				r.Violations = append(r.Violations, Violation{Invariant: inv, Path: p})
			}
		}
	}
}

// node is one reachable state and its edge in the BFS tree: its key and
// the input that reached it share the key's last word, which makes a
// node 32 bytes, not 40 (the nodes are most of a big exploration's
// memory: TestNodeSize).
type node struct {
	hdr    uint64            // key.hdr
	rem    [maxTimers]uint32 // key.rem
	hist   uint32            // key.hist, and the input (via) from bit viaShift
	parent int32             // -1 for the initial state
}

// viaShift is where node.hist holds the input: above key.hist's bits.
const viaShift = 24

// The key's history and the input must not overlap in node.hist.
var _ [viaShift - histBits]struct{}
var _ [1<<(32-viaShift) - int(numInputs)]struct{}

func newNode(k *key, parent int32, via Input) node {
	return node{hdr: k.hdr, rem: k.rem, hist: k.hist | uint32(via)<<viaShift, parent: parent}
}

// key returns the node's state key.
func (n *node) key() key { return key{hdr: n.hdr, rem: n.rem, hist: n.hist & (1<<viaShift - 1)} }

// via returns the input that reached the node (its edge in the BFS tree).
func (n *node) via() Input { return Input(n.hist >> viaShift) }

// is reports whether the node's key is k.
func (n *node) is(k *key) bool {
	return n.hdr == k.hdr && n.rem == k.rem && n.hist&(1<<viaShift-1) == k.hist
}

const (
	chunkBits = 19 // 524,288 nodes, 16 MiB: mostly huge pages (hugepages_linux.go)
	chunkLen  = 1 << chunkBits
)

// hugeBytes is the size from which the explorer's arrays are advised to
// use huge pages (adviseHugePages): one huge page.
const hugeBytes = 2 << 20

// makeBig is make([]T, 0, n), advised to use huge pages if it is large.
func makeBig[T any](n int) []T {
	s := make([]T, 0, n)
	if n*int(unsafe.Sizeof(*new(T))) >= hugeBytes {
		_ = adviseHugePages(s) // advice: refused, it costs speed only
	}
	return s
}

// stateSet numbers the states found so far, in the order found, and finds
// a state's number by its key.
//
// The nodes are kept in chunks of chunkLen: appending never copies the
// megabytes a big exploration holds, and a node never moves, so workers
// can read batches of nodes while more are appended.
//
// The index is an open-addressing table (linear probing, at most 3/4 full)
// of 8-byte slots: the high 32 bits of the key's hash, which also give the
// slot, and the state number + 1 in the low ones (0: empty). A probe touches one small
// slot and reads a node only when the hash bits match; growing needs only
// the slots, read in order, since they hold the bits that place them. Go's
// map with a 24-byte key made lookups the largest cost of a big
// exploration (cache misses in its larger table, generic hashing).
type stateSet struct {
	chunks [][]node // all full but the last
	n      int32
	slots  []uint64
	shift  uint   // 64 - log2(len(slots)) (>= 32): the slot is the hash's high bits
	sink   uint64 // keeps prefetch's loads from being optimised away
}

const stateSetMinBits = 10

func newStateSet() *stateSet {
	return &stateSet{slots: make([]uint64, 1<<stateSetMinBits), shift: 64 - stateSetMinBits}
}

// at returns state number i.
func (ss *stateSet) at(i int32) *node { return &ss.chunks[i>>chunkBits][i&(chunkLen-1)] }

// batchEnd returns the end of the batch of states starting at lo: at most
// batchStates states, all known, in one chunk.
func (ss *stateSet) batchEnd(lo int32) int32 {
	return min(ss.n, lo+batchStates, (lo>>chunkBits+1)<<chunkBits)
}

// span returns states lo..hi-1, which batchEnd puts in one chunk.
func (ss *stateSet) span(lo, hi int32) []node {
	off := lo & (chunkLen - 1)
	return ss.chunks[lo>>chunkBits][off : off+hi-lo : off+hi-lo]
}

// add adds the state whose key is k (h: k.tag()) reached from state
// parent by via, unless it is known; it reports whether it was new.
func (ss *stateSet) add(k *key, h uint32, parent int32, via Input) (added bool) {
	mask := uint64(len(ss.slots) - 1)
	hi := uint64(h) << 32
	for p := hi >> ss.shift; ; p = (p + 1) & mask {
		sl := ss.slots[p]
		if sl == 0 {
			ss.push(newNode(k, parent, via))
			ss.slots[p] = hi | uint64(ss.n)    // n is now the new number + 1
			if 4*int(ss.n) > 3*len(ss.slots) { // at most 3/4 full: probes stay short
				ss.grow()
			}
			return true
		}
		if sl&^0xffffffff == hi && ss.at(int32(uint32(sl)-1)).is(k) {
			return false
		}
	}
}

func (ss *stateSet) push(nd node) {
	c := int(ss.n >> chunkBits)
	if c == len(ss.chunks) {
		ss.chunks = append(ss.chunks, nil)
	}
	if ch := ss.chunks[c]; len(ch) == cap(ch) {
		// The first chunk starts small (most explorations are small) and
		// doubles; later ones are allocated whole. Growing copies, but a
		// worker's span of the old array stays valid and is never written
		// again.
		n := chunkLen
		if c == 0 {
			n = min(max(2*cap(ch), 64), chunkLen)
		}
		ss.chunks[c] = append(makeBig[node](n), ch...)
	}
	ss.chunks[c] = append(ss.chunks[c], nd)
	ss.n++
}

// trim copies the last chunk of a big exploration into an array of its
// length: the result keeps the nodes, and a check of several maxRetries
// keeps every result, which would otherwise hold up to 16 MiB of unused
// chunk each.
func (ss *stateSet) trim() {
	if c := len(ss.chunks) - 1; c > 0 {
		ss.chunks[c] = slices.Clone(ss.chunks[c])
	}
}

// prefetch touches the slots of the keys of buf that add will look up,
// and the nodes they point to, before add probes them one by one: these
// independent loads overlap their cache misses, where add, which branches
// on each, waits for them in turn. It only warms the cache: the table may
// change before add.
func (ss *stateSet) prefetch(buf []succ) {
	var sink uint64
	for i := range buf {
		if !buf[i].known {
			sink += ss.slots[uint64(buf[i].h)<<32>>ss.shift]
		}
	}
	for i := range buf {
		x := &buf[i]
		if x.known {
			continue
		}
		sl := ss.slots[uint64(x.h)<<32>>ss.shift]
		if sl != 0 && uint32(sl>>32) == x.h {
			sink += ss.at(int32(uint32(sl) - 1)).hdr
		}
	}
	ss.sink = sink
}

// grow doubles the table. It re-inserts the slots in table order: their
// new homes then ascend too, so both tables are walked nearly in order.
func (ss *stateSet) grow() {
	old := ss.slots
	ss.slots = makeBig[uint64](2 * len(old))[:2*len(old)]
	ss.shift--
	mask := uint64(len(ss.slots) - 1)
	for _, sl := range old {
		if sl == 0 {
			continue
		}
		p := sl >> ss.shift // shift >= 32: only the hash bits count
		for ss.slots[p] != 0 {
			p = (p + 1) & mask
		}
		ss.slots[p] = sl
	}
	if len(old) >= bigSlots {
		// The old table is garbage, but nothing else a big exploration
		// allocates (its nodes excepted) would make the runtime collect
		// it soon: collected now, its pages hold the next nodes, instead
		// of every table ever grown staying resident until the end.
		runtime.GC()
	}
}

// bigSlots is the smallest old table (8 MiB) that grow has collected at
// once.
const bigSlots = 1 << 20
