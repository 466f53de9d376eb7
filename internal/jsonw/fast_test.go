package jsonw

import (
	"math"
	"strconv"
	"testing"

	"pgregory.net/rapid"
)

// TestAppendIntLikeStrconv: AppendInt writes strconv.AppendInt's bytes, at
// the edges (each power of ten and the one below it, the extremes) and for
// any int64.
func TestAppendIntLikeStrconv(t *testing.T) {
	vs := []int64{0, 1, 9, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for p := int64(10); p > 0 && p <= math.MaxInt64/10*10; p *= 10 {
		vs = append(vs, p-1, p, p+1, -p+1, -p, -p-1)
		if p > math.MaxInt64/10 {
			break
		}
	}
	for _, v := range vs {
		if got, want := string(AppendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("AppendInt(%d) = %q, want %q", v, got, want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Int64().Draw(t, "v")
		if got, want := string(AppendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("AppendInt(%d) = %q, want %q", v, got, want)
		}
	})
}

// plainPrefixByByte is plainPrefix one byte at a time: the reference.
func plainPrefixByByte(s string) int {
	i := 0
	for i < len(s) && plainJSONByte[s[i]] {
		i++
	}
	return i
}

// TestPlainPrefixEightAtATime: the test of eight bytes at once finds the
// first byte to escape where the byte-by-byte test does: every byte value
// at every place of a word and of the tail, after plain text, and in any
// string.
func TestPlainPrefixEightAtATime(t *testing.T) {
	for c := 0; c < 256; c++ {
		for n := 1; n <= 24; n++ {
			for at := 0; at < n; at++ {
				b := []byte("abcdefghijklmnopqrstuvwx"[:n])
				b[at] = byte(c)
				if got, want := plainPrefix(string(b)), plainPrefixByByte(string(b)); got != want {
					t.Fatalf("byte %#x at %d of %q: plainPrefix %d, want %d", c, at, b, got, want)
				}
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := string(rapid.SliceOf(rapid.Byte()).Draw(t, "s"))
		if got, want := plainPrefix(s), plainPrefixByByte(s); got != want {
			t.Fatalf("%q: plainPrefix %d, want %d", s, got, want)
		}
	})
}

// BenchmarkAppendString: a trace's usual strings (a model id, an error
// text) written as JSON strings.
func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = AppendString(buf[:0], "claude-sonnet-4-5")
		buf = AppendString(buf, "529 overloaded_error")
	}
}

// BenchmarkAppendInt: a trace's usual numbers (a time in ms, an attempt).
func BenchmarkAppendInt(b *testing.B) {
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = AppendInt(buf[:0], 14000)
		buf = AppendInt(buf, 3)
	}
}
