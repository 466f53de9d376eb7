// Command sdkagent is a small agent that talks to a provider through its real
// Go SDK under a policy.Controller, on the real clock with short delays.
//
// It runs offline: it starts a local server that plays the provider, with
// the provider's real error bodies and headers, and sends three prompts
// through the SDK's streaming API:
//
//  1. an overloaded error, a dropped connection and a 429 rate limit, each
//     retried after 5, 10 and 20 ms, then a reply;
//  2. a prompt that is too long: a context overflow, not retried but handed
//     to compaction;
//  3. an overloaded error, then an invalid API key: the retry chain gives
//     up.
//
// Usage:
//
//	go run ./examples/sdkagent                    # the Anthropic SDK
//	go run ./examples/sdkagent -provider openai   # the OpenAI SDK
//
// The SDK's own retries are switched off (option.WithMaxRetries(0)): the
// Controller retries the run, and SDK retries under it would multiply.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/benbjohnson/clock"
	"github.com/openai/openai-go/v3"
	openaioption "github.com/openai/openai-go/v3/option"

	anthropicreply "github.com/ohmypi/retryfsm/adapters/anthropic"
	openaireply "github.com/ohmypi/retryfsm/adapters/openai"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

func main() {
	provider := flag.String("provider", "anthropic", `the SDK to use: "anthropic" or "openai"`)
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *provider, clock.New()); err != nil {
		fmt.Fprintln(os.Stderr, "sdkagent:", err)
		os.Exit(1)
	}
}

// baseDelay is the wait before the first retry: short, so that the example
// runs in a blink on the real clock.
const baseDelay = 5 * time.Millisecond

// contextWindow is the model's context window, for the overflow usage rule.
const contextWindow = 200000

// run runs the three prompts with provider's SDK against a local server,
// writing each reply, each retry event and each prompt's outcome to w. clk
// is the Controller's clock (clock.New() in main, a mock in the test).
func run(ctx context.Context, w io.Writer, provider string, clk clock.Clock) error {
	script, ok := scripts[provider]
	if !ok {
		return fmt.Errorf("provider %q: allowed values are \"anthropic\" and \"openai\"", provider)
	}
	srv := newProvider(script)
	defer srv.Close()

	out := &lockedWriter{w: w}
	a := &agent{out: out}
	switch provider {
	case "anthropic":
		a.call = anthropicCall(anthropic.NewClient(
			anthropicoption.WithBaseURL(srv.URL),
			anthropicoption.WithAPIKey("sk-ant-example"),
			anthropicoption.WithHTTPClient(srv.Client()),
			anthropicoption.WithMaxRetries(0), // the Controller retries
		))
	case "openai":
		a.call = openaiCall(openai.NewClient(
			openaioption.WithBaseURL(srv.URL),
			openaioption.WithAPIKey("sk-example"),
			openaioption.WithHTTPClient(srv.Client()),
			openaioption.WithMaxRetries(0), // the Controller retries
		))
	}

	settings := policy.DefaultSettings()
	settings.BaseDelay = baseDelay
	pol, err := policy.Compile(settings)
	if err != nil {
		return err
	}
	ctl, err := policy.NewController(policy.Config{
		Clock:         clk,
		Agent:         a,
		Settings:      policy.NewSettingsStore(pol),
		Provider:      provider,
		ContextWindow: contextWindow,
	})
	if err != nil {
		return err
	}
	a.ctl = ctl
	unsubscribe := ctl.Subscribe(func(e policy.Event) {
		b, _ := e.(json.Marshaler).MarshalJSON()
		out.printf("  event %s\n", b)
	})
	defer unsubscribe()

	for i, prompt := range []string{"hello", "summarize this long document", "again"} {
		out.printf("prompt %d: %s\n", i+1, prompt)
		err := a.Prompt(ctx, prompt)
		var gaveUp *policy.ExhaustedError
		switch {
		case err == nil:
			out.printf("prompt %d done\n", i+1)
		case errors.As(err, &gaveUp):
			out.printf("prompt %d gave up (%s) at attempt %d: %s\n", i+1, gaveUp.Reason, gaveUp.Attempt, gaveUp.FinalError)
		default:
			return err
		}
	}
	return nil
}

// agent is the canonical agent loop of package policy around one SDK call
// per run (the example has no tools).
type agent struct {
	ctl      *policy.Controller
	out      *lockedWriter
	call     func(ctx context.Context, prompt string) (policy.AssistantMessage, string)
	messages []string
}

// callModel makes the run's model call and prints its reply.
func (a *agent) callModel(ctx context.Context) policy.AssistantMessage {
	reply, text := a.call(ctx, a.messages[len(a.messages)-1])
	switch {
	case reply.IsSuccess():
		a.out.printf("  reply %s: %q\n", reply.StopReason, text)
	case reply.Status != 0:
		a.out.printf("  reply %s (status %d): %s\n", reply.StopReason, reply.Status, reply.ErrorMessage)
	default:
		a.out.printf("  reply %s: %s\n", reply.StopReason, reply.ErrorMessage)
	}
	return reply
}

// run is one run of the agent: its model call, the reply's message_end,
// then agent_end with it.
func (a *agent) run(ctx context.Context) {
	reply := a.callModel(ctx)
	a.ctl.OnMessageEnd(reply)
	if !a.ctl.OnAgentEnd(&reply) { // no retry scheduled
		a.compactIfOverflow(&reply)
	}
}

// compactIfOverflow is where a real agent hands a context overflow to
// compaction.
func (a *agent) compactIfOverflow(last *policy.AssistantMessage) {
	if classify.ClassifyReply(*last, contextWindow, time.Now()).Overflow {
		a.out.printf("  context overflow: compacting\n")
	}
}

// Continue implements policy.Agent: after a backoff the Controller calls it
// to run again.
func (a *agent) Continue(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.run(ctx)
	return nil
}

// Prompt runs a new prompt; it is done when its retry chain is.
func (a *agent) Prompt(ctx context.Context, text string) error {
	a.ctl.OnPrompt(ctx)
	a.messages = append(a.messages, text)
	a.run(ctx)
	return a.ctl.WaitForRetry(ctx)
}

// anthropicCall streams one message with the Anthropic SDK.
func anthropicCall(client anthropic.Client) func(context.Context, string) (policy.AssistantMessage, string) {
	return func(ctx context.Context, prompt string) (policy.AssistantMessage, string) {
		stream := client.Messages.NewStreaming(ctx, anthropic.MessageNewParams{
			Model:     "claude-sonnet-4-5",
			MaxTokens: 256,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
		})
		defer stream.Close()
		var acc anthropic.Message
		for stream.Next() {
			if err := acc.Accumulate(stream.Current()); err != nil {
				return anthropicreply.StreamMessage(acc, err), ""
			}
		}
		var text strings.Builder
		for _, block := range acc.Content {
			text.WriteString(block.Text)
		}
		return anthropicreply.StreamMessage(acc, stream.Err()), text.String()
	}
}

// openaiCall streams one chat completion with the OpenAI SDK.
func openaiCall(client openai.Client) func(context.Context, string) (policy.AssistantMessage, string) {
	return func(ctx context.Context, prompt string) (policy.AssistantMessage, string) {
		stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
			Model:    "gpt-4o",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		})
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		text := ""
		if len(acc.Choices) > 0 {
			text = acc.Choices[0].Message.Content
		}
		return openaireply.StreamMessage(acc.ChatCompletion, stream.Err()), text
	}
}

// lockedWriter serialises the lines of the agent (on the prompt's goroutine
// and the backoff timers') and of the subscriber.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// printf writes one formatted line.
func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// response is one scripted answer of the local provider.
type response func(w http.ResponseWriter, r *http.Request)

// newProvider starts the local provider: the i-th request gets script[i],
// and requests past the script a 500.
func newProvider(script []response) *httptest.Server {
	var mu sync.Mutex
	next := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		if i >= len(script) {
			http.Error(w, "the example's script is over", http.StatusInternalServerError)
			return
		}
		script[i](w, r)
	}))
}

// jsonError answers with an error response.
func jsonError(status int, headers map[string]string, body string) response {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// sse answers with a stream of server-sent events.
func sse(body string) response {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

// drop closes the connection without answering.
func drop(w http.ResponseWriter, _ *http.Request) {
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		_ = conn.Close()
	}
}

// scripts are the local provider's answers, in order, for each SDK.
var scripts = map[string][]response{
	"anthropic": {
		jsonError(529, map[string]string{"X-Should-Retry": "true"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`),
		drop,
		jsonError(429, map[string]string{"Retry-After": "1", "X-Should-Retry": "true", "Anthropic-Ratelimit-Requests-Remaining": "0"},
			`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}`),
		sse(anthropicStream),
		jsonError(400, map[string]string{"X-Should-Retry": "false"},
			`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}`),
		jsonError(529, map[string]string{"X-Should-Retry": "true"},
			`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
		jsonError(401, map[string]string{"X-Should-Retry": "false"},
			`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`),
	},
	"openai": {
		jsonError(503, nil,
			`{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`),
		drop,
		jsonError(429, map[string]string{"Retry-After": "1", "X-Ratelimit-Remaining-Requests": "0"},
			`{"error":{"message":"Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`),
		sse(openaiStream),
		jsonError(400, nil,
			`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
		jsonError(503, nil,
			`{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}`),
		jsonError(401, nil,
			`{"error":{"message":"Incorrect API key provided: sk-example.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
	},
}

// anthropicStream is a complete streamed reply of the Messages API.
const anthropicStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello! How can I help?"}}` + "\n\n" +
	"event: content_block_stop\n" +
	`data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":8}}` + "\n\n" +
	"event: message_stop\n" +
	`data: {"type":"message_stop"}` + "\n\n"

// openaiStream is a complete streamed chat completion.
const openaiStream = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello! How can I help?"},"finish_reason":null}]}` + "\n\n" +
	`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1740000000,"model":"gpt-4o","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
	"data: [DONE]\n\n"
