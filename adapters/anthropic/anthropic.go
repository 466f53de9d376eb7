// Package anthropic turns the results of the Anthropic Go SDK
// (github.com/anthropics/anthropic-sdk-go/v2) into the replies the retry
// policy reads: a policy.AssistantMessage with its stop reason, an
// errorMessage the original's classifier understands, the HTTP status and the
// retry-relevant headers.
//
// Its name is the SDK's, so import one of the two under another name:
//
//	import (
//		"github.com/anthropics/anthropic-sdk-go/v2"
//		anthropicreply "github.com/ohmypi/retryfsm/adapters/anthropic"
//	)
//
// Three functions, one for each way a call ends:
//
//   - Reply(client.Messages.New(ctx, params)): a call that was not streamed;
//   - StreamMessage(acc, stream.Err()) after a stream, where acc is the
//     anthropic.Message that Message.Accumulate built from the stream's
//     events: a stream cut off, by an error event, a dropped connection or
//     a clean close before its last event, is an error reply that keeps the
//     usage message_start reported;
//   - Message(err) for the error of any call.
//
// # Errors
//
// An API error (*anthropic.Error) becomes the errorMessage "<status>
// <type>: <message>" (for example "529 overloaded_error: Overloaded",
// "429 rate_limit_error: ...", "400 invalid_request_error: prompt is too
// long: 208310 tokens > 200000 maximum"), with the error's details code in
// parentheses after the type when there is one. The status and type are the
// words the original's retryable regex and overflow patterns read, so a 529
// overloaded or a 500 is retryable, a 429 is retryable, and a prompt that is
// too long (or a 413 request_too_large) is a context overflow, in every
// classification mode. Status is the response's status and Headers its
// retry-after, retry-after-ms, x-should-retry and rate-limit headers
// (anthropic-ratelimit-*, x-ratelimit-*), keyed by lower-case name, which the
// "status" and "strict" modes and the retryAfter settings read. An error
// event inside a stream has no status prefix and Status 0 (the stream's 200
// says nothing about the error), so it is classified by its text:
// "overloaded_error: Overloaded".
//
// A cancelled context gives stop reason "aborted"; a timeout or a failed
// connection (refused, reset, dropped while the response was read) gives
// "Connection error: ...", which the retryable regex matches, with no status.
//
// # Layering: switch the SDK's retries off
//
// The SDK retries on its own (2 retries by default, with its own backoff,
// honouring retry-after). Under a policy.Controller, which retries the whole
// run, build the client with option.WithMaxRetries(0):
//
//	client := anthropic.NewClient(option.WithMaxRetries(0))
//
// Otherwise the two multiply: each of the Controller's 4 calls (maxRetries
// 3) makes up to 3 requests, 12 in all, with waits the Controller neither
// sees nor reports, and the errors it classifies are only the SDK's last.
// The profile "anthropic-sdk" (policy.ProfileByName) reproduces the SDK's own
// policy on the Controller, with events, if that is the policy you want.
//
// Retry-after hints: the Controller's default profile ignores the
// retry-after and retry-after-ms headers (and the hints in the error text),
// as the original agent does: it waits 2, 4, 8 s whatever the server says.
// Profiles that honour them: "anthropic-sdk" and "opencode" (the hint
// replaces the backoff), "openai-sdk" (replaces it, up to 60 s),
// "omp-2026-06" and "gemini-cli" (the hint is a floor, with a 5-minute
// fail-fast), "codex" (an in-stream hint replaces it); or settings of your
// own with retryAfter.use "floor" or "replace" (SPEC.md §1, §14).
//
// To retry one call, retryfsm.Do takes Message as its reply reader:
//
//	msg, err := retryfsm.Do(ctx, policy.DefaultPolicy(), func(ctx context.Context) (*anthropic.Message, error) {
//		return client.Messages.New(ctx, params)
//	}, retryfsm.WithReply(anthropicreply.Message))
//
// This package imports the SDK; package policy does not (a test checks it),
// so an agent that does not use the SDK does not build it.
package anthropic

import (
	"encoding/json"
	"errors"
	"net/http"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/ohmypi/retryfsm/adapters/internal/sdkerr"
	"github.com/ohmypi/retryfsm/policy"
)

// Message returns the reply for err, the error a call to the Anthropic API
// returned (from Messages.New, or a stream's Err()):
//
//   - *anthropic.Error (an error response, or an error event in a stream):
//     stop reason "error", errorMessage "<status> <type> (<code>):
//     <message>" with the parts that are missing left out (a body that is
//     not the API's error JSON is quoted instead, and an empty one is
//     "<status> status code (no body)"), Status (0 for an error event in a
//     stream) and the retry-relevant headers;
//   - a cancelled context: stop reason "aborted";
//   - a timeout: "Connection error: request timed out (...)";
//   - a failed connection, a connection dropped while reading the response:
//     "Connection error: <detail>";
//   - any other error: stop reason "error" with the error's text.
//
// The usage fields are 0; StreamMessage and Reply add them. A nil err gives
// a zero AssistantMessage.
func Message(err error) policy.AssistantMessage {
	var e *sdk.Error
	if !errors.As(err, &e) || e == nil {
		return sdkerr.Transport(err)
	}
	typ, msg := string(e.Type()), e.Message
	if typ == "" || msg == "" {
		// A type the SDK does not know, or a message it did not decode:
		// read them from the body as sent.
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(e.RawJSON()), &body) == nil {
			if typ == "" {
				typ = body.Error.Type
			}
			if msg == "" {
				msg = body.Error.Message
			}
		}
	}
	var h http.Header
	if e.Response != nil {
		h = e.Response.Header
	}
	return sdkerr.APIError{
		Status:  e.StatusCode,
		Type:    typ,
		Code:    string(e.ErrorCode()),
		Message: msg,
		Body:    e.RawJSON(),
		Header:  h,
	}.Reply()
}

// Reply returns the reply for the result of a call that was not streamed,
// client.Messages.New's (msg, err): with an error, Message(err) (with msg's
// usage if msg is not nil); otherwise msg's stop reason (see StreamMessage)
// and usage. A nil msg with a nil err is an error reply ("no message").
func Reply(msg *sdk.Message, err error) policy.AssistantMessage {
	if err != nil {
		m := Message(err)
		if msg != nil {
			withUsage(&m, msg.Usage)
		}
		return m
	}
	if msg == nil {
		return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "no message: the call returned neither a message nor an error"}
	}
	return fromMessage(*msg)
}

// StreamMessage returns the reply for a streamed call: acc is the message
// Message.Accumulate built from the events received, err the stream's
// Err(). The reply has acc's usage (input and cache-read tokens, which
// message_start reports) in every case, so the overflow usage rule sees a cut
// stream's input too.
//
//   - err not nil: Message(err) (an error event, a dropped connection, a
//     cancellation);
//   - no stop reason (the stream ended cleanly before its message_delta):
//     "Connection error: stream ended before message_stop", retried as a
//     dropped connection is;
//   - otherwise acc's stop reason: end_turn, stop_sequence and pause_turn are
//     "stop"; max_tokens and model_context_window_exceeded are "length";
//     tool_use is "toolUse"; refusal is an error ("stop_reason refusal", not
//     retried in the default mode); a stop reason this version does not know
//     is "stop".
func StreamMessage(acc sdk.Message, err error) policy.AssistantMessage {
	var m policy.AssistantMessage
	switch {
	case err != nil:
		m = Message(err)
	case acc.StopReason == "":
		m = sdkerr.CutStream("stream ended before message_stop")
	default:
		return fromMessage(acc)
	}
	withUsage(&m, acc.Usage)
	return m
}

// fromMessage is the reply for a message with a stop reason.
func fromMessage(msg sdk.Message) policy.AssistantMessage {
	var m policy.AssistantMessage
	switch msg.StopReason {
	case sdk.StopReasonMaxTokens, sdk.StopReasonModelContextWindowExceeded:
		m.StopReason = policy.StopReasonLength
	case sdk.StopReasonToolUse:
		m.StopReason = policy.StopReasonToolUse
	case sdk.StopReasonRefusal:
		m.StopReason = policy.StopReasonError
		m.ErrorMessage = "stop_reason refusal"
	case "":
		m = sdkerr.CutStream("message has no stop_reason")
	default: // end_turn, stop_sequence, pause_turn, and any new one
		m.StopReason = policy.StopReasonStop
	}
	withUsage(&m, msg.Usage)
	return m
}

// withUsage copies the usage the overflow rule reads into m.
func withUsage(m *policy.AssistantMessage, u sdk.Usage) {
	m.InputTokens = u.InputTokens
	m.CacheReadTokens = u.CacheReadInputTokens
}
