package trace

import (
	"slices"
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// AppendJSON appends r as one trace line, {"t":N,"type":"NAME",...},
// without the line break. Strings are escaped as JavaScript's
// JSON.stringify does, numbers written as JavaScript writes them.
func AppendJSON(b []byte, r *Record) []byte {
	return AppendFields(appendStart(b, r.T), r)
}

// appendStart appends a line's start up to its "type": `{"t":N,`.
func appendStart(b []byte, t time.Duration) []byte {
	b = append(b, `{"t":`...)
	b = AppendMs(b, t)
	return append(b, ',')
}

// AppendMs appends d in milliseconds as JavaScript writes the number: an
// integer without a fraction, a fraction of a millisecond kept.
func AppendMs(b []byte, d time.Duration) []byte {
	if d%time.Millisecond == 0 {
		return jsonw.AppendInt(b, int64(d/time.Millisecond))
	}
	return jsonw.AppendNumber(b, float64(d)/float64(time.Millisecond))
}

// AppendFields appends r's JSON object from its "type" on, closing brace
// included: `"type":"NAME",...}`. The RPC server prefixes its own fields.
func AppendFields(b []byte, r *Record) []byte {
	switch r.Type {
	case AutoRetryStart:
		return r.Start.AppendJSONFields(b)
	case AutoRetryEnd:
		return r.End.AppendJSONFields(b)
	case RetryFallback:
		return r.Fallback.AppendJSONFields(b)
	}
	if r.Type < numTypes {
		b = append(b, typeMember[r.Type]...)
	} else {
		b = str(b, `"type":`, r.Type.String())
	}
	switch r.Type {
	case AgentRun:
		b = append(b, `,"kind":"`...)
		b = append(b, r.Run.String()...)
		b = append(b, '"')
		if r.Model != "" {
			b = str(b, `,"model":`, r.Model)
		}
	case MessageEnd:
		b = appendMessage(b, r)
	case Transition:
		b = appendEdge(b, &r.Edge)
	case AutoCompactionStart:
		b = str(b, `,"reason":`, r.Reason)
	case AutoCompactionEnd:
		e := &r.CompactionEnd
		if e.Result {
			b = append(b, `,"result":{"summary":"(simulated)"}`...)
		}
		b = boolean(b, `,"aborted":`, e.Aborted)
		b = boolean(b, `,"willRetry":`, e.WillRetry)
		if e.ErrorMessage != "" {
			b = str(b, `,"errorMessage":`, e.ErrorMessage)
		}
	case MarkUsageLimitReached:
		b = appendUsageLimit(b, &r.UsageLimit)
	case PromptResolved:
		b = num(b, `,"prompt":`, r.Prompt)
	case PromptRejected:
		b = num(b, `,"prompt":`, r.Prompt)
		b = str(b, `,"error":`, r.Error)
	case ContinueRejected:
		b = str(b, `,"error":`, r.Error)
	case Response:
		p := &r.Response
		if p.ID != "" {
			b = str(b, `,"id":`, p.ID)
		}
		b = str(b, `,"command":`, p.Command)
		b = boolean(b, `,"success":`, p.Success)
		if p.HasState {
			b = append(b, `,"data":`...)
			b = AppendState(b, &p.State)
		}
		if !p.Success {
			b = str(b, `,"error":`, p.Error)
		}
	case Final:
		b = appendFinal(b, &r.Final)
	}
	return append(b, '}')
}

// appendMessage appends a message_end's members after its type.
func appendMessage(b []byte, r *Record) []byte {
	if i := stopReasonIndex(r.Message.StopReason); i >= 0 {
		b = append(b, messageStart[i]...)
	} else {
		b = str(b, messageKey, string(r.Message.StopReason))
	}
	if r.Message.ErrorMessage != "" {
		b = append(b, `,"errorMessage":`...)
		b = jsonw.AppendString(b, r.Message.ErrorMessage)
	}
	b = append(b, '}')
	if r.Model != "" {
		b = str(b, `,"model":`, r.Model)
	}
	return b
}

// appendEdge appends a transition's members after its type.
func appendEdge(b []byte, e *Edge) []byte {
	b = state(b, fromMember, `,"from":`, e.From)
	b = str(b, `,"event":`, e.Event)
	b = state(b, toMember, `,"to":`, e.To)
	if e.Rule >= 0 {
		if in := e.Input; uint(in) < uint(len(inputMember)) {
			b = append(b, inputMember[in]...)
		} else {
			b = str(b, `,"input":`, in.String())
		}
		b = num(b, `,"rule":`, e.Rule)
	}
	return b
}

// appendUsageLimit appends a mark_usage_limit_reached line's members
// (AppendFields; a rare line, kept out of the common cases' function).
func appendUsageLimit(b []byte, u *UsageLimit) []byte {
	b = str(b, `,"provider":`, u.Provider)
	b = str(b, `,"sessionId":`, u.SessionID)
	b = append(b, `,"retryAfterMs":`...)
	if u.HasRetryAfter {
		b = jsonw.AppendNumber(b, u.RetryAfterMs)
	} else {
		b = append(b, "null"...)
	}
	b = str(b, `,"baseUrl":`, u.BaseURL)
	return boolean(b, `,"returns":`, u.Returns)
}

// appendFinal appends a final line's members (AppendFields: once a run).
func appendFinal(b []byte, f *FinalRecord) []byte {
	b = str(b, `,"state":`, string(f.State))
	b = num(b, `,"attempt":`, f.Attempt)
	b = boolean(b, `,"isRetrying":`, f.IsRetrying)
	b = append(b, `,"unresolvedPrompts":[`...)
	for i, p := range f.UnresolvedPrompts {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendInt(b, int64(p))
	}
	b = append(b, ']')
	return num(b, `,"turnsConsumed":`, f.TurnsConsumed)
}

// str, num and boolean append a member; k is its key with the comma
// before and the colon after (`,"from":`).
func str(b []byte, k, v string) []byte {
	return jsonw.AppendString(append(b, k...), v)
}

// typeMember[t] is the member `"type":"NAME"` of type t, and
// inputMember[in] the member `,"input":"NAME"` of a transition's input,
// each written as one piece (the names need no escape: TestMembersAreJSON).
var (
	typeMember = func() (m [numTypes]string) {
		for _, t := range Types() {
			m[t] = string(jsonw.AppendString([]byte(`"type":`), t.String()))
		}
		return m
	}()
	inputMember = func() (m []string) {
		for _, in := range retry.Inputs() {
			m = append(m, string(jsonw.AppendString([]byte(`,"input":`), in.String())))
		}
		return m
	}()
)

// The retry machine's states as a transition's "from" and "to" members,
// by retry.State.Index; the usual stop reasons (stopReasons) as a
// message_end's start up to its stopReason: each written as one piece.
var (
	fromMember, toMember = stateMembers(`,"from":`), stateMembers(`,"to":`)
	stopReasons          = [...]policy.StopReason{policy.StopReasonStop, policy.StopReasonError,
		policy.StopReasonToolUse, policy.StopReasonAborted, policy.StopReasonLength}
	messageStart = func() (m [len(stopReasons)]string) {
		for i, sr := range stopReasons {
			m[i] = string(jsonw.AppendString([]byte(messageKey), string(sr)))
		}
		return m
	}()
)

// messageKey is a message_end's start up to its stopReason's value.
const messageKey = `,"message":{"role":"assistant","stopReason":`

// stateMembers is member k of each state, by its Index.
func stateMembers(k string) []string {
	states := retry.States()
	m := make([]string, len(states))
	for _, st := range states {
		m[st.Index()] = string(jsonw.AppendString([]byte(k), string(st)))
	}
	return m
}

// state appends member k whose value v may be one of the retry machine's
// states, whose members are in m.
func state(b []byte, m []string, k, v string) []byte {
	if i := retry.State(v).Index(); uint(i) < uint(len(m)) {
		return append(b, m[i]...)
	}
	return str(b, k, v)
}

// stopReasonIndex is sr's index in stopReasons, or -1.
func stopReasonIndex(sr policy.StopReason) int {
	for i := range stopReasons {
		if stopReasons[i] == sr {
			return i
		}
	}
	return -1
}

func num(b []byte, k string, v int) []byte {
	return jsonw.AppendInt(append(b, k...), int64(v))
}

func boolean(b []byte, k string, v bool) []byte {
	return strconv.AppendBool(append(b, k...), v)
}

// Writer accumulates a JSON Lines trace.
type Writer struct {
	buf   []byte
	lines int
	// start holds the start of the last line written, `{"t":N,`, in
	// its first startLen bytes (0: none yet), and startT its time: most
	// lines have the time of the line before, and take its start as it is.
	start    [32]byte
	startLen int
	startT   time.Duration
	// memo keeps the recent lines of the types that repeat (memo.go):
	// nil until the first Reset, kept over the next ones.
	memo *memo
}

// Record implements Sink: it appends r as one line (AppendJSON's bytes).
func (w *Writer) Record(r *Record) {
	b := w.buf
	if n := len(b); w.startLen != 0 && r.T == w.startT {
		if cap(b)-n >= len(w.start) { // all of start in one move, then b up to its end
			*(*[len(w.start)]byte)(b[n : n+len(w.start)]) = w.start
			b = b[:n+w.startLen]
		} else {
			b = append(b, w.start[:w.startLen]...)
		}
	} else {
		b = appendStart(b, r.T)
		w.startLen, w.startT = 0, r.T
		if len(b)-n <= len(w.start) {
			w.startLen = copy(w.start[:], b[n:])
		}
	}
	if m := w.memo; m != nil {
		var k lineKey
		if k.of(r) {
			// The line kept as this line before the Reset, else line's search.
			if l := m.order[w.lines&(memoOrder-1)]; l != nil && w.lines < memoOrder && l.key.eq(&k) {
				b = append(b, l.fields...)
			} else {
				b = m.line(b, r, &k, w.lines)
			}
			w.buf = b
			w.lines++
			return
		}
	}
	w.buf = append(AppendFields(b, r), '\n')
	w.lines++
}

// Grow makes room for at least n more bytes, so that the next n bytes
// of records are written without allocating.
func (w *Writer) Grow(n int) { w.buf = slices.Grow(w.buf, n) }

// Bytes returns the trace written so far (each line ends in '\n').
func (w *Writer) Bytes() []byte { return w.buf }

// Lines is the number of lines written.
func (w *Writer) Lines() int { return w.lines }

// Reset empties the trace, keeping its memory. From its first Reset on,
// a Writer keeps a memo of the lines it writes (memo.go, about 13 KiB): a
// trace written again, or a line repeated, is copied, not written again.
func (w *Writer) Reset() {
	w.buf, w.lines = w.buf[:0], 0
	if w.memo == nil {
		w.memo = newMemo()
	}
}
