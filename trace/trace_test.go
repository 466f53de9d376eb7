package trace_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/trace"
)

// samples has a record of every type, with its optional fields present and
// absent.
func samples() []trace.Record {
	ms := time.Millisecond
	return []trace.Record{
		{T: 0, Type: trace.AgentRun},
		{T: 2000 * ms, Type: trace.AgentRun, Run: trace.RunContinue, Model: "m-1"},
		{T: 5 * ms, Type: trace.MessageEnd, Message: trace.Message{StopReason: policy.StopReasonStop}},
		{T: 5 * ms, Type: trace.MessageEnd, Message: trace.Message{StopReason: policy.StopReasonError, ErrorMessage: "529 \"overloaded\" <é>\n"}, Model: "m-1"},
		{T: 5 * ms, Type: trace.AgentRunEnd},
		{T: 5 * ms, Type: trace.Transition, Edge: trace.Edge{From: "idle", Event: "retry", To: "backoff", Input: retry.InputRetryable, Rule: 2}},
		{T: 5 * ms, Type: trace.Transition, Edge: trace.Edge{From: "idle", Event: "retry", To: "backoff", Rule: -1}},
		{T: 999 * time.Microsecond, Type: trace.AutoRetryStart, Start: policy.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 0.999, ErrorMessage: "x"}},
		{T: 7 * ms, Type: trace.AutoRetryEnd, End: policy.AutoRetryEnd{Success: true, Attempt: 2}},
		{T: 7 * ms, Type: trace.AutoRetryEnd, End: policy.AutoRetryEnd{Attempt: 2, FinalError: "Retry cancelled"}},
		{T: 8 * ms, Type: trace.AutoCompactionStart, Reason: "overflow"},
		{T: 8 * ms, Type: trace.AutoCompactionEnd, CompactionEnd: trace.CompactionEnd{Result: true, WillRetry: true}},
		{T: 8 * ms, Type: trace.AutoCompactionEnd, CompactionEnd: trace.CompactionEnd{ErrorMessage: "failed"}},
		{T: 9 * ms, Type: trace.MarkUsageLimitReached, UsageLimit: trace.UsageLimit{Provider: "p", SessionID: "s", RetryAfterMs: 1500.5, HasRetryAfter: true, BaseURL: "u", Returns: true}},
		{T: 9 * ms, Type: trace.MarkUsageLimitReached, UsageLimit: trace.UsageLimit{Provider: "p", SessionID: "s", BaseURL: "u"}},
		{T: 10 * ms, Type: trace.PromptResolved, Prompt: 3},
		{T: 10 * ms, Type: trace.PromptRejected, Prompt: 4, Error: "busy"},
		{T: 10 * ms, Type: trace.ContinueRejected, Error: "no"},
		{T: 11 * ms, Type: trace.Response, Response: trace.ResponseRecord{ID: "a", Command: "abort", Success: true}},
		{T: 11 * ms, Type: trace.Response, Response: trace.ResponseRecord{Command: "prompt", Error: "busy"}},
		{T: 11 * ms, Type: trace.Response, Response: trace.ResponseRecord{ID: "s", Command: "get_state", Success: true, HasState: true,
			State: trace.SessionState{IsStreaming: true, MessageCount: 2, AutoCompactionEnabled: true, SessionID: "session-1",
				AutoRetryEnabled: true, IsRetrying: true, RetryAttempt: 1, RetryState: policy.StateBackoff,
				Model:         trace.ModelInfo{ID: "claude-sonnet-4-5", Provider: "anthropic", API: "anthropic-messages"},
				ThinkingLevel: "off", IsCompacting: true, SteeringMode: "one-at-a-time", FollowUpMode: "one-at-a-time",
				InterruptMode: "immediate"}}},
		{T: 11 * ms, Type: trace.Response, Response: trace.ResponseRecord{ID: "s", Command: "get_state", Success: true, HasState: true,
			State: trace.SessionState{RetryState: policy.StateBackoff, NextRetryAt: 2011.5, HasNextRetryAt: true, Profile: "codex"}}},
		{T: 12 * ms, Type: trace.Final, Final: trace.FinalRecord{State: policy.StateIdle, UnresolvedPrompts: []int{}, TurnsConsumed: 4}},
		{T: 12 * ms, Type: trace.Final, Final: trace.FinalRecord{State: policy.StateBackoff, Attempt: 2, IsRetrying: true, UnresolvedPrompts: []int{1, 2}, TurnsConsumed: 4}},
		{T: 13 * ms, Type: trace.RetryFallback, Fallback: policy.RetryFallback{From: "m-1", To: "m-\"2\""}},
	}
}

// keysInOrder decodes a JSON object's keys in order, with the raw values.
func keysInOrder(t *testing.T, line []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		vals[tok.(string)] = raw
	}
	return keys, vals
}

// TestWriterFollowsTheSchema: every line the writer writes has exactly the
// schema's fields that are present, in the schema's order, with the
// values FieldJSON gives; and every type has a sample.
func TestWriterFollowsTheSchema(t *testing.T) {
	seen := map[trace.Type]bool{}
	for _, r := range samples() {
		seen[r.Type] = true
		line := trace.AppendJSON(nil, &r)
		keys, vals := keysInOrder(t, line)
		var want []string
		for _, f := range trace.Fields(r.Type) {
			v, present := trace.FieldJSON(&r, f.Name)
			if !present {
				continue
			}
			want = append(want, f.Name)
			var a, b any
			if err := json.Unmarshal(vals[f.Name], &a); err != nil {
				t.Fatalf("%s: field %s: %v", line, f.Name, err)
			}
			if err := json.Unmarshal([]byte(v), &b); err != nil {
				t.Fatalf("FieldJSON(%s) = %s: %v", f.Name, v, err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: field %s is %s, FieldJSON says %s", line, f.Name, vals[f.Name], v)
			}
		}
		if strings.Join(keys, ",") != strings.Join(want, ",") {
			t.Errorf("%s: keys %v, schema says %v", line, keys, want)
		}
		if !trace.Match(&r, map[string]any{}) {
			t.Errorf("%s does not match the empty expectation", line)
		}
	}
	for _, typ := range trace.Types() {
		if !seen[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
}

// TestDecodeRoundTrip: Decode reads back what AppendJSON writes.
func TestDecodeRoundTrip(t *testing.T) {
	var w trace.Writer
	for _, r := range samples() {
		w.Record(&r)
	}
	got, err := trace.Parse(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := samples() // a transition written without input and rule reads back with Rule -1
	if !reflect.DeepEqual(got, want) {
		for i := range want {
			if i < len(got) && !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("record %d:\n got %+v\nwant %+v", i, got[i], want[i])
			}
		}
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	if w.Lines() != len(want) {
		t.Errorf("Lines() = %d", w.Lines())
	}
}

func TestWriterBytes(t *testing.T) {
	want := []string{
		`{"t":0,"type":"agent_run","kind":"prompt"}`,
		`{"t":2000,"type":"agent_run","kind":"continue","model":"m-1"}`,
		`{"t":5,"type":"message_end","message":{"role":"assistant","stopReason":"stop"}}`,
		`{"t":5,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 \"overloaded\" <é>\n"},"model":"m-1"}`,
		`{"t":5,"type":"agent_run_end"}`,
		`{"t":5,"type":"transition","from":"idle","event":"retry","to":"backoff","input":"agent_end:retryable","rule":2}`,
		`{"t":5,"type":"transition","from":"idle","event":"retry","to":"backoff"}`,
		`{"t":0.999,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":0.999,"errorMessage":"x"}`,
		`{"t":7,"type":"auto_retry_end","success":true,"attempt":2}`,
		`{"t":7,"type":"auto_retry_end","success":false,"attempt":2,"finalError":"Retry cancelled"}`,
		`{"t":8,"type":"auto_compaction_start","reason":"overflow"}`,
		`{"t":8,"type":"auto_compaction_end","result":{"summary":"(simulated)"},"aborted":false,"willRetry":true}`,
		`{"t":8,"type":"auto_compaction_end","aborted":false,"willRetry":false,"errorMessage":"failed"}`,
		`{"t":9,"type":"mark_usage_limit_reached","provider":"p","sessionId":"s","retryAfterMs":1500.5,"baseUrl":"u","returns":true}`,
		`{"t":9,"type":"mark_usage_limit_reached","provider":"p","sessionId":"s","retryAfterMs":null,"baseUrl":"u","returns":false}`,
		`{"t":10,"type":"prompt_resolved","prompt":3}`,
		`{"t":10,"type":"prompt_rejected","prompt":4,"error":"busy"}`,
		`{"t":10,"type":"continue_rejected","error":"no"}`,
		`{"t":11,"type":"response","id":"a","command":"abort","success":true}`,
		`{"t":11,"type":"response","command":"prompt","success":false,"error":"busy"}`,
		`{"t":11,"type":"response","id":"s","command":"get_state","success":true,"data":{"isStreaming":true,"messageCount":2,"autoCompactionEnabled":true,"sessionId":"session-1","autoRetryEnabled":true,"isRetrying":true,"retryAttempt":1,"retryState":"backoff","nextRetryAt":null,"profile":"","model":{"id":"claude-sonnet-4-5","provider":"anthropic","api":"anthropic-messages"},"thinkingLevel":"off","isCompacting":true,"steeringMode":"one-at-a-time","followUpMode":"one-at-a-time","interruptMode":"immediate","queuedMessageCount":0}}`,
		`{"t":11,"type":"response","id":"s","command":"get_state","success":true,"data":{"isStreaming":false,"messageCount":0,"autoCompactionEnabled":false,"sessionId":"","autoRetryEnabled":false,"isRetrying":false,"retryAttempt":0,"retryState":"backoff","nextRetryAt":2011.5,"profile":"codex","thinkingLevel":"","isCompacting":false,"steeringMode":"","followUpMode":"","interruptMode":"","queuedMessageCount":0}}`,
		`{"t":12,"type":"final","state":"idle","attempt":0,"isRetrying":false,"unresolvedPrompts":[],"turnsConsumed":4}`,
		`{"t":12,"type":"final","state":"backoff","attempt":2,"isRetrying":true,"unresolvedPrompts":[1,2],"turnsConsumed":4}`,
		`{"t":13,"type":"retry_fallback","from":"m-1","to":"m-\"2\""}`,
	}
	for i, r := range samples() {
		if got := string(trace.AppendJSON(nil, &r)); got != want[i] {
			t.Errorf("record %d:\n got %s\nwant %s", i, got, want[i])
		}
	}
}

func TestMatch(t *testing.T) {
	rs := samples()
	getState, msg, final := &rs[20], &rs[3], &rs[23]
	tests := []struct {
		r    *trace.Record
		want string
		ok   bool
	}{
		{getState, `{"type":"response","data":{"retryState":"backoff"}}`, true},
		{getState, `{"data":{"retryState":"idle"}}`, false},
		{getState, `{"data":{"nope":1}}`, false},
		{getState, `{"error":"x"}`, false}, // absent on success
		{msg, `{"message":{"stopReason":"error"}}`, true},
		{msg, `{"message":"x"}`, false},
		{msg, `{"t":5}`, true},
		{msg, `{"t":"5"}`, false},
		{&rs[0], `{"message":{}}`, false},
		{final, `{"unresolvedPrompts":[1,2]}`, true},
		{final, `{"unresolvedPrompts":[1]}`, false},
		{&rs[14], `{"retryAfterMs":null}`, true},
		{&rs[13], `{"retryAfterMs":null}`, false},
		{&rs[13], `{"retryAfterMs":1500.5}`, true},
		{&rs[6], `{"input":"agent_end:retryable"}`, false}, // unknown: absent
		{&rs[5], `{"input":"agent_end:retryable","rule":2}`, true},
		{getState, `{"data":{"nextRetryAt":null}}`, true},
		{&rs[21], `{"data":{"nextRetryAt":2011.5,"profile":"codex"}}`, true},
		{&rs[21], `{"data":{"nextRetryAt":null}}`, false},
		{getState, `{"data":{"model":{"api":"anthropic-messages"},"isCompacting":true,"queuedMessageCount":0}}`, true},
		{getState, `{"data":{"model":{"id":"other"}}}`, false},
		{&rs[21], `{"data":{"model":{}}}`, false}, // absent: no model known
		{&rs[21], `{"data":{"isCompacting":false,"thinkingLevel":""}}`, true},
		{&rs[1], `{"model":"m-1"}`, true},
		{&rs[0], `{"model":"m-1"}`, false}, // absent
		{&rs[24], `{"type":"retry_fallback","from":"m-1"}`, true},
	}
	for _, tt := range tests {
		var want map[string]any
		if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatal(err)
		}
		if got := trace.Match(tt.r, want); got != tt.ok {
			t.Errorf("Match(%s, %s) = %v", trace.AppendJSON(nil, tt.r), tt.want, got)
		}
	}
}

// TestTypeNamesOnlyHere: outside trace/ and policy's event definitions,
// no non-test Go file spells a trace type's name as a string literal.
func TestTypeNamesOnlyHere(t *testing.T) {
	names := map[string]bool{}
	for _, typ := range trace.Types() {
		switch typ {
		case trace.Response, trace.Final, trace.AgentRun, trace.MessageEnd:
			// Also words of other vocabularies: the RPC protocol's
			// envelope and events, a scenario's expect key.
		default:
			names[typ.String()] = true
		}
	}
	root := filepath.Join("..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(rel, "trace"+string(filepath.Separator)) || rel == filepath.Join("policy", "retry", "events.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for name := range names {
				if s == name || strings.Contains(s, `"`+name+`"`) {
					t.Errorf("%s: spells the trace type %q", fset.Position(lit.Pos()), name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
