package policy

import (
	"math"
	"strconv"
	"time"
)

// AppendJSNumber appends v as JavaScript's JSON.stringify writes a number
// (ECMAScript Number::toString): integers without a fraction, otherwise the
// shortest digits that read back as v, exponent form only below 1e-6 or from
// 1e21 (1e+21, 1.5e-7), -0 as 0, and NaN or an infinity as null.
func AppendJSNumber(b []byte, v float64) []byte {
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

// durationMs is d in milliseconds with its fraction kept: whole
// milliseconds exactly, and the sub-millisecond part to the nanosecond as far
// as a float64 carries it (2500 µs is 2.5, 999 µs is 0.999).
func durationMs(d time.Duration) float64 {
	return float64(d/time.Millisecond) + float64(d%time.Millisecond)/float64(time.Millisecond)
}
