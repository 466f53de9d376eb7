package sdktest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	anthropicopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	openai "github.com/openai/openai-go/v3"
	openaiopt "github.com/openai/openai-go/v3/option"

	"github.com/ohmypi/retryfsm"
	anthropicreply "github.com/ohmypi/retryfsm/adapters/anthropic"
	"github.com/ohmypi/retryfsm/adapters/internal/stepclock"
	openaireply "github.com/ohmypi/retryfsm/adapters/openai"
	"github.com/ohmypi/retryfsm/policy"
)

// script is an httptest server answering its requests in turn with the
// statuses given (the last one repeats); onRequest, if set, runs first with
// the request's number (from 1) and the request, its body read.
type script struct {
	*httptest.Server
	requests  atomic.Int32
	onRequest func(n int, r *http.Request)
}

func newScript(t *testing.T, okBody, errBody string, statuses ...int) *script {
	t.Helper()
	s := &script{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(s.requests.Add(1))
		_, _ = io.Copy(io.Discard, r.Body) // read whole: the server then sees the client go (r.Context())
		if s.onRequest != nil {
			s.onRequest(n, r)
		}
		status := statuses[min(n, len(statuses))-1]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status == http.StatusOK {
			_, _ = w.Write([]byte(okBody))
			return
		}
		_, _ = w.Write([]byte(errBody))
	}))
	t.Cleanup(s.Close)
	return s
}

const (
	anthropicOK = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`
	openaiOK    = `{"id":"chatcmpl-1","object":"chat.completion","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Hello"},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
)

// sdkCase is one SDK: how to call it through Do against a server.
type sdkCase struct {
	name          string
	okBody        string
	overloaded    string // the 529's body
	badRequest    string // the 400's body
	wantStartText string // the first auto_retry_start's errorMessage
	do            func(ctx context.Context, url string, opts ...retryfsm.Option) (text string, err error)
	// statusOf reads the SDK's error type through errors.As (ok false when
	// errors.As does not reach it).
	statusOf func(err error) (status int, ok bool)
}

var sdkCases = []sdkCase{
	{
		name:          "anthropic",
		okBody:        anthropicOK,
		overloaded:    `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
		badRequest:    `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`,
		wantStartText: "529 overloaded_error: Overloaded",
		do: func(ctx context.Context, url string, opts ...retryfsm.Option) (string, error) {
			client := anthropic.NewClient(anthropicopt.WithBaseURL(url), anthropicopt.WithAPIKey("sk-ant-test"), anthropicopt.WithMaxRetries(0))
			params := anthropic.MessageNewParams{
				Model:     "claude-sonnet-4-5",
				MaxTokens: 64,
				Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
			}
			// The five lines of the README.
			msg, err := retryfsm.Do(ctx, policy.DefaultPolicy(),
				func(ctx context.Context) (*anthropic.Message, error) {
					return client.Messages.New(ctx, params)
				},
				append([]retryfsm.Option{retryfsm.WithReply(anthropicreply.Message)}, opts...)...)
			if err != nil {
				return "", err
			}
			return msg.Content[0].Text, nil
		},
		statusOf: func(err error) (int, bool) {
			var e *anthropic.Error
			if !errors.As(err, &e) {
				return 0, false
			}
			return e.StatusCode, true
		},
	},
	{
		name:          "openai",
		okBody:        openaiOK,
		overloaded:    `{"error":{"message":"The server is overloaded","type":"server_error","param":null,"code":null}}`,
		badRequest:    `{"error":{"message":"Invalid model","type":"invalid_request_error","param":"model","code":"model_not_found"}}`,
		wantStartText: "529 server_error: The server is overloaded",
		do: func(ctx context.Context, url string, opts ...retryfsm.Option) (string, error) {
			client := openai.NewClient(openaiopt.WithBaseURL(url), openaiopt.WithAPIKey("sk-test"), openaiopt.WithMaxRetries(0))
			params := openai.ChatCompletionNewParams{
				Model:    "gpt-4o",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
			}
			c, err := retryfsm.Do(ctx, policy.DefaultPolicy(),
				func(ctx context.Context) (*openai.ChatCompletion, error) {
					return client.Chat.Completions.New(ctx, params)
				},
				append([]retryfsm.Option{retryfsm.WithReply(openaireply.Message)}, opts...)...)
			if err != nil {
				return "", err
			}
			return c.Choices[0].Message.Content, nil
		},
		statusOf: func(err error) (int, bool) {
			var e *openai.Error
			if !errors.As(err, &e) {
				return 0, false
			}
			return e.StatusCode, true
		},
	},
}

// events collects a chain's events as JSON.
type events struct {
	mu  sync.Mutex
	got []string
}

func (e *events) add(ev policy.Event) {
	b := ev.AppendJSONFields([]byte{'{'})
	e.mu.Lock()
	e.got = append(e.got, string(b))
	e.mu.Unlock()
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.got)
}

// TestDoSDK: with each real SDK against an httptest server, Do retries two
// 529s with the default profile's 2 s and 4 s waits and returns the third
// call's value; a 400 is not retried and its error is the SDK's, through
// errors.As; a server that keeps answering 529 exhausts the chain (an
// *Error holding the *policy.ExhaustedError and the SDK's last error); and
// cancelling the ctx stops the chain: no request after Do returned.
func TestDoSDK(t *testing.T) {
	for _, sc := range sdkCases {
		t.Run(sc.name+"/529,529,200", func(t *testing.T) {
			srv := newScript(t, sc.okBody, sc.overloaded, 529, 529, 200)
			clk := stepclock.New()
			defer clk.Stop()
			var ev events
			text, err := sc.do(context.Background(), srv.URL,
				retryfsm.WithConfig(func(c *policy.Config) { c.Clock = clk }), retryfsm.OnEvent(ev.add))
			if err != nil || text != "Hello" {
				t.Fatalf("Do = %q, %v; want Hello, nil", text, err)
			}
			if n := srv.requests.Load(); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
			if w := clk.Waits(); !slices.Equal(w, []time.Duration{2 * time.Second, 4 * time.Second}) {
				t.Errorf("waits %v, want [2s 4s]", w)
			}
			want := []string{
				`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"` + sc.wantStartText + `"}`,
				`{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"` + sc.wantStartText + `"}`,
				`{"type":"auto_retry_end","success":true,"attempt":2}`,
			}
			if got := ev.list(); !slices.Equal(got, want) {
				t.Errorf("events\n%q\nwant\n%q", got, want)
			}
		})
		t.Run(sc.name+"/400", func(t *testing.T) {
			srv := newScript(t, sc.okBody, sc.badRequest, 400)
			var ev events
			_, err := sc.do(context.Background(), srv.URL, retryfsm.OnEvent(ev.add))
			if status, ok := sc.statusOf(err); !ok || status != 400 {
				t.Fatalf("Do error %v: errors.As reaches the SDK's error %v with status %d, want status 400", err, ok, status)
			}
			var re *retryfsm.Error
			if errors.As(err, &re) {
				t.Errorf("a 400 is not retried, yet the error is a *retryfsm.Error: %v", err)
			}
			if n := srv.requests.Load(); n != 1 || len(ev.list()) != 0 {
				t.Errorf("%d requests, events %q; want 1 request, no event", n, ev.list())
			}
		})
		t.Run(sc.name+"/exhausted", func(t *testing.T) {
			srv := newScript(t, sc.okBody, sc.overloaded, 529)
			clk := stepclock.New()
			defer clk.Stop()
			_, err := sc.do(context.Background(), srv.URL, retryfsm.WithConfig(func(c *policy.Config) { c.Clock = clk }))
			var ex *policy.ExhaustedError
			var re *retryfsm.Error
			if !errors.As(err, &ex) || ex.Reason != policy.ReasonMaxRetries || ex.Attempt != 3 || ex.FinalError != sc.wantStartText {
				t.Fatalf("Do error %v, want an *ExhaustedError max_retries at attempt 3", err)
			}
			if status, ok := sc.statusOf(err); !ok || status != 529 {
				t.Errorf("errors.As reaches the SDK's error: %v, status %d", ok, status)
			}
			if !errors.As(err, &re) || re.Calls != 4 || srv.requests.Load() != 4 {
				t.Errorf("calls: %+v, %d requests; want 4", re, srv.requests.Load())
			}
		})
		t.Run(sc.name+"/cancel", func(t *testing.T) {
			srv := newScript(t, sc.okBody, sc.overloaded, 529)
			clk := stepclock.New()
			defer clk.Stop()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			srv.onRequest = func(n int, r *http.Request) {
				if n == 2 {
					cancel() // during the first retry's request,
					// answered only once the client has gone: the SDK never
					// reads a 529 here (it did, once, under load: a second
					// retry started before the cancel was seen).
					<-r.Context().Done()
				}
			}
			var ev events
			_, err := sc.do(ctx, srv.URL, retryfsm.WithConfig(func(c *policy.Config) { c.Clock = clk }), retryfsm.OnEvent(ev.add))
			if !errors.Is(err, policy.ErrRetryCancelled) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Do error %v, want one matching ErrRetryCancelled and context.Canceled", err)
			}
			after := srv.requests.Load()
			if after != 2 {
				t.Errorf("%d requests, want 2", after)
			}
			got := ev.list()
			if len(got) != 2 || got[1] != `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}` {
				t.Errorf("events %q, want a start and the cancelled end", got)
			}
		})
	}
}
