package trace

import (
	"slices"
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/internal/jsonw"
)

// AppendJSON appends r as one trace line, {"t":N,"type":"NAME",...},
// without the line break. Strings are escaped as JavaScript's
// JSON.stringify does, numbers written as JavaScript writes them.
func AppendJSON(b []byte, r *Record) []byte {
	b = append(b, `{"t":`...)
	b = AppendMs(b, r.T)
	b = append(b, ',')
	return AppendFields(b, r)
}

// AppendMs appends d in milliseconds as JavaScript writes the number: an
// integer without a fraction, a fraction of a millisecond kept.
func AppendMs(b []byte, d time.Duration) []byte {
	if d%time.Millisecond == 0 {
		return strconv.AppendInt(b, int64(d/time.Millisecond), 10)
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
	b = append(b, `"type":"`...)
	b = append(b, r.Type.String()...)
	b = append(b, '"')
	switch r.Type {
	case AgentRun:
		b = append(b, `,"kind":"`...)
		b = append(b, r.Run.String()...)
		b = append(b, '"')
		if r.Model != "" {
			b = str(b, `,"model":`, r.Model)
		}
	case MessageEnd:
		b = name(b, `,"message":{"role":"assistant","stopReason":`, string(r.Message.StopReason))
		if r.Message.ErrorMessage != "" {
			b = append(b, `,"errorMessage":`...)
			b = jsonw.AppendString(b, r.Message.ErrorMessage)
		}
		b = append(b, '}')
		if r.Model != "" {
			b = str(b, `,"model":`, r.Model)
		}
	case Transition:
		b = name(b, `,"from":`, r.Edge.From)
		b = str(b, `,"event":`, r.Edge.Event)
		b = name(b, `,"to":`, r.Edge.To)
		if r.Edge.Rule >= 0 {
			b = name(b, `,"input":`, r.Edge.Input.String())
			b = num(b, `,"rule":`, r.Edge.Rule)
		}
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
		u := &r.UsageLimit
		b = str(b, `,"provider":`, u.Provider)
		b = str(b, `,"sessionId":`, u.SessionID)
		b = append(b, `,"retryAfterMs":`...)
		if u.HasRetryAfter {
			b = jsonw.AppendNumber(b, u.RetryAfterMs)
		} else {
			b = append(b, "null"...)
		}
		b = str(b, `,"baseUrl":`, u.BaseURL)
		b = boolean(b, `,"returns":`, u.Returns)
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
		f := &r.Final
		b = str(b, `,"state":`, string(f.State))
		b = num(b, `,"attempt":`, f.Attempt)
		b = boolean(b, `,"isRetrying":`, f.IsRetrying)
		b = append(b, `,"unresolvedPrompts":[`...)
		for i, p := range f.UnresolvedPrompts {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(p), 10)
		}
		b = append(b, ']')
		b = num(b, `,"turnsConsumed":`, f.TurnsConsumed)
	}
	return append(b, '}')
}

// str, num and boolean append a member; k is its key with the comma
// before and the colon after (`,"from":`).
func str(b []byte, k, v string) []byte {
	return jsonw.AppendString(append(b, k...), v)
}

// name appends a member whose value is one of the package's own names
// (a state, an input), which need no escape; anything else is escaped.
func name(b []byte, k, v string) []byte {
	if !isName(v) {
		return str(b, k, v)
	}
	b = append(b, k...)
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// isName reports whether s is made of lower-case letters, '_' and ':'.
func isName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && c != '_' && c != ':' {
			return false
		}
	}
	return true
}

func num(b []byte, k string, v int) []byte {
	return strconv.AppendInt(append(b, k...), int64(v), 10)
}

func boolean(b []byte, k string, v bool) []byte {
	return strconv.AppendBool(append(b, k...), v)
}

// Writer accumulates a JSON Lines trace.
type Writer struct {
	buf   []byte
	lines int
}

// Record implements Sink: it appends r as one line.
func (w *Writer) Record(r *Record) {
	w.buf = AppendJSON(w.buf, r)
	w.buf = append(w.buf, '\n')
	w.lines++
}

// Grow makes room for at least n more bytes, so that the next n bytes
// of records are written without allocating.
func (w *Writer) Grow(n int) { w.buf = slices.Grow(w.buf, n) }

// Bytes returns the trace written so far (each line ends in '\n').
func (w *Writer) Bytes() []byte { return w.buf }

// Lines is the number of lines written.
func (w *Writer) Lines() int { return w.lines }

// Reset empties the trace, keeping its memory.
func (w *Writer) Reset() { w.buf, w.lines = w.buf[:0], 0 }
