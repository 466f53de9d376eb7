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
// that stepping the shell gives, and cover the same units (whatever state
// number expand starts using templates at).
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
		for i := 0; i < r.States && bad < 3; i++ {
			k := r.nodes[i>>chunkBits][i&(chunkLen-1)].key()
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
		if len(x.memo.classes) == 0 || len(x.memo.classes) > r.States {
			t.Errorf("%s: %d classes for %d states", name, len(x.memo.classes), r.States)
		}
	}
}

// TestDedupe: dedupe marks known exactly the transitions whose target an
// earlier one of the batch has (and leaves a transition to its source
// known), gives the others their hash, and forgets earlier batches, also
// when its generation counter wraps.
func TestDedupe(t *testing.T) {
	k := func(i uint64) key { return key{hdr: i, rem: [maxTimers]uint32{uint32(i)}} }
	x := &expander{}
	var big []succ
	for i := range uint64(3000) {
		big = append(big, succ{key: k(1000 + i)})
	}
	for _, gen := range []uint32{0, 0xffff} {
		x.dedupe(big)
		x.gen = gen
		batch := []succ{{key: k(1)}, {key: k(2)}, {key: k(1)}, {key: k(3), known: true}, {key: k(2)}, {key: k(2)}, {key: k(1003)}}
		x.dedupe(batch)
		for i, want := range []bool{false, false, true, true, true, true, false} {
			s := batch[i]
			if s.known != want || !s.known && s.h != s.key.tag() {
				t.Errorf("gen %#x: transition %d to %v: known %t (want %t), h %#x (tag %#x)", gen, i, s.key.hdr, s.known, want, s.h, s.key.tag())
			}
		}
		if x.gen == 0 {
			t.Errorf("generation 0 in use: empty slots would count as this batch's")
		}
	}
}
