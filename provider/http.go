package provider

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/wire"
)

// Request is what an answer's HTTP rendering takes of the request and
// the server: the API, the request's model, whether it streams and its
// first tool's name, the canned text, the request's number (its ids:
// req_retrysim000001) and its arrival in unix seconds.
type Request struct {
	API    API
	Model  string
	Stream bool
	Tool   string
	Text   string
	Seq    int
	Now    int64
}

// Response is an answer as HTTP: its status, its headers (set in order,
// a later one replacing an earlier of the same name), and its body: JSON
// (Body) or, for a successful stream, the server-sent events (Events,
// each one's bytes on the wire).
type Response struct {
	Status int
	Header [][2]string
	Body   []byte
	Events [][]byte
	// ErrorType is an error's type in the body.
	ErrorType string
}

// HTTP is the answer as req's API writes it (SPEC.md §18.1): an error is
// the provider's JSON error with its type from the status, a request id
// header and the answer's headers; a success the provider's message or,
// for a streaming request, its events. A dropped answer (Dropped) has no
// HTTP rendering: the zero Response.
func (a *Answer) HTTP(req Request) Response { return a.render(req, nil, nil) }

// HTTP is a.HTTP(req), byte for byte; a Messages JSON success's body is
// c's copy of the last one it rendered for the same model, tool, text,
// stop and usage, with req's id.
func (c *BodyCache) HTTP(a *Answer, req Request) Response { return a.render(req, c, nil) }

// HTTPReusing is c.HTTP(a, req) with a Messages JSON success's body
// copied into buf's array when it is large enough: buf is a body the
// caller has written and is done with (a Response's Body is always an
// array of its own, the caller's), and the copy then allocates nothing.
func (c *BodyCache) HTTPReusing(a *Answer, req Request, buf []byte) Response {
	return a.render(req, c, buf)
}

// BodyCache keeps the last Messages JSON success body rendered (the
// proxy's answers are mostly one such body, request after request, but
// for their ids): the next one like it is a copy, its id spliced in, not
// a rendering. The zero value is empty; safe for concurrent use.
type BodyCache struct {
	last atomic.Pointer[bodyTemplate]
}

// bodyTemplate is a success body rendered with an empty id, the offsets
// where the id goes, and what it was rendered from; length is the
// Content-Length of its bodies with an id of idLen bytes (the first's).
type bodyTemplate struct {
	model, text, tool, kind string
	input, output           int
	body                    []byte
	at                      []int
	idLen                   int
	length                  string
}

// body is s's Messages JSON body (s.anthropicBody's bytes) from c, and
// its length in decimal when c knows it ("": not).
func (c *BodyCache) body(s *success, buf []byte) (_ []byte, length string) {
	t := c.last.Load()
	if t == nil || t.model != s.model || t.text != s.text || t.tool != s.tool || t.kind != s.kind || t.input != s.input || t.output != s.output {
		t = &bodyTemplate{model: s.model, text: s.text, tool: s.tool, kind: s.kind, input: s.input, output: s.output, idLen: len(s.id)}
		e := *s
		e.id = ""
		t.body = e.anthropicBody(&t.at)
		t.length = strconv.Itoa(len(t.body) + len(t.at)*t.idLen)
		c.last.Store(t)
	}
	if len(s.id) == t.idLen {
		length = t.length
	}
	b := slices.Grow(buf[:0], len(t.body)+len(t.at)*len(s.id))
	prev := 0
	for _, at := range t.at {
		b = append(b, t.body[prev:at]...)
		b = append(b, s.id...)
		prev = at
	}
	return append(b, t.body[prev:]...), length
}

// render is HTTP, a Messages JSON success's body from c when c is not
// nil, in buf's array when it is large enough (HTTPReusing).
func (a *Answer) render(req Request, c *BodyCache, buf []byte) Response {
	if a.Dropped() {
		return Response{}
	}
	var ib [32]byte
	rid := string(appendRequestID(append(ib[:0], "req_"...), req.Seq)) // "req_" and the id, one string
	id := rid[len("req_"):]
	res := Response{Header: make([][2]string, 0, len(a.Headers)+4)}
	var length string // the body's, when c knows it
	for k, v := range a.Headers {
		res.Header = append(res.Header, [2]string{k, v})
	}
	res.Header = append(res.Header, [2]string{requestIDHeader(req.API), rid})
	if a.Stop == policy.StopReasonError {
		res.Status = a.Status
		res.ErrorType = errorType(req.API, a.Status)
		res.Body = errorBody(req.API, res.ErrorType, a.BodyMessage(), rid)
	} else {
		res.Status = 200
		s := &success{api: req.API, id: id, model: req.Model, kind: string(a.Stop), text: req.Text, tool: req.Tool, input: 12, output: 8, now: req.Now}
		if a.InputTokens > 0 {
			s.input = a.InputTokens
		}
		if req.Stream {
			res.Header = append(res.Header, [2]string{"content-type", "text/event-stream; charset=utf-8"}, [2]string{"cache-control", "no-cache"})
			for _, e := range s.events() {
				res.Events = append(res.Events, e.bytes())
			}
			return res
		}
		if c != nil && req.API == wire.Anthropic {
			res.Body, length = c.body(s, buf)
		} else {
			res.Body = s.body()
		}
	}
	if length == "" {
		length = strconv.Itoa(len(res.Body))
	}
	res.Header = append(res.Header, [2]string{"content-type", "application/json"}, [2]string{"content-length", length})
	return res
}

// requestID is "retrysim" and seq in at least six digits, zero-padded
// (fmt's "retrysim%06d", without its reflection).
func requestID(seq int) string {
	var b [32]byte
	return string(appendRequestID(b[:0], seq))
}

// appendRequestID appends requestID(seq) to b.
func appendRequestID(b []byte, seq int) []byte {
	var db [24]byte
	d := strconv.AppendInt(db[:0], int64(seq), 10)
	b = append(b, "retrysim"...)
	if seq < 0 { // the sign, then the zeros: %06d's width counts the sign
		b = append(b, '-')
	}
	for i := len(d); i < 6; i++ {
		b = append(b, '0')
	}
	if seq < 0 {
		d = d[1:]
	}
	return append(b, d...)
}

// ErrorEvent is the error event api's stream sends mid-stream after seq
// events (the sse-error fault), as it is on the wire.
func ErrorEvent(api API, seq int) []byte { return sseErrorEvent(api, seq).bytes() }

// errorType is the provider's error type for an HTTP status, as its API
// reference documents them (Anthropic: docs.anthropic.com/en/api/errors;
// OpenAI: platform.openai.com/docs/guides/error-codes).
func errorType(api API, status int) string {
	if api == wire.Anthropic {
		switch {
		case status == 400:
			return "invalid_request_error"
		case status == 401:
			return "authentication_error"
		case status == 402:
			return "billing_error"
		case status == 403:
			return "permission_error"
		case status == 404:
			return "not_found_error"
		case status == 408, status == 504:
			return "timeout_error"
		case status == 413:
			return "request_too_large"
		case status == 429:
			return "rate_limit_error"
		case status == 529:
			return "overloaded_error"
		case status >= 500:
			return "api_error"
		}
		return "invalid_request_error"
	}
	switch {
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 429:
		return "rate_limit_error"
	case status == 503, status == 529:
		return "service_unavailable_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// errorBody is the provider's JSON error body: Anthropic's
// {"type":"error","error":{"type","message"},"request_id"}, OpenAI's
// {"error":{"message","type","param","code"}}.
func errorBody(api API, typ, message, requestID string) []byte {
	var v any
	if api == wire.Anthropic {
		v = struct {
			Type      string `json:"type"`
			Error     any    `json:"error"`
			RequestID string `json:"request_id"`
		}{"error", struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}{typ, message}, requestID}
	} else {
		var code any
		switch typ {
		case "rate_limit_error":
			code = "rate_limit_exceeded"
		case "authentication_error":
			code = "invalid_api_key"
		}
		v = struct {
			Error any `json:"error"`
		}{struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Param   any    `json:"param"`
			Code    any    `json:"code"`
		}{message, typ, nil, code}}
	}
	b, _ := json.Marshal(v)
	return b
}

// sseErrorEvent is the error event a provider sends mid-stream:
// Anthropic's "event: error" with an overloaded_error, OpenAI's
// Responses "event: error", and Chat Completions' data line with an
// "error" object (which the SDKs read as an error).
func sseErrorEvent(api API, seq int) event {
	switch api {
	case wire.Anthropic:
		return event{name: "error", data: `{"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"}}`}
	case wire.OpenAIResponses:
		return event{name: "error", data: fmt.Sprintf(`{"type":"error","code":"server_error","message":"The server had an error while processing your request. Sorry about that!","param":null,"sequence_number":%d}`, seq)}
	}
	return event{data: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`}
}

// event is one server-sent event; an empty name writes no "event:" line.
type event struct {
	name, data string
}

// bytes is the event on the wire.
func (e event) bytes() []byte {
	var b strings.Builder
	if e.name != "" {
		b.WriteString("event: ")
		b.WriteString(e.name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.WriteString(e.data)
	b.WriteString("\n\n")
	return []byte(b.String())
}

// success is a canned successful answer: text, a tool call or a reply cut
// by the token limit.
type success struct {
	api    API
	id     string
	model  string
	kind   string // "stop", "toolUse", "length"
	text   string
	tool   string
	input  int
	output int
	now    int64 // unix seconds
}

// toolName is the name of the canned tool call.
func (s *success) toolName() string {
	if s.tool != "" {
		return s.tool
	}
	return "retrysim_tool"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the proxy's own values are marshalled
	}
	return string(b)
}

// body is the answer as one JSON object.
func (s *success) body() []byte {
	switch s.api {
	case wire.Anthropic:
		return s.anthropicBody(nil)
	case wire.OpenAIChat:
		msg := map[string]any{"role": "assistant", "content": s.text, "refusal": nil}
		finish := "stop"
		switch s.kind {
		case "toolUse":
			msg["content"] = nil
			msg["tool_calls"] = []any{map[string]any{"id": "call_" + s.id, "type": "function",
				"function": map[string]any{"name": s.toolName(), "arguments": "{}"}}}
			finish = "tool_calls"
		case "length":
			finish = "length"
		}
		return []byte(mustJSON(map[string]any{"id": "chatcmpl-" + s.id, "object": "chat.completion", "created": s.now, "model": s.model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": s.input, "completion_tokens": s.output, "total_tokens": s.input + s.output}}))
	}
	return []byte(mustJSON(s.response("completed")))
}

// anthropicBody is the complete Messages API message as JSON, appended
// field by field in the order json.Marshal sorts a map's keys (the bytes
// of the map it replaced, TestSuccessBodyBytes; those of a struct in
// that order, TestAnthropicBodyIsMarshal), without reflection. The ids
// are ASCII letters, digits and a sign, which JSON writes as they are.
//
// at, when not nil, gets the offsets in the body where the id was
// written (BodyCache splices another there).
func (s *success) anthropicBody(at *[]int) []byte {
	mark := func(b []byte) {
		if at != nil {
			*at = append(*at, len(b))
		}
	}
	b := make([]byte, 0, 256+len(s.text)+len(s.model)+len(s.tool)) // the fixed bytes are under 256
	if s.kind == "toolUse" {
		b = append(b, `{"content":[{"id":"toolu_`...)
		mark(b)
		b = append(b, s.id...)
		b = append(b, `","input":{},"name":`...)
		b = jsonw.AppendStdString(b, s.toolName())
		b = append(b, `,"type":"tool_use"}],"id":"msg_`...)
	} else {
		b = append(b, `{"content":[{"text":`...)
		b = jsonw.AppendStdString(b, s.text)
		b = append(b, `,"type":"text"}],"id":"msg_`...)
	}
	mark(b)
	b = append(b, s.id...)
	b = append(b, `","model":`...)
	b = jsonw.AppendStdString(b, s.model)
	b = append(b, `,"role":"assistant","stop_reason":"`...)
	b = append(b, s.anthropicStop()...)
	b = append(b, `","stop_sequence":null,"type":"message","usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(s.input), 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(s.output), 10)
	return append(b, "}}"...)
}

// anthropicStart is the Messages API's message object as message_start
// sends it: no content, no stop reason (the complete message is
// anthropicBody).
func (s *success) anthropicStart() map[string]any {
	return map[string]any{"id": "msg_" + s.id, "type": "message", "role": "assistant", "model": s.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": s.input, "output_tokens": 1}}
}

func (s *success) anthropicStop() string {
	switch s.kind {
	case "toolUse":
		return "tool_use"
	case "length":
		return "max_tokens"
	}
	return "end_turn"
}

func (s *success) anthropicBlock(complete bool) map[string]any {
	if s.kind == "toolUse" {
		return map[string]any{"type": "tool_use", "id": "toolu_" + s.id, "name": s.toolName(), "input": map[string]any{}}
	}
	text := ""
	if complete {
		text = s.text
	}
	return map[string]any{"type": "text", "text": text}
}

// outputItem is the Responses API's output item.
func (s *success) outputItem(complete bool) map[string]any {
	status := "completed"
	if !complete {
		status = "in_progress"
	}
	if s.kind == "toolUse" {
		args := "{}"
		if !complete {
			args = ""
		}
		return map[string]any{"type": "function_call", "id": "fc_" + s.id, "call_id": "call_" + s.id, "name": s.toolName(), "arguments": args, "status": status}
	}
	content := []any{}
	if complete {
		content = []any{map[string]any{"type": "output_text", "text": s.text, "annotations": []any{}}}
	}
	return map[string]any{"type": "message", "id": "msg_" + s.id, "status": status, "role": "assistant", "content": content}
}

// response is the Responses API's response object in the given status.
func (s *success) response(status string) map[string]any {
	r := map[string]any{"id": "resp_" + s.id, "object": "response", "created_at": s.now, "status": status, "model": s.model,
		"output": []any{}, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "error": nil,
		"incomplete_details": nil, "usage": nil}
	if status != "in_progress" {
		r["output"] = []any{s.outputItem(true)}
		r["usage"] = map[string]any{"input_tokens": s.input, "output_tokens": s.output, "total_tokens": s.input + s.output,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
		if s.kind == "length" {
			r["status"] = "incomplete"
			r["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
	}
	return r
}

// chunks splits the canned text into the deltas of a stream.
func (s *success) chunks() []string {
	words := strings.SplitAfter(s.text, " ")
	if len(words) == 0 {
		return []string{""}
	}
	return words
}

// events is the answer as the provider streams it.
func (s *success) events() []event {
	var evs []event
	add := func(name string, v any) { evs = append(evs, event{name: name, data: mustJSON(v)}) }
	switch s.api {
	case wire.Anthropic:
		add("message_start", map[string]any{"type": "message_start", "message": s.anthropicStart()})
		add("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": s.anthropicBlock(false)})
		add("ping", map[string]any{"type": "ping"})
		if s.kind == "toolUse" {
			add("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": "{}"}})
		} else {
			for _, c := range s.chunks() {
				add("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": c}})
			}
		}
		add("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		add("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": s.anthropicStop(), "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": s.output}})
		add("message_stop", map[string]any{"type": "message_stop"})
	case wire.OpenAIChat:
		chunk := func(delta map[string]any, finish any) map[string]any {
			return map[string]any{"id": "chatcmpl-" + s.id, "object": "chat.completion.chunk", "created": s.now, "model": s.model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}
		}
		add("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
		finish := "stop"
		if s.kind == "toolUse" {
			add("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_" + s.id, "type": "function",
				"function": map[string]any{"name": s.toolName(), "arguments": "{}"}}}}, nil))
			finish = "tool_calls"
		} else {
			for _, c := range s.chunks() {
				add("", chunk(map[string]any{"content": c}, nil))
			}
			if s.kind == "length" {
				finish = "length"
			}
		}
		add("", chunk(map[string]any{}, finish))
		evs = append(evs, event{data: "[DONE]"})
	default:
		seq := 0
		next := func() int { seq++; return seq - 1 }
		add("response.created", map[string]any{"type": "response.created", "sequence_number": next(), "response": s.response("in_progress")})
		add("response.in_progress", map[string]any{"type": "response.in_progress", "sequence_number": next(), "response": s.response("in_progress")})
		add("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": next(), "output_index": 0, "item": s.outputItem(false)})
		if s.kind == "toolUse" {
			add("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "sequence_number": next(),
				"item_id": "fc_" + s.id, "output_index": 0, "delta": "{}"})
			add("response.function_call_arguments.done", map[string]any{"type": "response.function_call_arguments.done", "sequence_number": next(),
				"item_id": "fc_" + s.id, "output_index": 0, "arguments": "{}"})
		} else {
			part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
			add("response.content_part.added", map[string]any{"type": "response.content_part.added", "sequence_number": next(), "item_id": "msg_" + s.id,
				"output_index": 0, "content_index": 0, "part": part})
			for _, c := range s.chunks() {
				add("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": next(), "item_id": "msg_" + s.id,
					"output_index": 0, "content_index": 0, "delta": c, "logprobs": []any{}})
			}
			add("response.output_text.done", map[string]any{"type": "response.output_text.done", "sequence_number": next(), "item_id": "msg_" + s.id,
				"output_index": 0, "content_index": 0, "text": s.text, "logprobs": []any{}})
			add("response.content_part.done", map[string]any{"type": "response.content_part.done", "sequence_number": next(), "item_id": "msg_" + s.id,
				"output_index": 0, "content_index": 0, "part": map[string]any{"type": "output_text", "text": s.text, "annotations": []any{}}})
		}
		add("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": next(), "output_index": 0, "item": s.outputItem(true)})
		final := "response.completed"
		if s.kind == "length" {
			final = "response.incomplete"
		}
		r := s.response("completed")
		add(final, map[string]any{"type": final, "sequence_number": next(), "response": r})
	}
	return evs
}

// requestIDHeader is the header carrying the request id in the
// provider's answers.
func requestIDHeader(api API) string {
	if api == wire.Anthropic {
		return "request-id"
	}
	return "x-request-id"
}
