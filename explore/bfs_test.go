package explore

import "testing"

// TestTrim: trim leaves a big exploration's last chunk no longer than its
// nodes (a check of several maxRetries keeps every result), and every
// node where it was.
func TestTrim(t *testing.T) {
	ss := newStateSet()
	n := chunkLen + 10
	for i := range n {
		k := key{hdr: uint64(i)}
		ss.push(newNode(&k, int32(i-1), 0))
	}
	last := func() []node { return ss.chunks[len(ss.chunks)-1] }
	if cap(last()) != chunkLen {
		t.Fatalf("the last chunk holds %d nodes, want a whole chunk", cap(last()))
	}
	ss.trim()
	if len(ss.chunks) != 2 || cap(last())*32 > len(last())*32+8192 {
		t.Errorf("%d chunks, the last %d nodes in an array of %d", len(ss.chunks), len(last()), cap(last()))
	}
	for i := range int32(n) {
		if nd := ss.at(i); nd.hdr != uint64(i) || nd.parent != i-1 {
			t.Fatalf("node %d: %+v", i, *nd)
		}
	}
}
