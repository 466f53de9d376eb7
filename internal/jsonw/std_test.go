package jsonw

import (
	"encoding/json"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// TestAppendStdLikeMarshal: AppendStdString and AppendStdFloat write
// encoding/json's bytes, for any string (arbitrary bytes, invalid UTF-8,
// HTML characters, U+2028) and any float64 (exponent forms, -0, NaN).
func TestAppendStdLikeMarshal(t *testing.T) {
	for _, s := range []string{"", "plain", "<&>", "a\u2028b", "bad\xffbyte", "\x00\x1f\b\f\n\r\t", `q"\`, "héllo"} {
		want, _ := json.Marshal(s)
		if got := AppendStdString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-6, 9.99e-7, 1e21, 1e20, 1.7e12, 123.456, math.NaN(), math.Inf(-1)} {
		want, werr := json.Marshal(v)
		got, err := AppendStdFloat(nil, v)
		if (err != nil) != (werr != nil) || werr == nil && string(got) != string(want) {
			t.Errorf("%v: %s %v, want %s %v", v, got, err, want, werr)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		s := string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		if r := rapid.String().Draw(t, "runes"); rapid.Bool().Draw(t, "runes?") {
			s = r
		}
		want, _ := json.Marshal(s)
		if got := AppendStdString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
		v := rapid.Float64().Draw(t, "v")
		if rapid.Bool().Draw(t, "bits?") {
			v = math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
		}
		wantF, werr := json.Marshal(v)
		gotF, err := AppendStdFloat(nil, v)
		if (err != nil) != (werr != nil) || werr == nil && string(gotF) != string(wantF) {
			t.Fatalf("%v: %s %v, want %s %v", v, gotF, err, wantF, werr)
		}
	})
}

// TestAppendFixed: the decimals of six fraction digits or fewer that the
// fast path writes (epoch milliseconds with microseconds, durations in
// milliseconds with nanoseconds, any such decimal of either sign, and
// the floats just beside them) are json.Marshal's bytes, and the proxy's
// times take the fast path.
func TestAppendFixed(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, v float64) {
		want, werr := json.Marshal(v)
		got, err := AppendStdFloat(nil, v)
		if err != nil || werr != nil || string(got) != string(want) {
			t.Fatalf("%v (bits %#x): %s %v, want %s %v", v, math.Float64bits(v), got, err, want, werr)
		}
	}
	for _, v := range []float64{1.733e12 + 0.123, 1733380000123.456, 0.041237, 12.5, 1e-6, 2e-6, 0.1, 100, 4503599627370.495, 450359962737.0495} {
		check(t, v)
		if _, ok := appendFixed(nil, v); !ok {
			t.Errorf("%v: not written by the fast path", v)
		}
	}
	scales := []float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7}
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(0, len(scales)-1).Draw(t, "k")
		n := rapid.OneOf(rapid.Int64Range(-1e7, 1e7), rapid.Int64Range(-1<<53, 1<<53), rapid.Int64Range(1.6e15, 1.9e15)).Draw(t, "n")
		v := float64(n) / scales[k]
		check(t, v)
		check(t, math.Nextafter(v, math.Inf(1)))
		check(t, math.Nextafter(v, math.Inf(-1)))
	})
}
