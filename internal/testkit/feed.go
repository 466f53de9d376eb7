// For the tests that show a reader's memory stays bounded: an input made
// block by block as it is read (never whole in memory), and the heap in
// use; and (cputime_*.go) the process's CPU time for the benchmarks that
// report it, which a machine busy with other work does not inflate as it
// does the wall clock.

package testkit

import (
	"io"
	"runtime"
)

// Feed is an input of N blocks, Block(1) to Block(N), each made when the
// reader reaches it (Block may also note the moment, e.g. take HeapAlloc).
type Feed struct {
	N     int
	Block func(i int) []byte
	i     int
	rest  []byte
}

// Read implements io.Reader.
func (f *Feed) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w := 0
	for w < len(p) {
		if len(f.rest) == 0 {
			if f.i == f.N {
				break
			}
			f.i++
			f.rest = f.Block(f.i)
		}
		k := copy(p[w:], f.rest)
		f.rest = f.rest[k:]
		w += k
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// HeapAlloc is the heap in use after a collection.
func HeapAlloc() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
