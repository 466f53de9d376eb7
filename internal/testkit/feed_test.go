package testkit

import (
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// TestFeed: the blocks come in order, whole, however the reader reads.
func TestFeed(t *testing.T) {
	want := ""
	for i := 1; i <= 50; i++ {
		want += strconv.Itoa(i) + ","
	}
	block := func(i int) []byte { return []byte(strconv.Itoa(i) + ",") }
	for _, r := range []io.Reader{&Feed{N: 50, Block: block}, iotest.OneByteReader(&Feed{N: 50, Block: block})} {
		got, err := io.ReadAll(r)
		if err != nil || string(got) != want {
			t.Fatalf("%q, %v", got, err)
		}
	}
	if err := iotest.TestReader(&Feed{N: 50, Block: block}, []byte(want)); err != nil {
		t.Fatal(err)
	}
	if HeapAlloc() == 0 {
		t.Fatal("no heap")
	}
}
