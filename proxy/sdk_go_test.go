package proxy_test

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

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/scenario"
)

// The real Go SDKs, with their own retries on (their defaults: 2), talk to
// the proxy over an in-memory connection inside a synctest bubble: their
// waits (time.After on the real clock API) run on the bubble's clock, so
// the wire log's gaps are exactly the SDKs' waits and the tests take no
// real time.

func anthropicClient(s *served) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(s.URL), aoption.WithHTTPClient(s.Client), aoption.WithAPIKey("sk-test"))
}

func openaiClient(s *served) openai.Client {
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
	call func(ctx context.Context, s *served) (string, error)
}

var goSDKs = []struct {
	name    string
	profile string
	calls   []sdkCall
}{
	{"anthropic-sdk-go", "anthropic-sdk-go", []sdkCall{
		{"messages", func(ctx context.Context, s *served) (string, error) {
			c := anthropicClient(s)
			m, err := c.Messages.New(ctx, anthropicParams)
			if err != nil {
				return "", err
			}
			return m.Content[0].Text, nil
		}},
		{"messages-stream", func(ctx context.Context, s *served) (string, error) {
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
		{"chat", func(ctx context.Context, s *served) (string, error) {
			c := openaiClient(s)
			r, err := c.Chat.Completions.New(ctx, chatParams)
			if err != nil {
				return "", err
			}
			return r.Choices[0].Message.Content, nil
		}},
		{"chat-stream", func(ctx context.Context, s *served) (string, error) {
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
		{"responses", func(ctx context.Context, s *served) (string, error) {
			c := openaiClient(s)
			r, err := c.Responses.New(ctx, responsesParams)
			if err != nil {
				return "", err
			}
			return r.OutputText(), nil
		}},
		{"responses-stream", func(ctx context.Context, s *served) (string, error) {
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
		s := serve(t, sc)
		text, err = call.call(t.Context(), s)
		synctest.Wait() // the handler has logged the request
		recs, log = s.close(t)
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
				sc := proxy.Script{Turns: []scenario.Turn{errTurn(529, "Overloaded", nil), errTurn(500, "boom", nil), okTurn()}}
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
				g := gaps(recs)
				if g[0] < 375 || g[0] > 500 || g[1] < 750 || g[1] > 1000 {
					t.Errorf("waits %v ms, want 375..500 then 750..1000", g)
				}
				if fs, sum := auditWire(t, sdk.profile, log); len(fs) != 0 || sum.Retries != 2 || sum.Chains != 1 {
					t.Errorf("audit under %s: %v, %+v; want clean, 1 call, 2 retries", sdk.profile, fs, sum.Summary)
				}
				if fs, _ := auditWire(t, "pi", log); len(fs) == 0 {
					t.Errorf("audit under pi (3 retries from 2 s): no finding, want the waits reported")
				}
			})
		}
	}
}
