package explore

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// stepAlike steps a (a state as the session reaches it, never normalised)
// and c (the canonical state of a's key) by in with their own shells and
// reports how they differ: whether in is enabled, the pruning, the
// invariants of the step, the rules fired, the retry records and the keys
// reached. In persistent mode the keys compared are saturated and so are
// the records' attempts (config.saturate). It steps *a and *c in place
// (states passed by value escaped, through the shells, and were allocated
// at every call), and marks itself a helper only when it reports.
func stepAlike(t *testing.T, label string, sa, sc *shell, a, c *State, in Input) bool {
	if ea, ec := sa.enabled(a, in), sc.enabled(c, in); ea != ec {
		t.Helper()
		t.Errorf("%s: %s enabled %t in the session's state %v, %t in the canonical %v", label, in, ea, *a, ec, *c)
		return false
	} else if !ea {
		return true
	}
	na, nc := len(sa.records), len(sc.records)
	sa.step(a, in)
	sc.step(c, in)
	ok := sa.pruned == sc.pruned && sa.fails == sc.fails && slices.Equal(sa.units, sc.units)
	ra, rc := sa.records[na:], sc.records[nc:]
	ok = ok && len(ra) == len(rc)
	for i := 0; ok && i < len(ra); i++ {
		xa, xc := sa.cfg.satRecord(ra[i]), sc.cfg.satRecord(rc[i])
		ok = xa.Type == xc.Type && xa.Edge == xc.Edge && xa.Start == xc.Start && xa.End == xc.End && xa.Fallback == xc.Fallback
	}
	if ok && !sa.pruned {
		ok = satKeyOf(sa.cfg, *a) == satKeyOf(sc.cfg, *c)
	}
	if !ok {
		t.Helper()
		t.Errorf("%s: %s steps the session's state and its canonical one apart:\nsession   %v pruned %t fails %b units %v %v\ncanonical %v pruned %t fails %b units %v %v",
			label, in, *a, sa.pruned, sa.fails, sa.units, retryRecords(ra), *c, sc.pruned, sc.fails, sc.units, retryRecords(rc))
	}
	return ok
}

func retryRecords(rs []trace.Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Type.String())
	}
	return out
}

func keepingShell(v *session.Variant, mr int) *shell {
	sh := newShell(v, mr, false)
	sh.keep = true
	return sh
}

// TestKeyIsACongruence: two states with the same key step alike, so the
// explorer may keep one state per key (SPEC.md §12.1). For every reachable
// state and every input, the state as the session core reaches it along
// the BFS path (ids, prompt numbers, dead fields, message counts as they
// are) and the canonical state of its key enable the same inputs, write
// the same retry records, violate the same invariants and reach the same
// key. Seeded random walks then go deeper than the BFS tree, stepping the
// session's state without ever normalising it.
func TestKeyIsACongruence(t *testing.T) {
	var x, y State // stepAlike's copies of a and c
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		for mr := 0; mr <= 2; mr++ {
			r := exploreAll(Options{Variant: v, MaxRetries: mr})
			sa, sc := keepingShell(v, mr), keepingShell(v, mr)
			fails := 0
			for i := 0; i < r.States && fails < 3; i++ {
				a := initial()
				for _, in := range r.PathTo(i) {
					sa.step(&a, in)
				}
				c := r.State(i)
				if a.key() != c.key() {
					t.Fatalf("%s mr=%d: state %d: the path reaches %v, whose key is not the state's %v", v.Name, mr, i, a, c)
				}
				for in := Input(0); in < numInputs; in++ {
					if x, y = a, c; !stepAlike(t, v.Name, sa, sc, &x, &y, in) {
						fails++
					}
				}
				sa.records, sc.records = sa.records[:0], sc.records[:0]
			}
		}
		rng := rand.New(rand.NewPCG(10, uint64(len(v.Name))))
		for walk := range 300 {
			mr := walk % 4
			sa, sc := keepingShell(v, mr), keepingShell(v, mr)
			a, c := initial(), initial()
			for range 80 {
				var ins []Input
				for in := Input(0); in < numInputs; in++ {
					if sa.enabled(&a, in) {
						ins = append(ins, in)
					}
				}
				in := ins[rng.IntN(len(ins))]
				pa, pc := a, c
				if !stepAlike(t, v.Name, sa, sc, &a, &c, in) {
					return
				}
				if sa.pruned { // beyond the bounds: try another input
					a, c = pa, pc
					continue
				}
				k := c.key()
				c = k.state()
				sa.records, sc.records = sa.records[:0], sc.records[:0]
			}
		}
	}
}

// TestKeyRoundTrip: a canonical state packs to its own key, and the
// canonical states of distinct keys differ.
func TestKeyRoundTrip(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		r := exploreAll(Options{Variant: v, MaxRetries: 3})
		seen := map[key]bool{}
		for i := 0; i < r.States; i++ {
			k := r.nodes[i>>chunkBits][i&(chunkLen-1)].key()
			s := k.state()
			if got := s.key(); got != k {
				t.Fatalf("%s state %d %v: packs to %x, not its key %x", v.Name, i, s, got, k)
			}
			if seen[k] {
				t.Fatalf("%s state %d: key %x twice", v.Name, i, k)
			}
			seen[k] = true
		}
	}
}

// TestNodeSize: a node (a state's key and its BFS edge) is 32 bytes; the
// nodes are most of a big exploration's memory.
func TestNodeSize(t *testing.T) {
	if n := unsafe.Sizeof(node{}); n != 32 {
		t.Errorf("a node is %d bytes, want 32", n)
	}
}

// TestNodeKeepsKeyAndInput: a node gives back the key and the input it
// was made from, whatever the key's history bits.
func TestNodeKeepsKeyAndInput(t *testing.T) {
	for in := Input(0); in < numInputs; in++ {
		for _, hist := range []uint32{0, 1, 1<<histBits - 1} {
			k := key{hdr: 1<<63 - 1, rem: [maxTimers]uint32{1, 2, 3, maxRem}, hist: hist}
			n := newNode(&k, 7, in)
			if n.key() != k || n.via() != in || n.parent != 7 || !n.is(&k) {
				t.Errorf("node of %+v, %v: key %+v, via %v, parent %d", k, in, n.key(), n.via(), n.parent)
			}
			other := k
			other.hist ^= 1
			if n.is(&other) {
				t.Errorf("node of %+v is %+v", k, other)
			}
		}
	}
}
