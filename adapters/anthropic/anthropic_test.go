package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	adapter "github.com/ohmypi/retryfsm/adapters/anthropic"
	"github.com/ohmypi/retryfsm/adapters/internal/replytest"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// now is the reply time given to the classifier (no date hint is used).
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// contextWindow is the model's window for the usage rule.
const contextWindow = 200000

// server is an httptest server that answers every request with handler and
// counts the requests.
type server struct{ *replytest.Server }

// newServer starts a server; it is closed when the test ends.
func newServer(t *testing.T, handler http.HandlerFunc) server {
	t.Helper()
	return server{replytest.NewServer(t, handler)}
}

// client is a real SDK client for s, with the SDK's own retries off.
func (s server) client() sdk.Client {
	return sdk.NewClient(
		option.WithBaseURL(s.URL),
		option.WithAPIKey("sk-ant-test"),
		option.WithHTTPClient(s.Client()),
		option.WithMaxRetries(0),
	)
}

// params is a small request.
var params = sdk.MessageNewParams{
	Model:     "claude-sonnet-4-5",
	MaxTokens: 64,
	Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hello"))},
}

// errorResponse answers with status, headers and body (JSON), with the
// provider's request id.
func errorResponse(status int, headers map[string]string, body string) http.HandlerFunc {
	return replytest.ErrorResponse("Request-Id", "req_011CSHoEeqs5C35K2UUqR7Fy", status, headers, body)
}

// dropConnection closes the connection without answering.
var dropConnection = replytest.DropConnection

// classes is a reply's classification in the three modes.
type classes = replytest.Classes

// classes3 classifies m through policy as the Controller does.
func classes3(t *testing.T, m policy.AssistantMessage) classes {
	t.Helper()
	return replytest.Classify(t, m, contextWindow, now)
}

// The providers' real error bodies and headers, through the real SDK, to
// the reply and its classification.
func TestMessageErrorResponses(t *testing.T) {
	const (
		retryable = classify.ClassRetryable
		fatal     = classify.ClassFatal
		overflow  = classify.ClassOverflow
	)
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    policy.AssistantMessage
		classes classes
	}{{
		name: "529 overloaded",
		handler: errorResponse(529, map[string]string{"X-Should-Retry": "true"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error: Overloaded",
			Status: 529, Headers: map[string]string{"x-should-retry": "true"}},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		name: "429 rate limit with retry-after",
		handler: errorResponse(429, map[string]string{
			"Retry-After":                                "7",
			"X-Should-Retry":                             "true",
			"Anthropic-Ratelimit-Input-Tokens-Limit":     "30000",
			"Anthropic-Ratelimit-Input-Tokens-Remaining": "0",
			"Anthropic-Ratelimit-Input-Tokens-Reset":     "2026-03-01T12:00:07Z",
			"Anthropic-Ratelimit-Requests-Limit":         "50",
		}, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (4a3b) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "429 rate_limit_error: This request would exceed the rate limit for your organization (4a3b) of 30,000 input tokens per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
			Status:       429, Headers: map[string]string{
				"retry-after":                                "7",
				"x-should-retry":                             "true",
				"anthropic-ratelimit-input-tokens-limit":     "30000",
				"anthropic-ratelimit-input-tokens-remaining": "0",
				"anthropic-ratelimit-input-tokens-reset":     "2026-03-01T12:00:07Z",
				"anthropic-ratelimit-requests-limit":         "50",
			}},
		classes: replytest.Want(retryable, retryable, retryable, false, 7000),
	}, {
		name: "400 prompt too long",
		handler: errorResponse(400, map[string]string{"X-Should-Retry": "false"},
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "400 invalid_request_error: prompt is too long: 208310 tokens > 200000 maximum",
			Status: 400, Headers: map[string]string{"x-should-retry": "false"}},
		classes: replytest.Want(overflow, overflow, overflow, true, -1),
	}, {
		name: "413 request too large",
		handler: errorResponse(413, nil,
			`{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "413 request_too_large: Request exceeds the maximum allowed number of bytes.",
			Status: 413},
		classes: replytest.Want(overflow, overflow, overflow, true, -1),
	}, {
		name: "500 api error",
		handler: errorResponse(500, nil,
			`{"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "500 api_error: Internal server error", Status: 500},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		// x-should-retry decides in the status modes; the original's regex
		// reads only the text.
		name: "500 with x-should-retry false",
		handler: errorResponse(500, map[string]string{"X-Should-Retry": "false"},
			`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "500 api_error: Internal server error",
			Status: 500, Headers: map[string]string{"x-should-retry": "false"}},
		classes: replytest.Want(retryable, fatal, fatal, false, -1),
	}, {
		name: "400 credit balance",
		handler: errorResponse(400, nil,
			`{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "400 invalid_request_error: Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
			Status:       400},
		classes: replytest.Want(fatal, fatal, fatal, false, -1),
	}, {
		name: "401 authentication",
		handler: errorResponse(401, nil,
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "401 authentication_error: invalid x-api-key", Status: 401},
		classes: replytest.Want(fatal, fatal, fatal, false, -1),
	}, {
		// An error type this SDK version does not know is kept as sent.
		name: "503 with a new error type",
		handler: errorResponse(503, nil,
			`{"type":"error","error":{"type":"capacity_error","message":"Service temporarily unavailable"}}`),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "503 capacity_error: Service temporarily unavailable", Status: 503},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		// A proxy's page, not the API's JSON: quoted.
		name: "502 from a proxy",
		handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>\n"))
		},
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "502 <html><body>502 Bad Gateway</body></html>", Status: 502},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		// Written as the JavaScript SDK writes it, which the original's
		// overflow pattern for a 400 or 413 without a body reads.
		name:    "400 with no body",
		handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) },
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "400 status code (no body)", Status: 400},
		classes: replytest.Want(overflow, overflow, overflow, true, -1),
	}, {
		name:    "dropped connection",
		handler: dropConnection,
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: EOF"},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			client := s.client()
			msg, err := client.Messages.New(context.Background(), params)
			if err == nil {
				t.Fatalf("New: no error (message %+v)", msg)
			}
			got := adapter.Message(err)
			assertReply(t, got, tt.want)
			if c := classes3(t, got); c != tt.classes {
				t.Errorf("classes = %+v, want %+v", c, tt.classes)
			}
			// Reply of the same result is Message.
			assertReply(t, adapter.Reply(msg, err), tt.want)
			if n := s.Requests.Load(); n != 1 {
				t.Errorf("the server saw %d requests, want 1 (the SDK's retries are off)", n)
			}
		})
	}
}

// assertReply compares two replies field by field.
func assertReply(t *testing.T, got, want policy.AssistantMessage) {
	t.Helper()
	if got.StopReason != want.StopReason || got.ErrorMessage != want.ErrorMessage || got.Status != want.Status ||
		got.InputTokens != want.InputTokens || got.CacheReadTokens != want.CacheReadTokens {
		t.Errorf("reply = {%s %q status %d in %d cache %d}, want {%s %q status %d in %d cache %d}",
			got.StopReason, got.ErrorMessage, got.Status, got.InputTokens, got.CacheReadTokens,
			want.StopReason, want.ErrorMessage, want.Status, want.InputTokens, want.CacheReadTokens)
	}
	if fmt.Sprint(got.Headers) != fmt.Sprint(want.Headers) {
		t.Errorf("headers = %v, want %v", got.Headers, want.Headers)
	}
}

// A cancelled request is aborted, whether it was waiting for the response
// or reading a stream.
func TestMessageCancelled(t *testing.T) {
	started := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if b, _ := io.ReadAll(r.Body); strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(messageStart))
			w.(http.Flusher).Flush()
		}
		close(started)
		<-r.Context().Done()
	})
	client := s.client()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := client.Messages.New(ctx, params)
	m := adapter.Message(err)
	if m.StopReason != policy.StopReasonAborted || !strings.HasPrefix(m.ErrorMessage, "Request was aborted: ") {
		t.Errorf("cancelled call: %+v (err %v)", m, err)
	}
	if c := classes3(t, m).Message; c != classify.ClassAborted {
		t.Errorf("class = %v, want aborted", c)
	}

	started = make(chan struct{})
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var acc sdk.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
		<-started
		cancel()
	}
	m = adapter.StreamMessage(acc, stream.Err())
	if m.StopReason != policy.StopReasonAborted || m.InputTokens != 1200 {
		t.Errorf("cancelled stream: %+v (err %v)", m, stream.Err())
	}
}

// A deadline that has passed is a timeout: a connection error.
func TestMessageTimeout(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	client := s.client()
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	_, err := client.Messages.New(ctx, params)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline", err)
	}
	m := adapter.Message(err)
	if m.StopReason != policy.StopReasonError || m.ErrorMessage != "Connection error: request timed out (context deadline exceeded)" {
		t.Errorf("timeout: %+v", m)
	}
	if c := classes3(t, m); c.Message != classify.ClassRetryable {
		t.Errorf("class = %v, want retryable", c.Message)
	}
}

// The SSE events of a reply, as the API sends them.
const (
	messageStart = "event: message_start\n" +
		`data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1200,"cache_read_input_tokens":300,"cache_creation_input_tokens":0,"output_tokens":1}}}` + "\n\n"
	textStart = "event: content_block_start\n" +
		`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
		"event: ping\n" + `data: {"type": "ping"}` + "\n\n" +
		"event: content_block_delta\n" +
		`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n"
	messageEnd = "event: content_block_stop\n" +
		`data: {"type":"content_block_stop","index":0}` + "\n\n" +
		"event: message_delta\n" +
		`data: {"type":"message_delta","delta":{"stop_reason":"%s","stop_sequence":null},"usage":{"output_tokens":5}}` + "\n\n" +
		"event: message_stop\n" +
		`data: {"type":"message_stop"}` + "\n\n"
	overloadedEvent = "event: error\n" +
		`data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}` + "\n\n"
)

// streamOf answers with the SSE text body; abort then drops the connection.
func streamOf(body string, abort bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Anthropic-Ratelimit-Requests-Remaining", "49")
		_, _ = w.Write([]byte(body))
		w.(http.Flusher).Flush()
		if abort {
			panic(http.ErrAbortHandler) // the connection is closed mid-body
		}
	}
}

// Streams: complete, cut by an error event, by a dropped connection, or
// closed cleanly before their end.
func TestStreamMessage(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    policy.AssistantMessage
		class   classify.Class
	}{{
		name:    "end_turn",
		handler: streamOf(messageStart+textStart+fmt.Sprintf(messageEnd, "end_turn"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonStop, InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassSuccess,
	}, {
		name:    "tool_use",
		handler: streamOf(messageStart+textStart+fmt.Sprintf(messageEnd, "tool_use"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonToolUse, InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassSuccess,
	}, {
		name:    "max_tokens",
		handler: streamOf(messageStart+textStart+fmt.Sprintf(messageEnd, "max_tokens"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonLength, InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassSuccess,
	}, {
		name:    "refusal",
		handler: streamOf(messageStart+textStart+fmt.Sprintf(messageEnd, "refusal"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "stop_reason refusal", InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassFatal,
	}, {
		// An error event: the stream's status is 200, so none is reported.
		name:    "overloaded error event",
		handler: streamOf(messageStart+textStart+overloadedEvent, false),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "overloaded_error: Overloaded",
			InputTokens: 1200, CacheReadTokens: 300, Headers: map[string]string{"anthropic-ratelimit-requests-remaining": "49"}},
		class: classify.ClassRetryable,
	}, {
		name:    "connection dropped mid-stream",
		handler: streamOf(messageStart+textStart, true),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: unexpected EOF", InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassRetryable,
	}, {
		name:    "closed before message_stop",
		handler: streamOf(messageStart+textStart, false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: stream ended before message_stop", InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassRetryable,
	}, {
		name: "529 before the stream",
		handler: errorResponse(529, map[string]string{"X-Should-Retry": "true"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error: Overloaded",
			Status: 529, Headers: map[string]string{"x-should-retry": "true"}},
		class: classify.ClassRetryable,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			client := s.client()
			stream := client.Messages.NewStreaming(context.Background(), params)
			defer stream.Close()
			var acc sdk.Message
			for stream.Next() {
				if err := acc.Accumulate(stream.Current()); err != nil {
					t.Fatal(err)
				}
			}
			got := adapter.StreamMessage(acc, stream.Err())
			assertReply(t, got, tt.want)
			if c := classes3(t, got); c.Message != tt.class || c.Status != tt.class || c.Strict != tt.class {
				t.Errorf("classes = %+v, want %v in every mode", c, tt.class)
			}
		})
	}
}

// A reply that was not streamed: its stop reason and usage.
func TestReplySuccess(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":210000,"cache_read_input_tokens":0,"output_tokens":5}}`))
	})
	client := s.client()
	got := adapter.Reply(client.Messages.New(context.Background(), params))
	assertReply(t, got, policy.AssistantMessage{StopReason: policy.StopReasonStop, InputTokens: 210000})
	// A success over the window: a success for the retry machine, an
	// overflow for the compaction hand-off.
	if o := classify.ClassifyReply(got, contextWindow, now); o.Class != classify.ClassSuccess || !o.Overflow {
		t.Errorf("class %v overflow %v, want success and overflow", o.Class, o.Overflow)
	}
}

// Message of errors built by hand: the parts of an API error that are
// missing, and errors that are not API errors.
func TestMessageByHand(t *testing.T) {
	var nilErr error
	if got := adapter.Message(nilErr); got.StopReason != "" || got.ErrorMessage != "" {
		t.Errorf("Message(nil) = %+v, want the zero reply", got)
	}
	other := adapter.Message(errors.New("error parsing response json: unexpected end of JSON input"))
	assertReply(t, other, policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "error parsing response json: unexpected end of JSON input"})
	if c := classes3(t, other); c.Message != classify.ClassFatal {
		t.Errorf("class = %v, want fatal", c.Message)
	}
	empty := adapter.Reply(nil, nil)
	if empty.StopReason != policy.StopReasonError || empty.ErrorMessage == "" {
		t.Errorf("Reply(nil, nil) = %+v, want an error reply", empty)
	}
}
