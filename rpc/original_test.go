package rpc_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The original's shapes, written from reference/original-behavior.md §6.4
// (RpcSessionState; AssistantMessage of packages/ai/src/types.ts): every
// field in the reference's order, "?" marking an optional one.
var (
	refSessionState = []string{"model?", "thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode",
		"interruptMode", "sessionFile?", "sessionId", "sessionName?", "autoCompactionEnabled", "messageCount", "queuedMessageCount"}
	refModel            = []string{"id", "provider", "api"} // "the model object (id, provider, api, ...)"
	refAssistantMessage = []string{"role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage?",
		"timestamp", "duration?", "ttft?"}
	refUsage = []string{"input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"}
	refCost  = []string{"input", "output", "cacheRead", "cacheWrite", "total"}
	refText  = []string{"type", "text"} // {type:"text", text}
	// A tool call block (packages/ai/src/types.ts ToolCall): {type:"toolCall", id, name, arguments}.
	refToolCall = []string{"type", "id", "name", "arguments"}
	// A user message (packages/ai/src/types.ts): {role, content, timestamp}.
	refUserMessage = []string{"role", "content", "timestamp"}
	// agent_end is {type:"agent_end", messages:[...]}: the run's messages.
	refAgentEnd = []string{"type", "messages"}
)

// The fields these lines had before they took the reference's (they stay
// first, in this order: fields are only ever added after the existing
// ones), and the reference's optional fields the simulator never writes.
var (
	oldSessionState = []string{"isStreaming", "messageCount", "autoCompactionEnabled", "sessionId", "autoRetryEnabled",
		"isRetrying", "retryAttempt", "retryState", "nextRetryAt", "profile"}
	oldAssistantMessage = []string{"role", "stopReason", "errorMessage"}
	oldAgentEnd         = []string{"t", "type"} // "t" with --virtual
	unwritten           = []string{"sessionFile", "sessionName", "duration", "ttft"}
)

// keys returns the keys of a JSON object, in order, and their values.
func keys(t *testing.T, obj []byte) ([]string, map[string]json.RawMessage) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not an object (%v)", obj, err)
	}
	var names []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		names = append(names, tok.(string))
		vals[tok.(string)] = v
	}
	return names, vals
}

// checkShape checks an object's keys against the reference's: the old
// fields first (those of them the object has, in their order), then every
// reference field not among them, in the reference's order (optional ones
// when present, those the simulator never writes absent), then nothing
// but the simulator's own fields (extra, in their order).
func checkShape(t *testing.T, what string, obj []byte, ref, old, extra []string) map[string]json.RawMessage {
	t.Helper()
	got, vals := keys(t, obj)
	var want []string
	for _, k := range old {
		if _, ok := vals[k]; ok {
			want = append(want, k)
		}
	}
	for _, r := range ref {
		name, optional := strings.CutSuffix(r, "?")
		_, ok := vals[name]
		switch {
		case slices.Contains(unwritten, name):
			if ok {
				t.Errorf("%s: has %q, which the simulator does not write", what, name)
			}
		case slices.Contains(old, name):
		case ok || !optional:
			want = append(want, name)
		}
	}
	want = append(want, extra...)
	if !slices.Equal(got, want) {
		t.Errorf("%s: fields\n %v\nwant (old fields, then the reference's in its order)\n %v\nin %s", what, got, want, obj)
	}
	return vals
}

// TestOriginalShapes compares get_state's data and message_end's and
// agent_end's messages with the original's (reference §6.4): their fields,
// and the order of those added.
func TestOriginalShapes(t *testing.T) {
	input := `{"id":"p","type":"prompt","message":"hi"}
{"id":"s","type":"get_state"}
{"type":"advance","ms":2000}
`
	out := serveVirtual(t, oneError, input)
	var state []byte
	var ends, agentEnds [][]byte
	for _, l := range out {
		var r struct {
			Type    string          `json:"type"`
			Command string          `json:"command"`
			Data    json.RawMessage `json:"data"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Type == "response" && r.Command == "get_state":
			state = r.Data
		case r.Type == "message_end":
			ends = append(ends, r.Message)
		case r.Type == "agent_end":
			agentEnds = append(agentEnds, []byte(l))
		}
	}
	if state == nil || len(ends) != 2 || len(agentEnds) != 2 {
		t.Fatalf("want a get_state, two message_end and two agent_end lines:\n%s", strings.Join(out, "\n"))
	}

	vals := checkShape(t, "get_state data", state, refSessionState, oldSessionState, nil)
	checkShape(t, "get_state model", vals["model"], refModel, nil, nil)

	for i, m := range ends { // an error (with errorMessage), then a success
		vals := checkShape(t, "message_end message", m, refAssistantMessage, oldAssistantMessage, nil)
		usage := checkShape(t, "usage", vals["usage"], refUsage, nil, nil)
		checkShape(t, "usage cost", usage["cost"], refCost, nil, nil)
		var content []json.RawMessage
		if err := json.Unmarshal(vals["content"], &content); err != nil {
			t.Fatal(err)
		}
		if i == 0 && len(content) != 0 || i == 1 && len(content) != 1 {
			t.Errorf("message %d: content %s (an error has none, a reply one text block)", i, vals["content"])
		}
		for _, c := range content {
			checkShape(t, "text content", c, refText, nil, nil)
		}
	}

	for i, l := range agentEnds {
		vals := checkShape(t, "agent_end", l, refAgentEnd, oldAgentEnd, nil)
		var msgs []json.RawMessage
		if err := json.Unmarshal(vals["messages"], &msgs); err != nil {
			t.Fatal(err)
		}
		// The prompt's run: its user message, then the error; the retried
		// run: its reply. Each assistant message is message_end's.
		wantRoles := [][]string{{"user", "assistant"}, {"assistant"}}[i]
		var roles []string
		for _, m := range msgs {
			var r struct{ Role string }
			_ = json.Unmarshal(m, &r)
			roles = append(roles, r.Role)
		}
		if !slices.Equal(roles, wantRoles) {
			t.Errorf("agent_end %d: roles %v, want %v", i, roles, wantRoles)
			continue
		}
		if i == 0 {
			vals := checkShape(t, "user message", msgs[0], refUserMessage, nil, nil)
			if string(vals["content"]) != `[{"type":"text","text":"hi"}]` {
				t.Errorf("user message content %s, want the prompt's text", vals["content"])
			}
		}
		if last := msgs[len(msgs)-1]; !bytes.Equal(last, ends[i]) {
			t.Errorf("agent_end %d: its assistant message\n %s\nis not message_end's\n %s", i, last, ends[i])
		}
	}
}

// summary is a line in short: an event's "t" and type, a response's id,
// command and success (get_state: autoCompactionEnabled, isCompacting and
// messageCount; a failure: its error).
func summary(t *testing.T, line string) string {
	t.Helper()
	var r struct {
		T       *float64 `json:"t"`
		Type    string   `json:"type"`
		ID      string   `json:"id"`
		Command string   `json:"command"`
		Success bool     `json:"success"`
		Error   string   `json:"error"`
		Data    *struct {
			AutoCompactionEnabled *bool `json:"autoCompactionEnabled"`
			IsCompacting          bool  `json:"isCompacting"`
			MessageCount          int   `json:"messageCount"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	if r.Type != "response" {
		return fmt.Sprintf("%v %s", *r.T, r.Type)
	}
	s := fmt.Sprintf("%s %s %v", r.ID, r.Command, r.Success)
	switch {
	case !r.Success:
		s += ": " + r.Error
	case r.Command == "get_state":
		s += fmt.Sprintf(" compaction=%v compacting=%v messages=%d", *r.Data.AutoCompactionEnabled, r.Data.IsCompacting, r.Data.MessageCount)
	}
	return s
}

func summaries(t *testing.T, lines []string) []string {
	var out []string
	for _, l := range lines {
		if s := summary(t, l); !strings.Contains(s, " advance ") {
			out = append(out, s)
		}
	}
	return out
}

// overflowTwice: two prompt-too-long errors, then a reply.
const overflowTwice = `
turns:
  - {stopReason: error, errorMessage: "prompt is too long: 213462 tokens > 200000 maximum"}
  - {stopReason: error, errorMessage: "prompt is too long: 213462 tokens > 200000 maximum"}
  - {stopReason: stop}
`

// TestServeSetAutoCompaction: set_auto_compaction decides the overflow
// hand-off. Off, an overflow is not compacted and nothing continues: the
// error stays in the context, as the original does with compaction.enabled
// false. On, it is compacted and continued 100 ms later, get_state saying
// isCompacting meanwhile. A value other than true or false is refused.
func TestServeSetAutoCompaction(t *testing.T) {
	input := `{"id":"off","type":"set_auto_compaction","enabled":false}
{"id":"s1","type":"get_state"}
{"id":"p1","type":"prompt","message":"one"}
{"id":"s2","type":"get_state"}
{"id":"on","type":"set_auto_compaction","enabled":true}
{"id":"p2","type":"prompt","message":"two"}
{"type":"advance","ms":50}
{"id":"s3","type":"get_state"}
{"type":"advance","ms":50}
{"id":"s4","type":"get_state"}
{"id":"bad","type":"set_auto_compaction","enabled":"no"}
{"id":"bad2","type":"set_auto_compaction"}
`
	want := []string{
		"off set_auto_compaction true",
		"s1 get_state true compaction=false compacting=false messages=0",
		"p1 prompt true",
		"0 agent_start", "0 message_end", "0 agent_end",
		"0 prompt_resolved", // no compaction, no retry: the overflow stays
		"s2 get_state true compaction=false compacting=false messages=2",
		"on set_auto_compaction true",
		"p2 prompt true",
		"0 agent_start", "0 message_end", "0 agent_end",
		"0 auto_compaction_start", "0 auto_compaction_end",
		"0 prompt_resolved",
		"s3 get_state true compaction=true compacting=true messages=3", // the error left the context
		"100 agent_start", "100 message_end", "100 agent_end", // the compaction's continue
		"s4 get_state true compaction=true compacting=false messages=4",
		`bad set_auto_compaction false: set_auto_compaction: "enabled" must be true or false, got string "no"`,
		`bad2 set_auto_compaction false: set_auto_compaction: missing "enabled" (true or false)`,
	}
	got := summaries(t, serveVirtual(t, overflowTwice, input))
	diffLines(t, got, want)
}

// TestServePromptQueueingNotSimulated: streamingBehavior ("steer",
// "followUp") and images are accepted and change nothing: each prompt gets
// the answer it gets without them (accepted when idle, the original's
// rejection while busy). Values of the wrong form are refused.
func TestServePromptQueueingNotSimulated(t *testing.T) {
	plain := `{"id":"1","type":"prompt","message":"a"}
{"id":"2","type":"prompt","message":"b"}
{"id":"3","type":"prompt","message":"c"}
{"type":"advance","ms":3000}
{"id":"4","type":"prompt","message":"d"}
`
	queued := `{"id":"1","type":"prompt","message":"a","images":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}
{"id":"2","type":"prompt","message":"b","streamingBehavior":"steer"}
{"id":"3","type":"prompt","message":"c","streamingBehavior":"followUp","images":[]}
{"type":"advance","ms":3000}
{"id":"4","type":"prompt","streamingBehavior":"steer","message":"d"}
`
	want := serveVirtual(t, oneError, plain)
	if n := strings.Count(strings.Join(want, "\n"), "Agent is already processing"); n != 2 {
		t.Fatalf("prompts 2 and 3 should be rejected while the first retries:\n%s", strings.Join(want, "\n"))
	}
	diffLines(t, serveVirtual(t, oneError, queued), want)

	bad := `{"id":"b1","type":"prompt","message":"x","streamingBehavior":"later"}
{"id":"b2","type":"prompt","message":"x","streamingBehavior":1}
{"id":"b3","type":"prompt","message":"x","images":"cat.png"}
{"id":"b4","type":"prompt","message":"x","images":{"type":"image"}}
{"id":"b5","type":"prompt","message":"x","streamingBehavior":null}
`
	diffLines(t, summaries(t, serveVirtual(t, oneError, bad)), []string{
		`b1 prompt false: prompt: "streamingBehavior" must be "steer" or "followUp", got string "later"`,
		`b2 prompt false: prompt: "streamingBehavior" must be "steer" or "followUp", got number 1`,
		`b3 prompt false: prompt: "images" must be an array of images (accepted and ignored), got string "cat.png"`,
		`b4 prompt false: prompt: "images" must be an array of images (accepted and ignored), got an object`,
		`b5 prompt false: prompt: "streamingBehavior" must be "steer" or "followUp", got null`,
	})
}

// TestToolUseContent: a toolUse reply's message carries one toolCall
// block (ids call_1, call_2, ... in order), as the original's do.
func TestToolUseContent(t *testing.T) {
	out := serveVirtual(t, "turns:\n  - {stopReason: toolUse}\n  - {stopReason: toolUse}\n  - {stopReason: stop}\n",
		`{"id":"p","type":"prompt","message":"hi"}`+"\n")
	var ids []string
	for _, l := range out {
		var r struct {
			Type    string
			Message struct {
				StopReason string
				Content    []json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type != "message_end" || r.Message.StopReason != "toolUse" {
			continue
		}
		if len(r.Message.Content) != 1 {
			t.Fatalf("toolUse content %s, want one block", l)
		}
		vals := checkShape(t, "toolCall content", r.Message.Content[0], refToolCall, nil, nil)
		var id, typ string
		_ = json.Unmarshal(vals["id"], &id)
		_ = json.Unmarshal(vals["type"], &typ)
		if typ != "toolCall" || string(vals["arguments"]) != "{}" {
			t.Errorf("toolCall block %s", r.Message.Content[0])
		}
		ids = append(ids, id)
	}
	if !slices.Equal(ids, []string{"call_1", "call_2"}) {
		t.Errorf("tool call ids %q, want call_1, call_2", ids)
	}
}
