package sdktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// The real Go SDKs, with their own retries on (their defaults: 2), talk to
// the proxy over an in-memory connection inside a synctest bubble: their
// waits (time.After on the real clock API) run on the bubble's clock, so
// the wire log's gaps are exactly the SDKs' waits and the tests take no
// real time.

func anthropicClient(s *proxytest.Served) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(s.URL), aoption.WithHTTPClient(s.Client), aoption.WithAPIKey("sk-test"))
}

func openaiClient(s *proxytest.Served) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(s.URL+"/v1"), ooption.WithHTTPClient(s.Client), ooption.WithAPIKey("sk-test"))
}

var anthropicParams = anthropic.MessageNewParams{
	Model: "claude-sonnet-4-5", MaxTokens: 64,
	Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
}

var chatParams = openai.ChatCompletionNewParams{
	Model: "gpt-5", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")},
}

var responsesParams = responses.ResponseNewParams{
	Model: "gpt-5", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")},
}

// sdkCall is one SDK call through the proxy: non-streaming or streaming,
// returning the text it read.
type sdkCall struct {
	name string
	call func(ctx context.Context, s *proxytest.Served) (string, error)
}

var goSDKs = []struct {
	name    string
	profile string
	calls   []sdkCall
}{
	{"anthropic-sdk-go", "anthropic-sdk-go", []sdkCall{
		{"messages", func(ctx context.Context, s *proxytest.Served) (string, error) {
			c := anthropicClient(s)
			m, err := c.Messages.New(ctx, anthropicParams)
			if err != nil {
				return "", err
			}
			return m.Content[0].Text, nil
		}},
		{"messages-stream", func(ctx context.Context, s *proxytest.Served) (string, error) {
			c := anthropicClient(s)
			st := c.Messages.NewStreaming(ctx, anthropicParams)
			var b strings.Builder
			for st.Next() {
				if ev := st.Current(); ev.Type == "content_block_delta" {
					b.WriteString(ev.Delta.Text)
				}
			}
			return b.String(), st.Err()
		}},
	}},
	{"openai-go", "openai-sdk-go", []sdkCall{
		{"chat", func(ctx context.Context, s *proxytest.Served) (string, error) {
			c := openaiClient(s)
			r, err := c.Chat.Completions.New(ctx, chatParams)
			if err != nil {
				return "", err
			}
			return r.Choices[0].Message.Content, nil
		}},
		{"chat-stream", func(ctx context.Context, s *proxytest.Served) (string, error) {
			c := openaiClient(s)
			st := c.Chat.Completions.NewStreaming(ctx, chatParams)
			var b strings.Builder
			for st.Next() {
				if ch := st.Current(); len(ch.Choices) > 0 {
					b.WriteString(ch.Choices[0].Delta.Content)
				}
			}
			return b.String(), st.Err()
		}},
		{"responses", func(ctx context.Context, s *proxytest.Served) (string, error) {
			c := openaiClient(s)
			r, err := c.Responses.New(ctx, responsesParams)
			if err != nil {
				return "", err
			}
			return r.OutputText(), nil
		}},
		{"responses-stream", func(ctx context.Context, s *proxytest.Served) (string, error) {
			c := openaiClient(s)
			st := c.Responses.NewStreaming(ctx, responsesParams)
			var b strings.Builder
			for st.Next() {
				switch ev := st.Current(); ev.Type {
				case "response.output_text.delta":
					b.WriteString(ev.Delta)
				case "error": // the Responses API's error event is an event, not a stream error
					return b.String(), fmt.Errorf("error event: %s: %s", ev.Code, ev.Message)
				}
			}
			return b.String(), st.Err()
		}},
	}},
}

// runSDK runs call against a proxy serving sc, in a synctest bubble, and
// returns the call's text and error and the wire log.
func runSDK(t *testing.T, sc proxy.Script, call sdkCall) (text string, err error, recs []proxy.Record, log []byte) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		s := proxytest.Serve(t, sc)
		text, err = call.call(t.Context(), s)
		synctest.Wait() // the handler has logged the request
		recs, log = s.Close(t)
	})
	return text, err, recs, log
}

func isStream(c sdkCall) bool { return strings.HasSuffix(c.name, "-stream") }

// TestGoSDKsRetryErrors: both Go SDKs, every endpoint, JSON and SSE:
// two retryable errors then a success are three requests with retry
// counts 0, 1, 2, the provider's error shapes parsed, the waits fitting
// the SDK's profile; the same log does not fit pi's profile.
func TestGoSDKsRetryErrors(t *testing.T) {
	for _, sdk := range goSDKs {
		for _, call := range sdk.calls {
			t.Run(sdk.name+"/"+call.name, func(t *testing.T) {
				sc := proxy.Script{Turns: []scenario.Turn{proxytest.ErrTurn(529, "Overloaded", nil), proxytest.ErrTurn(500, "boom", nil), proxytest.OkTurn()}}
				text, err, recs, log := runSDK(t, sc, call)
				if err != nil {
					t.Fatalf("call failed: %v", err)
				}
				if text != proxy.DefaultText {
					t.Errorf("text %q, want %q", text, proxy.DefaultText)
				}
				if len(recs) != 3 {
					t.Fatalf("%d requests, want 3", len(recs))
				}
				for i, r := range recs {
					if got := r.Client["x-stainless-retry-count"]; got != fmt.Sprint(i) {
						t.Errorf("request %d: x-stainless-retry-count %q, want %d", i+1, got, i)
					}
					if r.Stream != isStream(call) {
						t.Errorf("request %d: stream %v", i+1, r.Stream)
					}
				}
				g := proxytest.Gaps(recs)
				if g[0] < 375 || g[0] > 500 || g[1] < 750 || g[1] > 1000 {
					t.Errorf("waits %v ms, want 375..500 then 750..1000", g)
				}
				if fs, sum := proxytest.AuditWire(t, sdk.profile, log); len(fs) != 0 || sum.Retries != 2 || sum.Chains != 1 {
					t.Errorf("audit under %s: %v, %+v; want clean, 1 call, 2 retries", sdk.profile, fs, sum.Summary)
				}
				if fs, _ := proxytest.AuditWire(t, "pi", log); len(fs) == 0 {
					t.Errorf("audit under pi (3 retries from 2 s): no finding, want the waits reported")
				}
			})
		}
	}
}

// TestAnswerShapes: toolUse and length turns are answers the SDKs parse:
// a tool call named after the request's first tool, a reply cut by the
// token limit, on each endpoint.
func TestAnswerShapes(t *testing.T) {
	turns := []scenario.Turn{{StopReason: policy.StopReasonToolUse}, {StopReason: policy.StopReasonLength}}
	synctest.Test(t, func(t *testing.T) {
		s := proxytest.Serve(t, proxy.Script{Turns: turns, Repeat: true})
		ctx := t.Context()
		ac := anthropicClient(s)
		params := anthropicParams
		params.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather", InputSchema: anthropic.ToolInputSchemaParam{}}}}
		m, err := ac.Messages.New(ctx, params)
		if err != nil || m.StopReason != "tool_use" || m.Content[0].Type != "tool_use" || m.Content[0].Name != "get_weather" {
			t.Errorf("anthropic tool use: %v %+v", err, m)
		}
		m, err = ac.Messages.New(ctx, anthropicParams)
		if err != nil || m.StopReason != "max_tokens" {
			t.Errorf("anthropic length: %v %+v", err, m)
		}
		oc := openaiClient(s)
		cp := chatParams
		cp.Tools = []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather"})}
		c, err := oc.Chat.Completions.New(ctx, cp)
		if err != nil || c.Choices[0].FinishReason != "tool_calls" || c.Choices[0].Message.ToolCalls[0].Function.Name != "get_weather" {
			t.Errorf("chat tool use: %v %+v", err, c)
		}
		c, err = oc.Chat.Completions.New(ctx, chatParams)
		if err != nil || c.Choices[0].FinishReason != "length" {
			t.Errorf("chat length: %v %+v", err, c)
		}
		r, err := oc.Responses.New(ctx, responsesParams)
		if err != nil || r.Output[0].Type != "function_call" || r.Output[0].Name != "retrysim_tool" {
			t.Errorf("responses tool use: %v %+v", err, r)
		}
		r, err = oc.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-5"})
		if err != nil || r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" {
			t.Errorf("responses length: %v %+v", err, r)
		}
		synctest.Wait()
		if recs, _ := s.Close(t); len(recs) != 6 || recs[4].Turn != 1 || recs[5].Turn != 2 {
			t.Errorf("wire log %+v (repeat: turns 1, 2, 1, 2, 1, 2)", recs)
		}
	})
}
