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
