// Package provider is one provider answer (Answer) and its two
// renderings: the message an agent sees (Answer.AgentMessage, the
// policy.AssistantMessage an SDK makes of it) and the HTTP answer of an
// API (Answer.HTTP: status, headers, JSON body or event stream). The
// fleet's provider model gives Answers, the simulator reads them as
// messages and the proxy writes them as HTTP, so no package parses
// another's rendered text back. It links no HTTP stack.
package provider

import (
	"strconv"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/wire"
)

// API is one of the provider endpoints (wire.API).
type API = wire.API

// Answer is one answer of a provider to one request.
//
// A success has Stop stop, toolUse or length. An error has Stop error and
// the HTTP Status it came with (0: a connection error, no HTTP answer),
// Message (the body's error.message), Hint (text after the body, "Please
// try again in 2s.") and Headers (retry-after, by lower-case name). Plain
// marks an error whose body is its message as plain text, not the
// provider's JSON (a gateway's "Service Unavailable"). Stop aborted is a
// connection closed without an answer.
type Answer struct {
	Stop    policy.StopReason
	Status  int
	Message string
	Hint    string
	Plain   bool
	Headers map[string]string
	// InputTokens is a success's input usage (0: the canned 12).
	InputTokens int
}

// Connection is the message a connection error shows (no HTTP status), as
// the Stainless SDKs write it.
const Connection = "Connection error."

// AgentMessage is the answer as the agent sees it, the text as the Anthropic
// SDKs write an HTTP error: "STATUS BODY" (the body Anthropic's
// {"type":"error","error":{"type","message"}}, or the plain text), then
// " HINT"; a connection error is Connection.
func (a Answer) AgentMessage() policy.AssistantMessage {
	if a.Stop != policy.StopReasonError {
		return policy.AssistantMessage{StopReason: a.Stop, Headers: a.Headers, InputTokens: int64(a.InputTokens)}
	}
	m := policy.AssistantMessage{StopReason: policy.StopReasonError, Status: a.Status, Headers: a.Headers}
	if a.Status == 0 {
		m.ErrorMessage = Connection
		if a.Message != "" {
			m.ErrorMessage = a.Message
		}
		return m
	}
	b := strconv.AppendInt(make([]byte, 0, 96+len(a.Message)+len(a.Hint)), int64(a.Status), 10)
	b = append(b, ' ')
	if a.Plain {
		b = append(b, a.Message...)
	} else {
		b = append(b, `{"type":"error","error":{"type":`...)
		b = jsonw.AppendString(b, errorType(wire.Anthropic, a.Status))
		b = append(b, `,"message":`...)
		b = jsonw.AppendString(b, a.Message)
		b = append(b, "}}"...)
	}
	if a.Hint != "" {
		b = append(b, ' ')
		b = append(b, a.Hint...)
	}
	m.ErrorMessage = string(b)
	return m
}

// BodyMessage is the message an error's HTTP body carries: Message, then
// ". HINT".
func (a Answer) BodyMessage() string {
	if a.Hint == "" {
		return a.Message
	}
	return a.Message + ". " + a.Hint
}

// Dropped reports whether the answer is no HTTP answer: the connection
// closed (aborted, or an error with no status).
func (a Answer) Dropped() bool {
	return a.Stop == policy.StopReasonAborted || (a.Stop == policy.StopReasonError && a.Status == 0)
}
