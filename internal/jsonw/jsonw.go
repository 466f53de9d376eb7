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
		return AppendInt(b, int64(v))
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
	i := plainPrefix(s)
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

// Bytes repeated in every byte of a word, for plainPrefix's tests of eight
// bytes at once.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainPrefix is the length of s's longest prefix of plain bytes
// (plainJSONByte), tested eight bytes at a time: a string of 8 bytes or
// more word by word, its last eight at once, one of 4 to 7 bytes as its
// first four and last four together; from a word that may hold a byte to
// escape on, and in a string shorter than four, byte by byte.
func plainPrefix(s string) int {
	i := 0
	switch {
	case len(s) >= 8:
		for ; i+8 <= len(s); i += 8 {
			if special(word(s, i)) {
				break
			}
		}
		if i+8 > len(s) && !special(word(s, len(s)-8)) {
			return len(s)
		}
	case len(s) >= 4:
		if !special(uint64(half(s, 0)) | uint64(half(s, len(s)-4))<<32) {
			return len(s)
		}
	}
	for i < len(s) && plainJSONByte[s[i]] {
		i++
	}
	return i
}

// half is the four bytes of s from i, the first lowest.
func half(s string, i int) uint32 {
	s = s[i : i+4]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// word is the eight bytes of s from i, the first lowest.
func word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// special reports whether a byte of w may need an escape: one under 0x20,
// '"', '\\' or with its high bit set (the usual tests for a byte below n
// and for a zero byte, exact as to whether there is one).
func special(w uint64) bool {
	q, bs := w^(ones*'"'), w^(ones*'\\')
	return ((w-ones*0x20)&^w|(q-ones)&^q|(bs-ones)&^bs|w)&highs != 0
}

// digitPairs holds "00" to "99", for AppendInt's two digits at a time.
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// AppendInt appends v in decimal, as strconv.AppendInt(b, v, 10) does
// (the trace's times, counts and ids), two digits at a time.
func AppendInt(b []byte, v int64) []byte {
	if uint64(v) < 10 {
		return append(b, byte('0'+v))
	}
	if uint64(v) < 100 {
		return append(b, digitPairs[v*2], digitPairs[v*2+1])
	}
	var buf [20]byte
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	i := putUint(buf[:], len(buf), u)
	if v < 0 {
		b = append(b, '-')
	}
	return append(b, buf[i:]...)
}

// putUint writes u's decimal digits (at least one), two at a time, to
// the end of d[:j], and returns where they begin.
func putUint(d []byte, j int, u uint64) int {
	for u >= 100 {
		q := u / 100
		r := (u - q*100) * 2
		j -= 2
		d[j], d[j+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		j -= 2
		d[j], d[j+1] = digitPairs[u*2], digitPairs[u*2+1]
		return j
	}
	j--
	d[j] = byte('0' + u)
	return j
}
