package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// agent is a toy agent: each model call takes the next scripted reply.
type agent struct {
	ctl      *policy.Controller
	messages []string
	script   []policy.AssistantMessage
}

// callModel is the run's model calls; the toy makes one per run.
func (a *agent) callModel(context.Context) iter.Seq[policy.AssistantMessage] {
	return func(yield func(policy.AssistantMessage) bool) {
		reply := a.script[0]
		a.script = a.script[1:]
		yield(reply)
	}
}

// compactIfOverflow is where a real agent hands a context overflow to
// compaction (when no retry was scheduled).
func (a *agent) compactIfOverflow(last *policy.AssistantMessage) {
	if last != nil && classify.ClassifyReply(*last, 200000, time.Now()).Overflow {
		fmt.Println("compacting")
	}
}

// run is one run of the agent: its model calls (a tool use calls again),
// each reply's message_end, then agent_end with the last reply.
func (a *agent) run(ctx context.Context) {
	var last *policy.AssistantMessage
	for reply := range a.callModel(ctx) {
		a.ctl.OnMessageEnd(reply)
		last = &reply
	}
	if !a.ctl.OnAgentEnd(last) { // no retry scheduled
		a.compactIfOverflow(last)
	}
}

// Continue implements policy.Agent: after a backoff the Controller calls it,
// on the timer's goroutine, to run again.
func (a *agent) Continue(ctx context.Context) error {
	if err := ctx.Err(); err != nil { // aborted before the retry started
		return err
	}
	a.run(ctx)
	return nil
}

// Prompt runs a new prompt. It is done when its run and its retry chain are:
// nil, an error matching ErrRetryCancelled, an *ExhaustedError or ctx.Err().
func (a *agent) Prompt(ctx context.Context, text string) error {
	a.ctl.OnPrompt(ctx)
	a.messages = append(a.messages, text)
	a.run(ctx)
	return a.ctl.WaitForRetry(ctx)
}

// ExampleController runs the agent loop of the package documentation on a
// toy agent. The first prompt's run fails with an overloaded error, its
// first retry with a 503, and its second retry succeeds; the second
// prompt's retry fails with an error that is not retried. A mock clock
// stands in for the 2 s and 4 s waits.
func ExampleController() {
	mock := clock.NewMock()
	a := &agent{script: []policy.AssistantMessage{
		{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error"},
		{StopReason: policy.StopReasonError, ErrorMessage: "503 service unavailable"},
		{StopReason: policy.StopReasonStop},
		{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error"},
		{StopReason: policy.StopReasonError, ErrorMessage: "401 invalid x-api-key"},
	}}
	ctl, err := policy.NewController(policy.Config{Clock: mock, Agent: a})
	if err != nil {
		panic(err)
	}
	a.ctl = ctl
	unsubscribe := ctl.Subscribe(func(e policy.Event) {
		// The events' MarshalJSON writes JSON.stringify's bytes; json.Marshal
		// would also escape any <, > and & in an error message.
		b, _ := e.(json.Marshaler).MarshalJSON()
		fmt.Println(string(b))
	})
	defer unsubscribe()

	// Time passes: the mock clock moves on until both prompts are done.
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-done:
				return
			default:
				mock.Add(time.Second)
			}
		}
	}()
	defer func() { close(done); <-stopped }()

	fmt.Println("prompt 1:", a.Prompt(context.Background(), "hello"))
	err = a.Prompt(context.Background(), "again")
	var gaveUp *policy.ExhaustedError
	if errors.As(err, &gaveUp) {
		fmt.Printf("prompt 2 gave up (%s) at attempt %d: %s\n", gaveUp.Reason, gaveUp.Attempt, gaveUp.FinalError)
	}
	// Output:
	// {"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
	// {"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"503 service unavailable"}
	// {"type":"auto_retry_end","success":true,"attempt":2}
	// prompt 1: <nil>
	// {"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
	// {"type":"auto_retry_end","success":false,"attempt":1,"finalError":"401 invalid x-api-key"}
	// prompt 2 gave up (non_retryable) at attempt 1: 401 invalid x-api-key
}

func ExampleSettings_Delay() {
	s := policy.DefaultSettings()
	for attempt := 1; attempt <= 3; attempt++ {
		fmt.Printf("retry %d waits %v\n", attempt, s.Delay(attempt))
	}
	fmt.Println("before the first retry:", s.Delay(0))
	fmt.Println("saturates:", s.Delay(1000) == time.Duration(math.MaxInt64))
	// Output:
	// retry 1 waits 2s
	// retry 2 waits 4s
	// retry 3 waits 8s
	// before the first retry: 0s
	// saturates: true
}
