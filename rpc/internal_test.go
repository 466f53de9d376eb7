package rpc

import (
	"strconv"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/trace"
)

// TestEventWriter: the events a trace record becomes, in order, with and
// without "t": a run's messages (the prompt's user message, then each
// assistant message as its message_end wrote it) go with its agent_end;
// records that are not events are dropped.
func TestEventWriter(t *testing.T) {
	const ms = time.Millisecond
	sonnet := "claude-sonnet-4-5"
	tests := []struct {
		r    trace.Record
		want string // without "t"; "" = dropped
	}{
		{trace.Record{T: 5 * ms, Type: trace.AgentRun, Run: trace.RunPrompt, Model: sonnet}, `{"type":"agent_start"}`},
		{trace.Record{T: 5 * ms, Type: trace.MessageEnd, Model: sonnet, Message: trace.Message{StopReason: policy.StopReasonToolUse, Input: 1200, CacheRead: 300}},
			`{"type":"message_end","message":{"role":"assistant","stopReason":"toolUse","content":[{"type":"toolCall","id":"call_1","name":"simulated_tool","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":0,"cacheRead":300,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000005},"model":"claude-sonnet-4-5"}`},
		{trace.Record{T: 1500 * time.Microsecond * 10, Type: trace.MessageEnd, Model: "m-\"2\"", Message: trace.Message{StopReason: policy.StopReasonError, ErrorMessage: "529 \"overloaded\""}},
			`{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 \"overloaded\"","content":[],"api":"anthropic-messages","provider":"anthropic","model":"m-\"2\"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000015},"model":"m-\"2\""}`},
		{trace.Record{T: 15 * ms, Type: trace.AgentRunEnd},
			`{"type":"agent_end","messages":[{"role":"user","content":[{"type":"text","text":"hi \"there\""}],"timestamp":1771200000005},` +
				`{"role":"assistant","stopReason":"toolUse","content":[{"type":"toolCall","id":"call_1","name":"simulated_tool","arguments":{}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1200,"output":0,"cacheRead":300,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000005},` +
				`{"role":"assistant","stopReason":"error","errorMessage":"529 \"overloaded\"","content":[],"api":"anthropic-messages","provider":"anthropic","model":"m-\"2\"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200000015}]}`},
		{trace.Record{T: 16 * ms, Type: trace.Transition, Edge: trace.Edge{From: "idle", Event: "retry", To: "backoff"}}, ""},
		{trace.Record{T: 16 * ms, Type: trace.AutoRetryStart, Start: policy.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529"}},
			`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529"}`},
		{trace.Record{T: 2016 * ms, Type: trace.AgentRun, Run: trace.RunContinue, Model: sonnet}, `{"type":"agent_start"}`},
		{trace.Record{T: 2016 * ms, Type: trace.MessageEnd, Message: trace.Message{StopReason: policy.StopReasonAborted, ErrorMessage: "Request was aborted"}},
			`{"type":"message_end","message":{"role":"assistant","stopReason":"aborted","errorMessage":"Request was aborted","content":[],"api":"anthropic-messages","provider":"anthropic","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200002016}}`},
		{trace.Record{T: 2016 * ms, Type: trace.AgentRunEnd},
			`{"type":"agent_end","messages":[{"role":"assistant","stopReason":"aborted","errorMessage":"Request was aborted","content":[],"api":"anthropic-messages","provider":"anthropic","model":"","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"timestamp":1771200002016}]}`},
		{trace.Record{T: 2016 * ms, Type: trace.AutoRetryEnd, End: policy.AutoRetryEnd{Success: true, Attempt: 1}}, `{"type":"auto_retry_end","success":true,"attempt":1}`},
		{trace.Record{T: 2016 * ms, Type: trace.AutoCompactionStart, Reason: "overflow"}, `{"type":"auto_compaction_start","reason":"overflow"}`},
		{trace.Record{T: 2016 * ms, Type: trace.AutoCompactionEnd}, `{"type":"auto_compaction_end","aborted":false,"willRetry":false}`},
		{trace.Record{T: 2016 * ms, Type: trace.PromptResolved, Prompt: 1}, `{"type":"prompt_resolved","prompt":1}`},
		{trace.Record{T: 2016 * ms, Type: trace.RetryFallback, Fallback: policy.RetryFallback{From: "a", To: "b"}}, `{"type":"retry_fallback","from":"a","to":"b"}`},
		{trace.Record{Type: trace.Response, Response: trace.ResponseRecord{Command: "abort", Success: true}}, ""},
		{trace.Record{Type: trace.Final}, ""},
		{trace.Record{Type: trace.MarkUsageLimitReached}, ""},
		{trace.Record{Type: trace.PromptRejected, Prompt: 2}, ""},
		{trace.Record{Type: trace.ContinueRejected, Error: "x"}, ""},
	}
	sc := &scenario.Scenario{EpochMs: 1771200000000, Provider: "anthropic"}
	plain, withT := newEventWriter(sc, false), newEventWriter(sc, true)
	plain.setPrompt(`hi "there"`)
	withT.setPrompt(`hi "there"`)
	for _, tt := range tests {
		want, wantT := "", ""
		if tt.want != "" {
			want = tt.want + "\n"
			wantT = `{"t":` + strconv.FormatInt(tt.r.T.Milliseconds(), 10) + "," + tt.want[1:] + "\n"
		}
		if got := string(plain.append(nil, &tt.r)); got != want {
			t.Errorf("%s record at %v:\n got %s\nwant %s", tt.r.Type, tt.r.T, got, want)
		}
		if got := string(withT.append(nil, &tt.r)); got != wantT {
			t.Errorf("%s record at %v with t:\n got %s\nwant %s", tt.r.Type, tt.r.T, got, wantT)
		}
	}
}
