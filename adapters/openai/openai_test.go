package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ohmypi/retryfsm/adapters/internal/replytest"
	adapter "github.com/ohmypi/retryfsm/adapters/openai"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// now is the reply time given to the classifier (no date hint is used).
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// contextWindow is the model's window for the usage rule.
const contextWindow = 128000

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
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(s.Client()),
		option.WithMaxRetries(0),
	)
}

// params is a small request.
var params = sdk.ChatCompletionNewParams{
	Model:    "gpt-4o",
	Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hello")},
}

// errorResponse answers with status, headers and body (JSON), with the
// provider's request id.
func errorResponse(status int, headers map[string]string, body string) http.HandlerFunc {
	return replytest.ErrorResponse("X-Request-Id", "req_5c3f0e0ab3b5f7a3e1e1d1c1b1a19181", status, headers, body)
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

// The provider's real error bodies and headers, through the real SDK, to
// the reply and its classification.
func TestMessageErrorResponses(t *testing.T) {
	const (
		retryable = classify.ClassRetryable
		fatal     = classify.ClassFatal
		overflow  = classify.ClassOverflow
	)
	rateLimitHeaders := map[string]string{
		"Retry-After":                    "3",
		"X-Should-Retry":                 "true",
		"X-Ratelimit-Limit-Requests":     "500",
		"X-Ratelimit-Limit-Tokens":       "30000",
		"X-Ratelimit-Remaining-Requests": "499",
		"X-Ratelimit-Remaining-Tokens":   "0",
		"X-Ratelimit-Reset-Requests":     "120ms",
		"X-Ratelimit-Reset-Tokens":       "2.028s",
	}
	rateLimitKept := map[string]string{
		"retry-after":                    "3",
		"x-should-retry":                 "true",
		"x-ratelimit-limit-requests":     "500",
		"x-ratelimit-limit-tokens":       "30000",
		"x-ratelimit-remaining-requests": "499",
		"x-ratelimit-remaining-tokens":   "0",
		"x-ratelimit-reset-requests":     "120ms",
		"x-ratelimit-reset-tokens":       "2.028s",
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    policy.AssistantMessage
		classes classes
	}{{
		name: "429 rate limit with retry-after",
		handler: errorResponse(429, rateLimitHeaders,
			`{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29764, Requested 1250. Please try again in 2.028s. Visit https://platform.openai.com/account/rate-limits to learn more.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "429 tokens (rate_limit_exceeded): Rate limit reached for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Used 29764, Requested 1250. Please try again in 2.028s. Visit https://platform.openai.com/account/rate-limits to learn more.",
			Status:       429, Headers: rateLimitKept},
		classes: replytest.Want(retryable, retryable, retryable, false, 3000),
	}, {
		// No header hint: the text's "try again in 2.028s" is the hint.
		name: "429 rate limit without headers",
		handler: errorResponse(429, nil,
			`{"error":{"message":"Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "429 requests (rate_limit_exceeded): Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.",
			Status:       429},
		classes: replytest.Want(retryable, retryable, retryable, false, 120),
	}, {
		// Retried by the original's regex (429) and by status; final in
		// strict mode.
		name: "429 insufficient quota",
		handler: errorResponse(429, nil,
			`{"error":{"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "429 insufficient_quota: You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.",
			Status:       429},
		classes: replytest.Want(retryable, retryable, fatal, false, -1),
	}, {
		name: "400 context length exceeded",
		handler: errorResponse(400, nil,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "400 invalid_request_error (context_length_exceeded): This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.",
			Status:       400},
		classes: replytest.Want(overflow, overflow, overflow, true, -1),
	}, {
		name: "500 server error",
		handler: errorResponse(500, nil,
			`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "500 server_error: The server had an error while processing your request. Sorry about that!", Status: 500},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		name: "503 overloaded",
		handler: errorResponse(503, nil,
			`{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "503 server_error: The engine is currently overloaded, please try again later", Status: 503},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		// An OpenAI-compatible gateway in front of Anthropic.
		name: "529 overloaded",
		handler: errorResponse(529, nil,
			`{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}}`),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error: Overloaded", Status: 529},
		classes: replytest.Want(retryable, retryable, retryable, false, -1),
	}, {
		name: "401 invalid key",
		handler: errorResponse(401, map[string]string{"X-Should-Retry": "false"},
			`{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "401 invalid_request_error (invalid_api_key): Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.",
			Status:       401, Headers: map[string]string{"x-should-retry": "false"}},
		classes: replytest.Want(fatal, fatal, fatal, false, -1),
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
		name:    "413 with no body",
		handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(413) },
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "413 status code (no body)", Status: 413},
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
			c, err := client.Chat.Completions.New(context.Background(), params)
			if err == nil {
				t.Fatalf("New: no error (completion %+v)", c)
			}
			got := adapter.Message(err)
			assertReply(t, got, tt.want)
			if cl := classes3(t, got); cl != tt.classes {
				t.Errorf("classes = %+v, want %+v", cl, tt.classes)
			}
			// Reply of the same result is Message, and Message does not
			// consume the body the SDK keeps for its Dump methods.
			assertReply(t, adapter.Reply(c, err), tt.want)
			if n := s.Requests.Load(); n != 1 {
				t.Errorf("the server saw %d requests, want 1 (the SDK's retries are off)", n)
			}
		})
	}
}

// The body of an error response that is not JSON stays readable after
// Message quoted it.
func TestMessageKeepsBody(t *testing.T) {
	const page = "<html><body>502 Bad Gateway</body></html>"
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(502)
		_, _ = w.Write([]byte(page))
	})
	client := s.client()
	_, err := client.Chat.Completions.New(context.Background(), params)
	if got := adapter.Message(err).ErrorMessage; got != "502 "+page {
		t.Errorf("errorMessage = %q", got)
	}
	var e *sdk.Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T is not an *openai.Error", err)
	}
	b, _ := io.ReadAll(e.Response.Body)
	if string(b) != page {
		t.Errorf("body after Message = %q, want %q", b, page)
	}
}

// A cancelled request is aborted, whether it was waiting for the response
// or reading a stream.
func TestMessageCancelled(t *testing.T) {
	started := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), `"stream":true`) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(chunkStart))
			w.(http.Flusher).Flush()
		}
		close(started)
		<-r.Context().Done()
	})
	client := s.client()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := client.Chat.Completions.New(ctx, params)
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
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var acc sdk.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
		<-started
		cancel()
	}
	m = adapter.StreamMessage(acc.ChatCompletion, stream.Err())
	if m.StopReason != policy.StopReasonAborted {
		t.Errorf("cancelled stream: %+v (err %v)", m, stream.Err())
	}
}

// A deadline that has passed is a timeout: a connection error.
func TestMessageTimeout(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	client := s.client()
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	_, err := client.Chat.Completions.New(ctx, params)
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

// The SSE chunks of a chat completion, as the API sends them.
const (
	chunkStart = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}` + "\n\n"
	chunkEnd = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"%s"}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":5,"total_tokens":1505,"prompt_tokens_details":{"cached_tokens":300}}}` + "\n\n" +
		"data: [DONE]\n\n"
	errorEvent = `data: {"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}` + "\n\n"
)

// streamOf answers with the SSE text body; abort then drops the connection.
func streamOf(body string, abort bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Ratelimit-Remaining-Requests", "499")
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
		name:    "stop",
		handler: streamOf(chunkStart+fmt.Sprintf(chunkEnd, "stop"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonStop, InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassSuccess,
	}, {
		name:    "tool_calls",
		handler: streamOf(chunkStart+fmt.Sprintf(chunkEnd, "tool_calls"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonToolUse, InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassSuccess,
	}, {
		name:    "length",
		handler: streamOf(chunkStart+fmt.Sprintf(chunkEnd, "length"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonLength, InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassSuccess,
	}, {
		name:    "content_filter",
		handler: streamOf(chunkStart+fmt.Sprintf(chunkEnd, "content_filter"), false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "finish_reason content_filter", InputTokens: 1200, CacheReadTokens: 300},
		class:   classify.ClassFatal,
	}, {
		// An error event: the stream's status is 200, so none is reported,
		// and the text alone decides. The original's regex does not match
		// it (nor did it match the JavaScript SDK's text, the bare
		// message): retryablePatterns ["server_error"] retries it.
		name:    "server_error event",
		handler: streamOf(chunkStart+errorEvent, false),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "server_error: The server had an error while processing your request. Sorry about that!"},
		class: classify.ClassFatal,
	}, {
		name:    "connection dropped mid-stream",
		handler: streamOf(chunkStart, true),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: unexpected EOF"},
		class:   classify.ClassRetryable,
	}, {
		name:    "closed before a finish_reason",
		handler: streamOf(chunkStart, false),
		want:    policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "Connection error: stream ended without a finish_reason"},
		class:   classify.ClassRetryable,
	}, {
		name: "500 before the stream",
		handler: errorResponse(500, map[string]string{"X-Should-Retry": "true"},
			`{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`),
		want: policy.AssistantMessage{StopReason: policy.StopReasonError,
			ErrorMessage: "500 server_error: The server had an error while processing your request. Sorry about that!",
			Status:       500, Headers: map[string]string{"x-should-retry": "true"}},
		class: classify.ClassRetryable,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.handler)
			client := s.client()
			stream := client.Chat.Completions.NewStreaming(context.Background(), params)
			defer stream.Close()
			var acc sdk.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			got := adapter.StreamMessage(acc.ChatCompletion, stream.Err())
			assertReply(t, got, tt.want)
			if c := classes3(t, got); c.Message != tt.class || c.Status != tt.class || c.Strict != tt.class {
				t.Errorf("classes = %+v, want %v in every mode", c, tt.class)
			}
		})
	}
}

// A completion that was not streamed: its finish reason and usage.
func TestReplySuccess(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":130000,"completion_tokens":5,"total_tokens":130005,"prompt_tokens_details":{"cached_tokens":1000}}}`))
	})
	client := s.client()
	got := adapter.Reply(client.Chat.Completions.New(context.Background(), params))
	assertReply(t, got, policy.AssistantMessage{StopReason: policy.StopReasonStop, InputTokens: 129000, CacheReadTokens: 1000})
	// A success over the window: a success for the retry machine, an
	// overflow for the compaction hand-off.
	if o := classify.ClassifyReply(got, contextWindow, now); o.Class != classify.ClassSuccess || !o.Overflow {
		t.Errorf("class %v overflow %v, want success and overflow", o.Class, o.Overflow)
	}
}

// Message of errors built by hand: errors that are not API errors.
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
