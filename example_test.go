package retryfsm_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ohmypi/retryfsm"
	"github.com/ohmypi/retryfsm/policy"
)

// ExampleDo retries one call with the default policy (3 retries, the
// original's classification of overloaded, rate limit, 5xx and connection
// errors), its waits shortened to 1, 2, 4 ms for the example (2, 4, 8 s by
// default). Without WithReply, an error's text is the reply's message; with
// a provider's SDK, adapters/anthropic's or adapters/openai's Message reads
// its errors (status, headers, error type): see their Example_do.
func ExampleDo() {
	settings := policy.DefaultSettings()
	settings.BaseDelay = time.Millisecond
	p, err := policy.Compile(settings) // checked once, reused by every Do
	if err != nil {
		panic(err)
	}
	calls := 0
	text, err := retryfsm.Do(context.Background(), p, func(ctx context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", errors.New(`529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		}
		return "hello", nil
	})
	fmt.Println(text, err, calls)
	// Output: hello <nil> 3
}

// ExampleWithProfile: a named profile instead of a compiled policy (nil):
// here anthropic-sdk, the Anthropic SDKs' own policy, which honours the
// provider's retry-after; a 400 is not retried.
func ExampleWithProfile() {
	calls := 0
	_, err := retryfsm.Do(context.Background(), nil, func(ctx context.Context) (string, error) {
		calls++
		return "", errors.New(`400 {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)
	}, retryfsm.WithProfile("anthropic-sdk"))
	fmt.Println(calls, err != nil)
	// Output: 1 true
}
