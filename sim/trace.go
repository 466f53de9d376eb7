package sim

import (
	"math"
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// Trace is the JSON Lines record of a simulated session: one object per
// line, each starting with "t" (virtual ms since start) and "type". The
// bytes are the contract: the same scenario gives byte-identical traces.
type Trace struct {
	buf   []byte
	lines int
}

// Bytes returns the trace (JSON Lines, each line ending in '\n').
func (tr *Trace) Bytes() []byte { return tr.buf }

// Lines is the number of lines written.
func (tr *Trace) Lines() int { return tr.lines }

// Reset empties the trace, keeping its memory.
func (tr *Trace) Reset() { tr.buf, tr.lines = tr.buf[:0], 0 }

func (tr *Trace) begin(t time.Duration, typ string) {
	tr.buf = append(tr.buf, `{"t":`...)
	tr.buf = strconv.AppendInt(tr.buf, t.Milliseconds(), 10)
	tr.buf = append(tr.buf, `,"type":"`...)
	tr.buf = append(tr.buf, typ...)
	tr.buf = append(tr.buf, '"')
}

func (tr *Trace) key(k string) {
	tr.buf = append(tr.buf, ',', '"')
	tr.buf = append(tr.buf, k...)
	tr.buf = append(tr.buf, '"', ':')
}

func (tr *Trace) str(k, v string) {
	tr.key(k)
	tr.buf = policy.AppendJSONString(tr.buf, v)
}

func (tr *Trace) int(k string, v int64) {
	tr.key(k)
	tr.buf = strconv.AppendInt(tr.buf, v, 10)
}

func (tr *Trace) bool(k string, v bool) {
	tr.key(k)
	tr.buf = strconv.AppendBool(tr.buf, v)
}

// num writes a float the way JavaScript's JSON.stringify does (non-finite
// numbers become null).
func (tr *Trace) num(k string, v float64) {
	tr.key(k)
	tr.buf = appendJSNumber(tr.buf, v)
}

func (tr *Trace) raw(k string, v []byte) {
	tr.key(k)
	tr.buf = append(tr.buf, v...)
}

func (tr *Trace) end() {
	tr.buf = append(tr.buf, '}', '\n')
	tr.lines++
}

// event writes a policy event with "t" first.
func (tr *Trace) event(t time.Duration, e policy.Event) {
	tr.buf = append(tr.buf, `{"t":`...)
	tr.buf = strconv.AppendInt(tr.buf, t.Milliseconds(), 10)
	tr.buf = append(tr.buf, ',')
	tr.buf = e.AppendJSONFields(tr.buf)
	tr.buf = append(tr.buf, '\n')
	tr.lines++
}

// appendJSNumber formats v as ECMAScript Number::toString does for
// JSON.stringify: integers without a fraction, the shortest round-trip
// digits, exponent form only below 1e-6 or from 1e21.
func appendJSNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v == 0 {
		return append(b, '0')
	}
	abs := math.Abs(v)
	if abs >= 1e21 || abs < 1e-6 {
		s := strconv.FormatFloat(v, 'e', -1, 64)
		// Go writes e+21 / e-07; JavaScript writes e+21 / e-7.
		out := make([]byte, 0, len(s))
		for i := 0; i < len(s); i++ {
			out = append(out, s[i])
			if (s[i] == '+' || s[i] == '-') && i > 0 && s[i-1] == 'e' {
				for i+1 < len(s)-1 && s[i+1] == '0' {
					i++
				}
			}
		}
		return append(b, out...)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}
