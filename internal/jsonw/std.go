package jsonw

import (
	"encoding/json"
	"math"
	"strconv"
)

// htmlSafe marks the bytes encoding/json writes as they are in a string:
// printable ASCII other than '"', '\\', '<', '>' and '&'.
var htmlSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// AppendStdString appends s as encoding/json's Marshal writes a string
// (HTML characters escaped, unlike AppendString; U+2028 and U+2029
// escaped; invalid UTF-8 as \ufffd), byte for byte, without reflection:
// a string of printable ASCII is copied, any other is Marshal's.
func AppendStdString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if !htmlSafe[s[i]] {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// AppendStdFloat appends v as encoding/json's Marshal writes a float64,
// byte for byte, without reflection; NaN and the infinities are Marshal's
// error.
func AppendStdFloat(b []byte, v float64) ([]byte, error) {
	if abs := math.Abs(v); abs == 0 || abs >= 1e-6 && abs < 1e21 {
		if b, ok := appendFixed(b, v); ok {
			return b, nil
		}
		return strconv.AppendFloat(b, v, 'f', -1, 64), nil
	}
	q, err := json.Marshal(v) // exponent form, or not a number
	return append(b, q...), err
}

// fixedScales are the powers of ten appendFixed tries, each exact: the
// proxy's durations match at the first, its timestamps at the fourth.
var fixedScales = [...]float64{1e6, 1e5, 1e4, 1e3, 1e2, 1e1, 1}

// appendFixed appends v as strconv's shortest 'f' form does, at a
// fraction of its cost, when v is the float64 nearest a decimal d of at
// most six fraction digits (k) with |d|·10^k < 2^52, at least 1e-6: the
// proxy's times (epoch milliseconds with microseconds, durations in
// milliseconds with nanoseconds). Then float64 steps near v are shorter
// than 10^-k, so d is the one decimal of k fraction digits or fewer that
// reads as v, and so strconv's shortest: d's digits, its trailing zeros
// dropped. ok is false for any other v, which AppendFloat writes.
func appendFixed(b []byte, v float64) (_ []byte, ok bool) {
	a := math.Abs(v)
	if a < 1e-6 {
		return b, false
	}
	for i, scale := range fixedScales {
		s := a * scale
		if s >= 1<<52 {
			continue // 10^-k is not above v's float64 step
		}
		n := float64(uint64(s + 0.5))
		if n/scale != a { // IEEE division rounds n/10^k to its nearest float64
			continue
		}
		k := len(fixedScales) - 1 - i
		u := uint64(n)
		for k > 0 && u%10 == 0 { // the trailing zeros dropped
			u, k = u/10, k-1
		}
		// the digits, last first, from the end of d, two at a time: the
		// fraction's k, its point, then the integer's (at least its 0)
		// and the sign
		var d [26]byte
		j := len(d)
		for ; k >= 2; k -= 2 {
			q := u / 100
			r := (u - q*100) * 2
			j -= 2
			d[j], d[j+1] = digitPairs[r], digitPairs[r+1]
			u = q
		}
		if k == 1 {
			j--
			d[j] = byte('0' + u%10)
			u /= 10
		}
		if j < len(d) {
			j--
			d[j] = '.'
		}
		j = putUint(d[:], j, u)
		if v < 0 {
			j--
			d[j] = '-'
		}
		return append(b, d[j:]...), true
	}
	return b, false
}
