package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/provider"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/wire"
)

// API is one of the provider endpoints the proxy serves (wire.API).
type API = wire.API

// The endpoints served (SPEC.md §18).
const (
	Anthropic       = wire.Anthropic
	OpenAIChat      = wire.OpenAIChat
	OpenAIResponses = wire.OpenAIResponses
)

// apiOf returns the API served at path, if any. A base URL with a prefix
// before /v1 (e.g. /anthropic/v1/messages) is accepted.
func apiOf(path string) (API, bool) {
	switch {
	case strings.HasSuffix(path, "/v1/messages"):
		return Anthropic, true
	case strings.HasSuffix(path, "/v1/chat/completions"), strings.HasSuffix(path, "/chat/completions"):
		return OpenAIChat, true
	case strings.HasSuffix(path, "/v1/responses"), strings.HasSuffix(path, "/responses"):
		return OpenAIResponses, true
	}
	return "", false
}

// request is what the proxy reads of a request body: the model, whether
// it streams and the name of the first tool offered (for a canned tool call).
type request struct {
	Model  string
	Stream bool
	Tool   string
}

// bodyError is a request body's JSON error as a person reads it: where
// the syntax fails, or which field has which kind of value and what is
// allowed (encoding/json's own messages name Go types).
func bodyError(api API, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn) && syn.Error() == "unexpected end of JSON input":
		return fmt.Errorf("request body is not valid JSON: %v", syn)
	case errors.As(err, &syn):
		return fmt.Errorf("request body is not valid JSON at byte %d: %v", syn.Offset, syn)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("request body is not a JSON object of the %s API: it is %s", api, jsonKind(typ.Value))
	case errors.As(err, &typ):
		allowed := "a string"
		switch typ.Type.Kind() {
		case reflect.Bool:
			allowed = "true or false"
		case reflect.Slice:
			allowed = "a list"
		case reflect.Struct:
			allowed = "an object"
		}
		return fmt.Errorf("request body: %s is %s (allowed: %s)", typ.Field, jsonKind(typ.Value), allowed)
	}
	return fmt.Errorf("request body is not a JSON object of the %s API", api)
}

// jsonKind is encoding/json's name of a value's kind with its article.
func jsonKind(v string) string {
	switch v {
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "bool":
		return "a boolean"
	}
	if strings.HasPrefix(v, "number") {
		return "a number"
	}
	return "a " + v
}

// MaxNameBytes bounds the model and the tool name a request gives, which
// the answer and the wire log echo: a longer one is answered 400.
const MaxNameBytes = 256

// toolName is a tool's name: Anthropic's name, or OpenAI's function.name.
type toolName struct {
	Name     string `json:"name"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// parseRequest reads the fields the answers need; the body must be a JSON
// object. scanRequest reads it; a body it does not read is
// json.Unmarshal's (decodeRequest), for the error it gives.
func parseRequest(api API, body []byte) (request, error) {
	raw, ok := scanRequest(body)
	if !ok {
		var err error
		if raw, err = decodeRequest(api, body); err != nil {
			return request{}, err
		}
	}
	req := request{Model: raw.Model, Stream: raw.Stream}
	var first toolName
	if len(raw.Tools) > 0 {
		first = raw.Tools[0]
		req.Tool = first.Name
		if req.Tool == "" {
			req.Tool = first.Function.Name
		}
	}
	for _, f := range []struct{ path, v string }{{"model", req.Model}, {"tools[0].name", first.Name}, {"tools[0].function.name", first.Function.Name}} {
		if len(f.v) > MaxNameBytes {
			return request{}, fmt.Errorf("%s: %d bytes long (at most %d)", f.path, len(f.v), MaxNameBytes)
		}
	}
	if req.Model == "" {
		req.Model = "retrysim-model"
	}
	return req, nil
}

// decodeRequest is json.Unmarshal's reading of body, its error as
// bodyError says it.
func decodeRequest(api API, body []byte) (rawRequest, error) {
	var raw rawRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return raw, bodyError(api, err)
	}
	if string(bytes.TrimSpace(body)) == "null" {
		return raw, fmt.Errorf("request body is not a JSON object of the %s API: it is null", api)
	}
	return raw, nil
}

// defaultStatus is the status of an error turn that gives none: read from
// its message as a provider would have sent it.
func defaultStatus(message string) int {
	m := strings.ToLower(message)
	switch {
	case strings.Contains(m, "overloaded"):
		return 529
	case strings.Contains(m, "rate limit"), strings.Contains(m, "rate_limit"), strings.Contains(m, "too many requests"), strings.Contains(m, "429"):
		return 429
	case strings.Contains(m, "timed out"), strings.Contains(m, "timeout"):
		return 408
	case strings.Contains(m, "service unavailable"), strings.Contains(m, "503"):
		return 503
	case strings.Contains(m, "502"), strings.Contains(m, "bad gateway"):
		return 502
	}
	return 500
}

// statusText is the status's standard message, for an error turn with no
// message.
func statusText(api API, status int) string {
	if api == Anthropic && status == 529 {
		return "Overloaded"
	}
	if t := http.StatusText(status); t != "" {
		return t
	}
	return fmt.Sprintf("HTTP %d", status)
}

// turnAnswer is the answer a script's turn gives: an error turn's status
// (none: read from its message, defaultStatus), headers and message (none:
// the status text); a success's stop reason, headers and input usage; an
// aborted turn a dropped connection.
func turnAnswer(api API, t *scenario.Turn) provider.Answer {
	a := provider.Answer{Stop: t.StopReason, Headers: t.Headers, InputTokens: int(t.Usage.Input)}
	if t.StopReason == policy.StopReasonError {
		a.Status, a.Message = t.Status, t.ErrorMessage
		if a.Status == 0 {
			a.Status = defaultStatus(t.ErrorMessage)
		}
		if a.Message == "" {
			a.Message = statusText(api, a.Status)
		}
	}
	return a
}

// errorAnswer is the proxy's own error answer: status and message.
func errorAnswer(status int, msg string) provider.Answer {
	return provider.Answer{Stop: policy.StopReasonError, Status: status, Message: msg}
}
