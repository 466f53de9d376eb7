package trace

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// memoPools are the strings memo records draw from, by field: few, so
// that lines repeat, with equal bytes at two addresses (a clone), other
// bytes of the same length, a prefix at the same address, the empty
// string, one that needs escaping and one too long for the memo to keep.
func memoPools() map[string][]string {
	long, e, m := strings.Repeat("overloaded ", 60), "529 overloaded_error", "claude-sonnet-4-5"
	return map[string][]string{
		"error": {"", e, strings.Clone(e), e[:len(e)-1], "529 overloaded_errox", "a \"quoted\"\n<é>", long, strings.Clone(long)},
		"model": {"", m, strings.Clone(m), m[:6], "claude-sonnet-4-6"},
		"state": {"idle", "backoff", strings.Clone("backoff"), "backoff"[:4], "odd"},
		"event": {"retry", strings.Clone("retry"), "rerun"},
	}
}

// memoRecord draws a record of a type the Writer keeps (and a few it does
// not), from few values, so that lines repeat, with the same strings at
// the same and at other addresses.
func memoRecord(t *rapid.T, pools map[string][]string) *Record {
	str := func(pool, label string) string { return rapid.SampledFrom(pools[pool]).Draw(t, label) }
	small := func(label string) int { return rapid.IntRange(-1, 2).Draw(t, label) }
	ms := time.Millisecond
	r := &Record{T: time.Duration(rapid.IntRange(0, 3).Draw(t, "t")) * 500 * time.Microsecond,
		Type: rapid.SampledFrom([]Type{AgentRun, MessageEnd, AgentRunEnd, Transition, AutoRetryStart, AutoRetryEnd,
			PromptResolved, Final, PromptRejected, AutoCompactionStart}).Draw(t, "type")}
	switch r.Type {
	case AgentRun:
		r.Run, r.Model = RunKind(rapid.IntRange(0, 1).Draw(t, "run")), str("model", "model")
	case MessageEnd:
		r.Message = Message{StopReason: rapid.SampledFrom(append(stopReasons[:], "odd")).Draw(t, "stop"),
			ErrorMessage: str("error", "error"), Input: int64(small("input"))}
		r.Model = str("model", "model")
	case Transition:
		r.Edge = Edge{From: str("state", "from"), Event: str("event", "event"), To: str("state", "to"),
			Input: retry.Input(rapid.IntRange(0, 2).Draw(t, "in")), Rule: small("rule")}
	case AutoRetryStart:
		delay := rapid.SampledFrom([]float64{0, math.Copysign(0, -1), 2000, 0.999, math.NaN(), math.Inf(1), 1e21}).Draw(t, "delay")
		r.Start = policy.AutoRetryStart{Attempt: small("attempt"), MaxAttempts: small("max"), DelayMs: delay, ErrorMessage: str("error", "error")}
	case AutoRetryEnd:
		r.End = policy.AutoRetryEnd{Success: rapid.Bool().Draw(t, "success"), Attempt: small("attempt"), FinalError: str("error", "error")}
	case PromptResolved, PromptRejected:
		r.Prompt, r.Error = small("prompt"), str("error", "error")
	case Final:
		r.Final = FinalRecord{State: retry.State(str("state", "state")), Attempt: small("attempt"), IsRetrying: rapid.Bool().Draw(t, "retrying"),
			UnresolvedPrompts: rapid.SliceOfN(rapid.IntRange(1, 2), 0, 2).Draw(t, "prompts"), TurnsConsumed: small("turns")}
	case AutoCompactionStart:
		r.Reason = str("error", "reason")
	}
	r.T += time.Duration(rapid.IntRange(0, 1).Draw(t, "later")) * ms
	return r
}

// TestWriterMemoWritesAppendJSON: lines the Writer takes from its memo of
// recent lines are AppendJSON's, line for line, over Resets that write
// the same lines again, some of them changed, whatever repeats: the same
// strings at other addresses, -0 and NaN delays, lines too long to keep,
// more lines of a type than the memo keeps.
func TestWriterMemoWritesAppendJSON(t *testing.T) {
	pools := memoPools()
	rapid.Check(t, func(t *rapid.T) {
		var w Writer
		var records []*Record
		for range rapid.IntRange(1, 60).Draw(t, "lines") {
			records = append(records, memoRecord(t, pools))
		}
		for run := range rapid.IntRange(1, 4).Draw(t, "runs") {
			w.Reset()
			var want []byte
			for i := range records {
				if run > 0 && rapid.IntRange(0, 3).Draw(t, "change") == 0 {
					records[i] = memoRecord(t, pools)
				}
				w.Record(records[i])
				want = append(AppendJSON(want, records[i]), '\n')
			}
			if !bytes.Equal(w.Bytes(), want) {
				t.Fatalf("run %d: Writer wrote\n%s\nwant\n%s", run, w.Bytes(), want)
			}
		}
	})
}

// TestWriterMemoIsBounded: a Writer fed ever new lines keeps at most
// memoBytes of them, and reuses that memory.
func TestWriterMemoIsBounded(t *testing.T) {
	var w Writer
	r := &Record{Type: AutoRetryStart, Start: policy.AutoRetryStart{Attempt: 1, MaxAttempts: 3, ErrorMessage: "529"}}
	for i := range 10_000 {
		r.Start.DelayMs = float64(i)
		w.Record(r)
		w.Reset()
	}
	if w.memo == nil || cap(w.memo.buf) > memoBytes {
		t.Fatalf("memo %v", w.memo)
	}
	if n := testing.AllocsPerRun(100, func() { r.Start.DelayMs++; w.Record(r); w.Reset() }); n != 0 {
		t.Errorf("%.1f allocations a new line, want 0", n)
	}
}
