package rpc_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/scenario"
)

// A client talking to a server in the same process, on virtual time: the
// first model call fails, and the retry is cancelled during its backoff.
func Example() {
	sc, err := scenario.Parse("example.yaml", []byte(`
turns:
  - {stopReason: error, errorMessage: "529 overloaded_error"}
  - {stopReason: stop}
`))
	if err != nil {
		panic(err)
	}
	cmdR, cmdW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = rpc.Serve(context.Background(), cmdR, outW, rpc.Options{Scenario: sc, Virtual: true})
		outW.Close()
	}()
	c := rpc.NewClient(outR, cmdW)
	defer c.Close()
	ctx := context.Background()

	n, _ := c.Prompt(ctx, "hello")
	fmt.Println("prompt", n)
	for ev := range c.Events() {
		switch ev.Type {
		case "message_end": // the original's full assistant message
			var e struct{ Message rpc.Message }
			_ = ev.Decode(&e)
			m := e.Message
			fmt.Printf("message_end: %s %q from %s/%s (%s), %d content blocks, at %d\n",
				m.StopReason, m.ErrorMessage, m.Provider, m.Model, m.API, len(m.Content), m.Timestamp)
		case "agent_end": // the run's messages
			var e struct{ Messages []rpc.Message }
			_ = ev.Decode(&e)
			for _, m := range e.Messages {
				fmt.Println(strings.TrimSpace("agent_end: " + m.Role + " " + m.StopReason))
			}
		default:
			fmt.Println(string(ev.Raw))
		}
		if ev.Type == "auto_retry_start" {
			break
		}
	}
	now, _ := c.Advance(ctx, 500*time.Millisecond)
	fmt.Println("advanced to", now)
	_ = c.AbortRetry(ctx)
	for ev := range c.Events() {
		fmt.Println(string(ev.Raw))
		if ev.Type == "prompt_resolved" {
			break
		}
	}
	// Output:
	// prompt 1
	// {"t":0,"type":"agent_start"}
	// message_end: error "529 overloaded_error" from anthropic/claude-sonnet-4-5 (anthropic-messages), 0 content blocks, at 1771200000000
	// agent_end: user
	// agent_end: assistant error
	// {"t":0,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
	// advanced to 500ms
	// {"t":500,"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Retry cancelled"}
	// {"t":500,"type":"prompt_resolved","prompt":1}
}

// Start runs a retrysim binary as the server.
func ExampleStart() {
	ctx := context.Background()
	c, err := rpc.Start(ctx, "retrysim", "--scenario", "scenarios/02-one-error-then-success.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.SetAutoRetry(ctx, false); err != nil {
		fmt.Println(err)
	}
	st, err := c.GetState(ctx)
	fmt.Println(st.AutoRetryEnabled, err)
}
