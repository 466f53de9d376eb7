package explore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ohmypi/retryfsm/session"
)

// TestTemplatesStepAsTheShell: for every reachable state of the
// original's explorations (maxRetries 0..4, and 2 with the old alphabet),
// sound's, and sound's under every settings axis (maxRetries 0..2), the
// templates give every enabled input the target, invariants and pruning
// that stepping the shell gives (the transitions keep keeps, each state a
// batch of its own), and cover the same units (whatever state number
// expand starts using templates at); each class is made once.
func TestTemplatesStepAsTheShell(t *testing.T) {
	type exploration struct {
		name    string
		v       *session.Variant
		c       *config
		mr      int
		without uint32
	}
	var cases []exploration
	for mr := 0; mr <= 4; mr++ {
		cases = append(cases, exploration{"original", session.Original, defaultConfig(mr), mr, 0},
			exploration{"sound", session.Sound, defaultConfig(mr), mr, 0})
	}
	cases = append(cases, exploration{"original, old alphabet", session.Original, defaultConfig(2), 2, oldAlphabet})
	for _, ax := range append(slices.Clone(axes), jittered...) {
		for mr := 0; mr <= 2; mr++ {
			c, err := newConfig(session.Sound, settingsOf(t, ax.json), mr, false)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, exploration{"sound " + ax.name, session.Sound, c, mr, 0})
		}
	}
	for _, ex := range cases {
		name := fmt.Sprintf("%s mr=%d", ex.name, ex.mr)
		opt := Options{Variant: ex.v, MaxRetries: ex.mr, without: ex.without}
		r := exploreConfig(opt, ex.c)
		x, y := newExpander(ex.v, opt, ex.c), newExpander(ex.v, opt, ex.c)
		var got, want []succ
		bad := 0
		classes := map[classKey]bool{}
		for i := 0; i < r.States && bad < 3; i++ {
			k := r.nodes[i>>chunkBits][i&(chunkLen-1)].key()
			classes[k.class()] = true
			x.newBatch()
			y.newBatch()
			got = x.expandByTemplates(int32(i), k, got[:0])
			want = y.expandByShell(int32(i), k, want[:0])
			if !slices.Equal(got, want) {
				bad++
				t.Errorf("%s: state %d %v:\ntemplates %v\nshell     %v", name, i, k.state(), got, want)
			}
		}
		if x.pruned != y.pruned || x.pruned != r.Pruned || x.transitions != y.transitions || x.transitions != r.Transitions {
			t.Errorf("%s: pruned %d transitions %d, the shell %d/%d, the exploration %d/%d", name, x.pruned, x.transitions, y.pruned, y.transitions, r.Pruned, r.Transitions)
		}
		if !slices.Equal(x.reached, y.reached) {
			t.Errorf("%s: the templates reach other units than the shell", name)
		}
		if len(x.memo.classes) != len(classes) {
			t.Errorf("%s: %d classes made for the %d of %d states", name, len(x.memo.classes), len(classes), r.States)
		}
	}
}

// TestKeep: keep drops exactly the transitions to a known target (the
// source, or the target of a transition of the batch) that violate no
// invariant, marks known the others to a known target, gives the rest
// their hash, and forgets earlier batches, also when its generation
// counter wraps.
func TestKeep(t *testing.T) {
	k := func(i uint64) key { return key{hdr: i, rem: [maxTimers]uint32{uint32(i)}} }
	src, none := k(3), k(0)
	x := &expander{}
	var big []succ // the targets of the batch below, and more
	for i := range uint64(3000) {
		big = append(big, succ{key: k(1 + i)})
	}
	for _, wrap := range []bool{true, false} {
		x.newBatch()
		var out []succ
		for _, s := range big {
			out = x.keep(out, s, &none)
		}
		if len(out) != len(big) {
			t.Fatalf("%d of %d distinct targets kept", len(out), len(big))
		}
		gen := x.gen
		if wrap { // to 0, which is no generation: to 1, that of the batch above
			x.gen = 0xffff
		}
		x.newBatch()
		out = out[:0]
		for _, s := range []succ{{key: k(1)}, {key: k(2)}, {key: k(1)}, {key: k(3)}, {key: k(2), step: 1}, {key: k(3), step: 2},
			{key: k(2)}, {key: k(1003)}, {key: k(4)}, {key: k(5)}, {key: k(6)}, {key: k(1003)}} {
			out = x.keep(out, s, &src)
		}
		want := []struct {
			key   uint64
			known bool
		}{{1, false}, {2, false}, {2, true}, {3, true}, {1003, false}, {4, false}, {5, false}, {6, false}}
		if len(out) != len(want) {
			t.Fatalf("gen %#x: kept %v, want %v", gen, out, want)
		}
		for i, w := range want {
			s := out[i]
			if s.key.hdr != w.key || s.known != w.known || !s.known && s.h != s.key.tag() {
				t.Errorf("gen %#x: kept %d: to %d known %t h %#x, want to %d known %t (tag %#x)", gen, i, s.key.hdr, s.known, s.h, w.key, w.known, s.key.tag())
			}
		}
		if x.gen == 0 {
			t.Errorf("generation 0 in use: empty slots would count as this batch's")
		}
	}
}
