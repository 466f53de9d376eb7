// Package sdkerr is what the provider SDK adapters share: the headers a reply
// keeps, the errorMessage of an API error, and the reply for an error that is
// not the provider's answer (a cancellation, a timeout, a dropped connection).
package sdkerr

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/policy"
)

// MaxBody is the most bytes of a response body that an errorMessage quotes
// when the body is not the provider's error JSON (an HTML page from a proxy,
// say); a longer body is cut at a character boundary and ends with "…".
const MaxBody = 2000

// KeepHeader reports whether the header named name (lower case) is one a
// reply keeps: retry-after, retry-after-ms, x-should-retry, and the
// rate-limit headers (x-ratelimit-*, anthropic-ratelimit-*, and the IETF
// draft's ratelimit and ratelimit-*).
func KeepHeader(name string) bool {
	switch name {
	case "retry-after", "retry-after-ms", "x-should-retry", "ratelimit":
		return true
	}
	return strings.HasPrefix(name, "x-ratelimit-") ||
		strings.HasPrefix(name, "anthropic-ratelimit-") ||
		strings.HasPrefix(name, "ratelimit-")
}

// Headers returns the headers of h that KeepHeader keeps, keyed by lower-case
// name, each with its first value; nil when there are none. Names that differ
// only in case (possible only in a header map built by hand) keep the value
// of the first in byte order.
func Headers(h http.Header) map[string]string {
	names := make([]string, 0, len(h))
	for name, vals := range h {
		if len(vals) > 0 && KeepHeader(strings.ToLower(name)) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	out := make(map[string]string, len(names))
	for _, name := range names {
		lower := strings.ToLower(name)
		if _, dup := out[lower]; !dup {
			out[lower] = h[name][0]
		}
	}
	return out
}

// APIError describes an error response of a provider, as an SDK decoded it.
type APIError struct {
	// Status is the HTTP status of the response; a status below 400 is that
	// of a stream whose body carried the error event, and is not reported.
	Status int
	// Type and Code are the provider's error type (overloaded_error,
	// rate_limit_error, invalid_request_error, ...) and finer code
	// (context_length_exceeded, ...), either of them "" when absent.
	Type, Code string
	// Message is the provider's error message.
	Message string
	// Body is the response body, quoted when Type, Code and Message are all
	// empty (a body that is not the provider's error JSON).
	Body string
	// Header is the response's header, nil when unknown.
	Header http.Header
}

// Reply returns the reply for e: stop reason "error", the errorMessage
// "<status> <type> (<code>): <message>", the status and the kept headers.
//
// The parts of the errorMessage that are missing are left out with their
// separator: "529 overloaded_error: Overloaded", "500 Internal server error"
// (no type), "529 overloaded_error" (no message). A code equal to the type is
// not repeated. With no type, code or message the body is quoted instead,
// trimmed and at most MaxBody bytes, and an empty body is written as the
// JavaScript SDKs write it, "<status> status code (no body)" (which the
// original's overflow pattern for a 400 or 413 without a body reads). A stream
// error (Status below 400) has no status prefix and reports Status 0: the
// stream's 200 says nothing about the error.
func (e APIError) Reply() policy.AssistantMessage {
	status := e.Status
	if status < 400 || status > 599 {
		status = 0
	}
	var b strings.Builder
	if status != 0 {
		b.WriteString(strconv.Itoa(status))
	}
	text := e.Type
	if e.Code != "" && e.Code != e.Type {
		if text == "" {
			text = e.Code
		} else {
			text += " (" + e.Code + ")"
		}
	}
	if e.Message != "" {
		if text == "" {
			text = e.Message
		} else {
			text += ": " + e.Message
		}
	}
	if text == "" {
		text = quoteBody(e.Body)
	}
	if text == "" && status != 0 {
		text = "status code (no body)"
	}
	if text == "" {
		text = "error event with no detail"
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	b.WriteString(text)
	return policy.AssistantMessage{
		StopReason:   policy.StopReasonError,
		ErrorMessage: b.String(),
		Status:       status,
		Headers:      Headers(e.Header),
	}
}

// quoteBody trims body and cuts it to MaxBody bytes at a character boundary.
func quoteBody(body string) string {
	body = strings.TrimSpace(body)
	if len(body) <= MaxBody {
		return body
	}
	cut := MaxBody
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return body[:cut] + "…"
}

// Transport returns the reply for err, an error that is not an API error:
//
//   - a cancellation (errors.Is context.Canceled): stop reason "aborted",
//     errorMessage "Request was aborted: <detail>";
//   - a timeout (context.DeadlineExceeded, or a net.Error that timed out):
//     "Connection error: request timed out (<detail>)", since a timeout is a
//     failed connection to the SDKs (the JavaScript SDKs' timeout error is a
//     kind of connection error);
//   - a connection failure (a *url.Error from the HTTP client, a net.Error,
//     io.EOF or io.ErrUnexpectedEOF while reading the body):
//     "Connection error: <detail>";
//   - anything else: stop reason "error" with err's text.
//
// The last three have stop reason "error" and no status; "Connection error"
// matches the original's retryable regex (connection.?error), so a dropped
// connection is retried in every classification mode. <detail> is err's text,
// or that of the error a *url.Error wraps (its method and URL are left out).
// A nil err gives a zero AssistantMessage.
func Transport(err error) policy.AssistantMessage {
	if err == nil {
		return policy.AssistantMessage{}
	}
	detail := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		detail = ue.Err.Error()
	}
	var ne net.Error
	isNet := errors.As(err, &ne)
	switch {
	case errors.Is(err, context.Canceled):
		return policy.AssistantMessage{StopReason: policy.StopReasonAborted, ErrorMessage: "Request was aborted: " + detail}
	case errors.Is(err, context.DeadlineExceeded) || (isNet && ne.Timeout()):
		return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: request timed out (" + detail + ")"}
	case ue != nil || isNet || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: " + detail}
	}
	return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: detail}
}

// CutStream is the reply for a stream that ended without error but before
// its last event (a proxy or the server closed it cleanly): stop reason
// "error", errorMessage "Connection error: <what>", retried as a dropped
// connection is.
func CutStream(what string) policy.AssistantMessage {
	return policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: " + what}
}
