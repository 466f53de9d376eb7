package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ohmypi/retryfsm"
	anthropicreply "github.com/ohmypi/retryfsm/adapters/anthropic"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// ExampleStreamMessage streams a message through the real SDK from a local
// server that answers as the API does when it is overloaded, and classifies
// the reply as a policy.Controller does (OnMessageEnd takes the reply).
func ExampleStreamMessage() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Should-Retry", "true")
		w.WriteHeader(529)
		_, _ = io.WriteString(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 256,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
	}

	// SDK-SNIPPET-BEGIN
	client := anthropic.NewClient(option.WithMaxRetries(0), // the Controller retries
		option.WithBaseURL(srv.URL), option.WithAPIKey("sk-ant-example"), option.WithHTTPClient(srv.Client()))
	stream := client.Messages.NewStreaming(ctx, params)
	var acc anthropic.Message
	for stream.Next() {
		_ = acc.Accumulate(stream.Current())
	}
	reply := anthropicreply.StreamMessage(acc, stream.Err())
	// SDK-SNIPPET-END
	_ = stream.Close()

	fmt.Printf("%s %d %q %v\n", reply.StopReason, reply.Status, reply.ErrorMessage, reply.Headers)
	fmt.Println(classify.ClassifyReply(reply, 200000, time.Now()).Class)
	// Output:
	// error 529 "529 overloaded_error: Overloaded" map[x-should-retry:true]
	// retryable
}

// TestReadmeSnippet: docs/embedding.md's "Provider SDKs" block is ExampleStreamMessage's
// code, line for line, but for the client's test-only options.
func TestReadmeSnippet(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(src), "// SDK-SNIPPET-BEGIN\n")
	snippet, _, found := strings.Cut(after, "\t// SDK-SNIPPET-END")
	if !found {
		t.Fatal("example_test.go has no SDK-SNIPPET markers")
	}
	readme, err := os.ReadFile("../../docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "## Provider SDKs\n")
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, _ := strings.Cut(section, "```go\n")
	block, _, found = strings.Cut(block, "```\n")
	if !found {
		t.Fatal(`docs/embedding.md's "Provider SDKs" section has no Go block`)
	}
	var want []string
	for _, line := range strings.Split(snippet, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "option.WithBaseURL("): // the local server's options
		case strings.HasSuffix(line, "// the Controller retries"):
			want = append(want, "client := anthropic.NewClient(option.WithMaxRetries(0)) // the Controller retries")
		default:
			want = append(want, line)
		}
	}
	var got []string
	for _, line := range strings.Split(block, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			got = append(got, line)
		}
	}
	// The page's block may go on (feeding the Controller).
	if len(got) < len(want) || strings.Join(got[:len(want)], "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/embedding.md's Provider SDKs block starts\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Example_do retries one Anthropic call with retryfsm.Do with the default policy (3
// retries, 2/4/8 s, the original's classification of overloaded, rate
// limit, 5xx and connection errors), its errors read by
// adapters/anthropic. The SDK's own retries are off: Do retries.
func Example_do() {
	client := anthropic.NewClient(option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
	}
	ctx := context.Background()

	msg, err := retryfsm.Do(ctx, policy.DefaultPolicy(), func(ctx context.Context) (*anthropic.Message, error) {
		return client.Messages.New(ctx, params)
	}, retryfsm.WithReply(anthropicreply.Message))

	if err != nil {
		fmt.Println(err) // errors.As(err, &apiErr) reaches the SDK's *anthropic.Error
		return
	}
	fmt.Println(msg.Content[0].Text)
}
