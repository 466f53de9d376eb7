package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	openaireply "github.com/ohmypi/retryfsm/adapters/openai"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// ExampleStreamMessage streams a chat completion through the real SDK from a
// local server that answers as the API does when a prompt exceeds the
// model's context, and classifies the reply as a policy.Controller does: a
// context overflow, for compaction rather than retry.
func ExampleStreamMessage() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(400)
		_, _ = io.WriteString(w, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
	}))
	defer srv.Close()

	client := openai.NewClient(option.WithMaxRetries(0), // the Controller retries
		option.WithBaseURL(srv.URL), option.WithAPIKey("sk-example"), option.WithHTTPClient(srv.Client()))
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("a very long prompt")},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	reply := openaireply.StreamMessage(acc.ChatCompletion, stream.Err())
	_ = stream.Close()

	fmt.Println(reply.StopReason, reply.Status)
	fmt.Println(reply.ErrorMessage)
	o := classify.ClassifyReply(reply, 128000, time.Now())
	fmt.Println(o.Class, o.Overflow)
	// Output:
	// error 400
	// 400 invalid_request_error (context_length_exceeded): This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. Please reduce the length of the messages.
	// overflow true
}
