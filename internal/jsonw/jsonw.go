package jsonw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Compact returns v as compact JSON without HTML escaping (fmt's %v when
// encoding/json cannot write it), for messages that quote a value.
func Compact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// AppendNumber appends v as JavaScript's JSON.stringify writes a number
// (ECMAScript Number::toString): integers without a fraction, otherwise the
// shortest digits that read back as v, exponent form only below 1e-6 or from
// 1e21 (1e+21, 1.5e-7), -0 as 0, and NaN or an infinity as null.
func AppendNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v == 0 {
		return append(b, '0')
	}
	if v == math.Trunc(v) && v > -1e15 && v < 1e15 { // an integer: its digits (the common case)
		return strconv.AppendInt(b, int64(v), 10)
	}
	abs := math.Abs(v)
	if abs >= 1e21 || abs < 1e-6 {
		// Go writes e+21 and e-07; JavaScript writes e+21 and e-7.
		start := len(b)
		b = strconv.AppendFloat(b, v, 'e', -1, 64)
		for i := start; i < len(b)-2; i++ {
			if b[i] == 'e' {
				j := i + 2 // first exponent digit, after the sign
				k := j
				for k < len(b)-1 && b[k] == '0' {
					k++
				}
				return append(b[:j], b[k:]...)
			}
		}
		return b
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

const hexDigits = "0123456789abcdef"

// plainJSONByte marks the bytes written as they are in a JSON string:
// printable ASCII other than '"' and '\\'.
var plainJSONByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string the way JavaScript's
// JSON.stringify writes it: only '"', '\\' and control characters are
// escaped (no HTML escaping, unlike encoding/json), lone surrogates cannot
// occur in Go strings, and invalid UTF-8 bytes become U+FFFD.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	// Most strings need no escape: find the first byte that might.
	i := 0
	for i < len(s) && plainJSONByte[s[i]] {
		i++
	}
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = utf8.AppendRune(b, utf8.RuneError)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
