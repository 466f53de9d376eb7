package trace

import (
	"math"
	"unsafe"
)

// A trace repeats its lines: a session reset and run again writes the
// same lines as before, and within a trace a chain's continues, its
// errors, its elapsed backoffs and its run ends are the same line each
// time but for the time. A Writer, once reset, keeps the fields
// (AppendFields' bytes) of the recent lines of the types that repeat, by
// what they are written from (lineKey), and copies them when a line's key
// equals a kept one. (A Writer written once, as most are, keeps none: the
// memo would cost it more than it saves.)

// memoWays is how many lines a Writer keeps of each type it keys, and
// memoBytes how many bytes of fields in all: when they are used up, the
// memo starts again empty. A Writer's memo takes about 13 KiB, allocated
// at its first Reset, and keeps alive the strings of at most
// memoRows*memoWays keys.
const (
	memoWays  = 8
	memoBytes = 4096
)

// memoRow is the row of the memo of each type that has one, of memoRows
// (lineKey.of keys those types alone).
const memoRows = 8

var memoRow = [numTypes]uint8{AgentRun: 0, MessageEnd: 1, AgentRunEnd: 2, Transition: 3, AutoRetryStart: 4,
	AutoRetryEnd: 5, PromptResolved: 6, Final: 7}

// lineKey is its type and everything a line's fields are written from, its strings
// by their bytes' address and length: two lines of equal keys have the
// same fields (AppendFields' bytes). Strings of equal bytes at two
// addresses make two keys (a line written afresh, not a wrong one); the
// usual strings are the same bytes each time (a scenario's model and
// error messages, the tables' state and event names). A float64 is keyed
// by its bits (0 and -0 make two keys, as two strings of equal bytes do).
type lineKey struct {
	p    [3]unsafe.Pointer
	l    [3]int
	n    [3]int
	f    uint64
	flag uint64
}

// set sets key string i to s.
func (k *lineKey) set(i int, s string) { k.p[i], k.l[i] = unsafe.Pointer(unsafe.StringData(s)), len(s) }

// of sets k, a zero key, to r's (the type in flag's second byte, so that
// no key is zero); it is false when r's type has no memo or
// r is a final line with more than one unresolved prompt.
func (k *lineKey) of(r *Record) bool {
	switch r.Type {
	case AgentRun:
		k.flag = uint64(r.Run)
		k.set(0, r.Model)
	case MessageEnd:
		k.set(0, string(r.Message.StopReason))
		k.set(1, r.Message.ErrorMessage)
		k.set(2, r.Model)
	case AgentRunEnd:
	case Transition:
		e := &r.Edge
		k.n[0], k.n[1] = e.Rule, int(e.Input)
		k.set(0, e.From)
		k.set(1, e.Event)
		k.set(2, e.To)
	case AutoRetryStart:
		k.n[0], k.n[1], k.f = r.Start.Attempt, r.Start.MaxAttempts, math.Float64bits(r.Start.DelayMs)
		k.set(0, r.Start.ErrorMessage)
	case AutoRetryEnd:
		k.n[0] = r.End.Attempt
		k.set(0, r.End.FinalError)
		if r.End.Success {
			k.flag = 1
		}
	case PromptResolved:
		k.n[0] = r.Prompt
	case Final:
		f := &r.Final
		if len(f.UnresolvedPrompts) > 1 {
			return false
		}
		k.n[0], k.n[1], k.n[2] = f.Attempt, f.TurnsConsumed, -1
		k.set(0, string(f.State))
		if len(f.UnresolvedPrompts) == 1 {
			k.n[2] = f.UnresolvedPrompts[0]
		}
		if f.IsRetrying {
			k.flag = 1
		}
	default:
		return false
	}
	k.flag |= uint64(r.Type) << 8
	return true
}

// eq reports whether k and o are equal keys. (memo.find tests first what
// tells a type's usual lines apart: a transition's rule, a retry's attempt,
// a run's kind, a message's stop reason.)
func (k *lineKey) eq(o *lineKey) bool {
	return k.n[0] == o.n[0] && k.flag == o.flag && k.p[0] == o.p[0] && k.p[1] == o.p[1] && k.p[2] == o.p[2] &&
		k.l[0] == o.l[0] && k.l[1] == o.l[1] && k.l[2] == o.l[2] && k.n[1] == o.n[1] && k.n[2] == o.n[2] && k.f == o.f
}

// memoOrder is how many of a trace's first lines the memo remembers in
// order: the lines written after a Reset are first looked for where the
// lines written before it were.
const memoOrder = 256

// newMemo returns an empty memo.
func newMemo() *memo { return &memo{buf: make([]byte, 0, memoBytes)} }

// memo is a Writer's kept lines, a row of memoWays for each type keyed
// (each row replacing its oldest first), their fields in buf, and which
// line was kept as the trace's first, second... (order; nil: none).
type memo struct {
	rows [memoRows]struct {
		lines [memoWays]memoLine
		next  uint8
	}
	order [memoOrder]*memoLine
	buf   []byte
}

// memoLine is a kept line: its key and its fields with the line's end
// '\n' (a piece of memo.buf).
type memoLine struct {
	key    lineKey
	fields []byte
}

// line appends the fields of r, the trace's line number i, and the
// line's end '\n', r's key being k, when the line kept as line i
// (Writer.Record tries it first) is not k's: the kept ones when k's are
// kept, else AppendFields', then kept in place of the row's oldest.
func (m *memo) line(b []byte, r *Record, k *lineKey, i int) []byte {
	if uint(i) >= memoOrder {
		b, _ = m.find(b, r, k)
		return b
	}
	b, m.order[i] = m.find(b, r, k)
	return b
}

// find is line's search of r's row, and the keeping of a new line; l is
// the line of key k, nil when it is too long to keep.
func (m *memo) find(b []byte, r *Record, k *lineKey) (_ []byte, l *memoLine) {
	row := &m.rows[memoRow[r.Type]&(memoRows-1)]
	for i := range row.lines {
		// What tells a type's usual lines apart first, without a call.
		if l = &row.lines[i]; l.key.n[0] == k.n[0] && l.key.flag == k.flag && l.key.p[0] == k.p[0] && l.key.eq(k) {
			return append(b, l.fields...), l
		}
	}
	n := len(b)
	b = append(AppendFields(b, r), '\n')
	fields := b[n:]
	if len(fields) > memoBytes/8 {
		return b, nil
	}
	if len(m.buf)+len(fields) > memoBytes {
		*m = memo{buf: m.buf[:0]}
	}
	l = &row.lines[row.next]
	row.next = (row.next + 1) % memoWays
	n = len(m.buf)
	m.buf = append(m.buf, fields...)
	*l = memoLine{key: *k, fields: m.buf[n:len(m.buf):len(m.buf)]}
	return b, l
}
