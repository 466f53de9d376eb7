package retryfsm_test

import (
	"context"
	"fmt"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ohmypi/retryfsm"
	anthropicreply "github.com/ohmypi/retryfsm/adapters/anthropic"
	"github.com/ohmypi/retryfsm/policy"
)

// ExampleDo retries one Anthropic call with the default policy (3
// retries, 2/4/8 s, the original's classification of overloaded, rate
// limit, 5xx and connection errors), its errors read by
// adapters/anthropic. The SDK's own retries are off: Do retries.
func ExampleDo() {
	client := anthropic.NewClient(option.WithMaxRetries(0))
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
	}
	ctx := context.Background()

	msg, err := retryfsm.Do(ctx, policy.DefaultSettings(), func(ctx context.Context) (*anthropic.Message, error) {
		return client.Messages.New(ctx, params)
	}, retryfsm.WithReply(anthropicreply.Message))

	if err != nil {
		fmt.Println(err) // errors.As(err, &apiErr) reaches the SDK's *anthropic.Error
		return
	}
	fmt.Println(msg.Content[0].Text)
}
