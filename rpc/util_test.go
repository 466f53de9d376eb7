package rpc_test

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The RPC event lines of the test scenarios' identity (provider anthropic,
// whose API is anthropic-messages, model claude-sonnet-4-5, epochMs
// 1771200000000, no usage). TestEventWriter pins the same form with
// literal lines.

// at is when an event happens: its virtual ms, written as "t" with
// --virtual (vt) and not on the real clock (rt); a message's timestamp is
// epochMs plus it in both.
type at struct {
	ms    int64
	withT bool
}

func vt(ms int64) at { return at{ms, true} }
func rt(ms int64) at { return at{ms, false} }

const sonnet = "claude-sonnet-4-5"

func (a at) head(typ string) string {
	if a.withT {
		return fmt.Sprintf(`{"t":%d,"type":%q`, a.ms, typ)
	}
	return fmt.Sprintf(`{"type":%q`, typ)
}

func (a at) timestamp() string { return strconv.FormatInt(1771200000000+a.ms, 10) }

// asstOf is an assistant message of model: stopReason stop, errorMessage
// errMsg when not empty.
func asstOf(a at, model, stop, errMsg string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"role":"assistant","stopReason":%q`, stop)
	if errMsg != "" {
		fmt.Fprintf(&b, `,"errorMessage":%q`, errMsg)
	}
	switch stop {
	case "error", "aborted":
		b.WriteString(`,"content":[]`)
	case "toolUse": // the session's first tool call (the tests have one)
		b.WriteString(`,"content":[{"type":"toolCall","id":"call_1","name":"simulated_tool","arguments":{}}]`)
	default:
		b.WriteString(`,"content":[{"type":"text","text":"(simulated)"}]`)
	}
	fmt.Fprintf(&b, `,"api":"anthropic-messages","provider":"anthropic","model":%q`, model)
	b.WriteString(`,"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}`)
	return b.String() + `,"timestamp":` + a.timestamp() + "}"
}

// asst is an assistant message of the scenario's model.
func asst(a at, stop, errMsg string) string { return asstOf(a, sonnet, stop, errMsg) }

// user is a prompt's user message.
func user(a at, text string) string {
	return fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q}],"timestamp":%s}`, text, a.timestamp())
}

// msgEndOf is the message_end line of a reply of model.
func msgEndOf(a at, model, stop, errMsg string) string {
	return a.head("message_end") + `,"message":` + asstOf(a, model, stop, errMsg) + fmt.Sprintf(`,"model":%q}`, model)
}

// msgEnd is the message_end line of a reply of the scenario's model.
func msgEnd(a at, stop, errMsg string) string { return msgEndOf(a, sonnet, stop, errMsg) }

// agentEnd is the agent_end line of a run with messages msgs.
func agentEnd(a at, msgs ...string) string {
	return a.head("agent_end") + `,"messages":[` + strings.Join(msgs, ",") + "]}"
}
