package sdkerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// Every combination of the parts of an API error, and the status rules.
func TestAPIErrorReply(t *testing.T) {
	tests := []struct {
		e      APIError
		text   string
		status int
	}{
		{APIError{Status: 529, Type: "overloaded_error", Message: "Overloaded"}, "529 overloaded_error: Overloaded", 529},
		{APIError{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Message: "m"}, "400 invalid_request_error (context_length_exceeded): m", 400},
		{APIError{Status: 429, Type: "insufficient_quota", Code: "insufficient_quota", Message: "m"}, "429 insufficient_quota: m", 429},
		{APIError{Status: 429, Code: "rate_limit_exceeded", Message: "m"}, "429 rate_limit_exceeded: m", 429},
		{APIError{Status: 500, Message: "Internal server error"}, "500 Internal server error", 500},
		{APIError{Status: 529, Type: "overloaded_error"}, "529 overloaded_error", 529},
		{APIError{Status: 502, Body: "  <html>bad gateway</html>\n"}, "502 <html>bad gateway</html>", 502},
		{APIError{Status: 400}, "400 status code (no body)", 400},
		{APIError{Status: 413, Body: " \n"}, "413 status code (no body)", 413},
		// A stream's error event: the 200 is not the error's status.
		{APIError{Status: 200, Type: "overloaded_error", Message: "Overloaded"}, "overloaded_error: Overloaded", 0},
		{APIError{Type: "api_error", Message: "Internal server error"}, "api_error: Internal server error", 0},
		{APIError{Status: 200, Body: "not json"}, "not json", 0},
		{APIError{}, "error event with no detail", 0},
		{APIError{Status: 600, Message: "m"}, "m", 0},
	}
	for _, tt := range tests {
		got := tt.e.Reply()
		if got.StopReason != policy.StopReasonError || got.ErrorMessage != tt.text || got.Status != tt.status {
			t.Errorf("%+v.Reply() = %+v, want error %q status %d", tt.e, got, tt.text, tt.status)
		}
		if err := got.ValidateHTTP(); err != nil {
			t.Errorf("%+v.Reply(): %v", tt.e, err)
		}
	}
}

// A long body is cut at MaxBody bytes, at a character boundary.
func TestAPIErrorLongBody(t *testing.T) {
	body := strings.Repeat("a", MaxBody-1) + "é" + strings.Repeat("b", 100) // é straddles the limit
	got := APIError{Status: 502, Body: body}.Reply().ErrorMessage
	want := "502 " + strings.Repeat("a", MaxBody-1) + "…"
	if got != want {
		t.Errorf("errorMessage has %d bytes ending %q, want %d ending %q", len(got), got[len(got)-10:], len(want), want[len(want)-10:])
	}
	if !utf8.ValidString(got) {
		t.Error("errorMessage is not valid UTF-8")
	}
	exact := strings.Repeat("c", MaxBody)
	if got := (APIError{Status: 502, Body: exact}).Reply().ErrorMessage; got != "502 "+exact {
		t.Errorf("a body of MaxBody bytes was cut: %d bytes", len(got))
	}
}

// Headers keeps the retry-relevant headers, lower-cased, first value.
func TestHeaders(t *testing.T) {
	h := http.Header{
		"Retry-After":                            {"7", "8"},
		"Retry-After-Ms":                         {"7000"},
		"X-Should-Retry":                         {"true"},
		"X-Ratelimit-Reset-Tokens":               {"2s"},
		"Anthropic-Ratelimit-Requests-Remaining": {"0"},
		"Ratelimit":                              {"limit=10, remaining=0, reset=5"},
		"Ratelimit-Policy":                       {"10;w=60"},
		"Request-Id":                             {"req_1"},
		"Content-Type":                           {"application/json"},
		"X-Ratelimit":                            {"not a prefix match"},
		"Empty-Retry":                            {},
		"retry-after":                            {"9"}, // set by hand, not canonical: "Retry-After" wins
	}
	got := Headers(h)
	want := map[string]string{
		"retry-after":                            "7",
		"retry-after-ms":                         "7000",
		"x-should-retry":                         "true",
		"x-ratelimit-reset-tokens":               "2s",
		"anthropic-ratelimit-requests-remaining": "0",
		"ratelimit":                              "limit=10, remaining=0, reset=5",
		"ratelimit-policy":                       "10;w=60",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Headers = %v\nwant %v", got, want)
	}
	if got := Headers(http.Header{"Content-Type": {"text/html"}}); got != nil {
		t.Errorf("Headers with none kept = %v, want nil", got)
	}
	if err := (policy.AssistantMessage{Headers: got}).ValidateHTTP(); err != nil {
		t.Error(err)
	}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// Transport sorts errors that are not API errors.
func TestTransport(t *testing.T) {
	urlErr := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://user:secret@example.com/v1/messages", Err: err}
	}
	tests := []struct {
		err  error
		stop policy.StopReason
		text string
	}{
		{context.Canceled, policy.StopReasonAborted, "Request was aborted: context canceled"},
		{urlErr(context.Canceled), policy.StopReasonAborted, "Request was aborted: context canceled"},
		{fmt.Errorf("reading stream: %w", context.Canceled), policy.StopReasonAborted, "Request was aborted: reading stream: context canceled"},
		{context.DeadlineExceeded, policy.StopReasonError, "Connection error: request timed out (context deadline exceeded)"},
		{urlErr(context.DeadlineExceeded), policy.StopReasonError, "Connection error: request timed out (context deadline exceeded)"},
		{urlErr(timeoutErr{}), policy.StopReasonError, "Connection error: request timed out (i/o timeout)"},
		{urlErr(io.EOF), policy.StopReasonError, "Connection error: EOF"},
		{io.ErrUnexpectedEOF, policy.StopReasonError, "Connection error: unexpected EOF"},
		{&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, policy.StopReasonError, "Connection error: read tcp: read: connection reset by peer"},
		{urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), policy.StopReasonError, "Connection error: dial tcp: connect: connection refused"},
		{errors.New("error parsing response json: invalid character"), policy.StopReasonError, "error parsing response json: invalid character"},
	}
	for _, tt := range tests {
		got := Transport(tt.err)
		if got.StopReason != tt.stop || got.ErrorMessage != tt.text || got.Status != 0 || got.Headers != nil {
			t.Errorf("Transport(%v) = %+v, want %s %q", tt.err, got, tt.stop, tt.text)
		}
		if strings.Contains(got.ErrorMessage, "secret") {
			t.Errorf("Transport(%v) quotes the URL: %q", tt.err, got.ErrorMessage)
		}
	}
	if got := Transport(nil); got.StopReason != "" || got.ErrorMessage != "" {
		t.Errorf("Transport(nil) = %+v, want the zero reply", got)
	}
}

// A cut stream is a retryable connection error.
func TestCutStream(t *testing.T) {
	m := CutStream("stream ended before message_stop")
	if m.StopReason != policy.StopReasonError || m.ErrorMessage != "Connection error: stream ended before message_stop" {
		t.Errorf("CutStream = %+v", m)
	}
	if c := classify.ClassifyReply(m, 0, testTime).Class; c != classify.ClassRetryable {
		t.Errorf("class = %v, want retryable", c)
	}
}

// testTime is a fixed reply time.
var testTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
