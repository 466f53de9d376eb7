// Package openai turns the results of the OpenAI Go SDK
// (github.com/openai/openai-go/v3) into the replies the retry policy reads: a
// policy.AssistantMessage with its stop reason, an errorMessage the
// original's classifier understands, the HTTP status and the retry-relevant
// headers.
//
// Its name is the SDK's, so import one of the two under another name:
//
//	import (
//		"github.com/openai/openai-go/v3"
//		openaireply "github.com/ohmypi/retryfsm/adapters/openai"
//	)
//
// Three functions, one for each way a call ends:
//
//   - Reply(client.Chat.Completions.New(ctx, params)): a chat completion
//     that was not streamed;
//   - StreamMessage(acc.ChatCompletion, stream.Err()) after a stream, where
//     acc is the openai.ChatCompletionAccumulator the stream's chunks were
//     added to: a stream cut off, by an error event, a dropped connection or
//     a clean close before a finish_reason, is an error reply;
//   - Message(err) for the error of any call (chat completions, responses,
//     ...).
//
// # Errors
//
// An API error (*openai.Error) becomes the errorMessage "<status> <type>
// (<code>): <message>", the code left out when it is absent or the type's
// (for example "429 requests (rate_limit_exceeded): Rate limit reached for
// ...", "400 invalid_request_error (context_length_exceeded): This model's
// maximum context length is 128000 tokens. ...", "500 server_error: The
// server had an error while processing your request. ..."). The status and
// the provider's words are what the original's retryable regex and overflow
// patterns read, so a 429 or a 500 is retryable and a context length error
// is a context overflow, in every classification mode; a 429
// insufficient_quota is retryable by the original's regex and final in the
// "strict" mode. Status is the response's status and Headers its
// retry-after, retry-after-ms, x-should-retry and rate-limit headers
// (x-ratelimit-*), keyed by lower-case name, which the "status" and "strict"
// modes and the retryAfter settings read. An error event inside a stream has
// no status prefix, no status and no headers ("server_error: ..."), and is
// classified by its text.
//
// A cancelled context gives stop reason "aborted"; a timeout or a failed
// connection (refused, reset, dropped while the response was read) gives
// "Connection error: ...", which the retryable regex matches, with no status.
//
// # Layering: switch the SDK's retries off
//
// The SDK retries on its own (2 retries by default, with its own backoff,
// honouring retry-after-ms and retry-after). Under a policy.Controller, which
// retries the whole run, build the client with option.WithMaxRetries(0):
//
//	client := openai.NewClient(option.WithMaxRetries(0))
//
// Otherwise the two multiply: each of the Controller's 4 calls (maxRetries
// 3) makes up to 3 requests, 12 in all, with waits the Controller neither
// sees nor reports, and the errors it classifies are only the SDK's last.
// The profile "openai-sdk" (policy.ProfileByName) reproduces the SDK's own
// policy on the Controller, with events, if that is the policy you want.
//
// Retry-after hints: the Controller's default profile ignores the
// retry-after and retry-after-ms headers (and the hints in the error text),
// as the original agent does: it waits 2, 4, 8 s whatever the server says.
// Profiles that honour them: "openai-sdk" (the hint replaces the backoff,
// up to 60 s), "anthropic-sdk" and "opencode" (replaces it),
// "omp-2026-06" and "gemini-cli" (the hint is a floor, with a 5-minute
// fail-fast), "codex" (an in-stream hint replaces it); or settings of your
// own with retryAfter.use "floor" or "replace" (SPEC.md §1, §14).
//
// To retry one call, retryfsm.Do takes Message as its reply reader:
//
//	c, err := retryfsm.Do(ctx, policy.DefaultPolicy(), func(ctx context.Context) (*openai.ChatCompletion, error) {
//		return client.Chat.Completions.New(ctx, params)
//	}, retryfsm.WithReply(openaireply.Message))
//
// This package imports the SDK; package policy does not (a test checks it),
// so an agent that does not use the SDK does not build it.
package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/ohmypi/retryfsm/adapters/internal/sdkerr"
	"github.com/ohmypi/retryfsm/policy"
)

// Message returns the reply for err, the error a call to the OpenAI API
// returned (from Chat.Completions.New, a stream's Err(), or any other call):
//
//   - *openai.Error (an error response): stop reason "error", errorMessage
//     "<status> <type> (<code>): <message>" with the parts that are missing
//     left out (a body that is not the API's error JSON is quoted instead,
//     and an empty one is "<status> status code (no body)"), Status and the
//     retry-relevant headers;
//   - *ssestream.StreamError (an error event in a stream): the same text
//     without the status, and no status or headers;
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
	if errors.As(err, &e) && e != nil {
		a := sdkerr.APIError{Status: e.StatusCode, Type: e.Type, Code: e.Code, Message: e.Message, Body: e.RawJSON()}
		if e.Response != nil {
			a.Header = e.Response.Header
			if a.Type == "" && a.Code == "" && a.Message == "" {
				a.Body = responseBody(e.Response)
			}
		}
		return a.Reply()
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) && se != nil {
		a := sdkerr.APIError{Body: string(se.Event.Data)}
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(se.Event.Data, &body) == nil {
			var obj struct {
				Type, Message string
				Code          any
			}
			var text string
			switch {
			case json.Unmarshal(body.Error, &obj) == nil:
				a.Type, a.Message = obj.Type, obj.Message
				if code, ok := obj.Code.(string); ok {
					a.Code = code
				}
			case json.Unmarshal(body.Error, &text) == nil:
				a.Message = text
			}
		}
		return a.Reply()
	}
	return sdkerr.Transport(err)
}

// responseBody is the body of an error response (the SDK keeps a copy for
// its Dump methods), read without consuming it: the copy is put back.
func responseBody(res *http.Response) string {
	if res.Body == nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, sdkerr.MaxBody+1))
	rest := res.Body
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), rest), rest}
	if err != nil {
		return ""
	}
	return string(b)
}

// Reply returns the reply for the result of a chat completion that was not
// streamed, client.Chat.Completions.New's (c, err): with an error,
// Message(err) (with c's usage if c is not nil); otherwise the first
// choice's finish reason (see StreamMessage) and c's usage. A nil c with a
// nil err is an error reply ("no completion").
func Reply(c *sdk.ChatCompletion, err error) policy.AssistantMessage {
	if err != nil {
		m := Message(err)
		if c != nil {
			withUsage(&m, c.Usage)
		}
		return m
	}
	if c == nil {
		return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "no completion: the call returned neither a completion nor an error"}
	}
	return fromCompletion(*c, "completion has no finish_reason")
}

// StreamMessage returns the reply for a streamed chat completion: acc is the
// completion an openai.ChatCompletionAccumulator built from the chunks
// received (its ChatCompletion field), err the stream's Err(). The reply has
// acc's usage (when the request asked for it with stream_options
// include_usage) in every case.
//
//   - err not nil: Message(err) (an error event, a dropped connection, a
//     cancellation);
//   - no choice with a finish reason (the stream ended cleanly before it):
//     "Connection error: stream ended without a finish_reason", retried as
//     a dropped connection is;
//   - otherwise the first choice's finish reason: stop is "stop", length is
//     "length", tool_calls and function_call are "toolUse", content_filter
//     is an error ("finish_reason content_filter", not retried in the default
//     mode), a finish reason this version does not know is "stop".
func StreamMessage(acc sdk.ChatCompletion, err error) policy.AssistantMessage {
	if err != nil {
		m := Message(err)
		withUsage(&m, acc.Usage)
		return m
	}
	return fromCompletion(acc, "stream ended without a finish_reason")
}

// fromCompletion is the reply for a completion that ended without error;
// cut says what is wrong with one that has no finish reason.
func fromCompletion(c sdk.ChatCompletion, cut string) policy.AssistantMessage {
	var m policy.AssistantMessage
	reason := ""
	if len(c.Choices) > 0 {
		reason = c.Choices[0].FinishReason
	}
	switch reason {
	case "":
		m = sdkerr.CutStream(cut)
	case "length":
		m.StopReason = policy.StopReasonLength
	case "tool_calls", "function_call":
		m.StopReason = policy.StopReasonToolUse
	case "content_filter":
		m.StopReason = policy.StopReasonError
		m.ErrorMessage = "finish_reason content_filter"
	default: // stop, and any new one
		m.StopReason = policy.StopReasonStop
	}
	withUsage(&m, c.Usage)
	return m
}

// withUsage copies the usage the overflow rule reads into m: the prompt's
// tokens that were not read from the cache, and those that were (OpenAI's
// prompt_tokens includes the cached ones).
func withUsage(m *policy.AssistantMessage, u sdk.CompletionUsage) {
	cached := u.PromptTokensDetails.CachedTokens
	m.InputTokens = u.PromptTokens - cached
	m.CacheReadTokens = cached
}
