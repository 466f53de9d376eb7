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
		return strconv.AppendFloat(b, v, 'f', -1, 64), nil
	}
	q, err := json.Marshal(v) // exponent form, or not a number
	return append(b, q...), err
}
