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
