package trace

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestMembersAreJSON: the members written as one piece are the ones the
// writer wrote field by field (no name needs an escape), for every type,
// state, stop reason and input.
func TestMembersAreJSON(t *testing.T) {
	for _, ty := range Types() {
		if got, want := typeMember[ty], `"type":"`+ty.String()+`"`; got != want {
			t.Errorf("type %d: %s, want %s", ty, got, want)
		}
	}
	for _, st := range retry.States() {
		if got, want := fromMember[st.Index()], `,"from":"`+string(st)+`"`; got != want {
			t.Errorf("from %s: %s, want %s", st, got, want)
		}
		if got, want := toMember[st.Index()], `,"to":"`+string(st)+`"`; got != want {
			t.Errorf("to %s: %s, want %s", st, got, want)
		}
	}
	for i, sr := range stopReasons {
		if got, want := messageStart[i], messageKey+`"`+string(sr)+`"`; got != want {
			t.Errorf("stop reason %s: %s, want %s", sr, got, want)
		}
		if stopReasonIndex(sr) != i {
			t.Errorf("stopReasonIndex(%s) = %d, want %d", sr, stopReasonIndex(sr), i)
		}
	}
	for _, in := range retry.Inputs() {
		if got, want := inputMember[in], `,"input":"`+in.String()+`"`; got != want {
			t.Errorf("input %d: %s, want %s", in, got, want)
		}
	}
}

// TestWriterLinesAreAppendJSON: the Writer, which takes a line's start
// from the line before when their times are equal, writes AppendJSON's
// bytes line for line, whatever the times (equal, fractions of a
// millisecond, the longest number, back in time).
func TestWriterLinesAreAppendJSON(t *testing.T) {
	var w Writer
	var want []byte
	for _, at := range []time.Duration{0, 0, 1500 * time.Microsecond, 1500 * time.Microsecond, 2 * time.Second,
		math.MaxInt64, math.MaxInt64, time.Nanosecond, 2 * time.Second, 2 * time.Second, 0} {
		r := &Record{T: at, Type: PromptResolved, Prompt: 1}
		w.Record(r)
		want = append(AppendJSON(want, r), '\n')
	}
	if !bytes.Equal(w.Bytes(), want) {
		t.Errorf("Writer wrote\n%s\nwant\n%s", w.Bytes(), want)
	}
}
