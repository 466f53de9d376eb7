package policy_test

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/ohmypi/retryfsm/policy"
)

// scriptedAgent is a toy agent: each Continue starts the next scripted run,
// whose reply it hands to the agent loop through runs. (Continue is called
// on the backoff timer's goroutine; the loop does the rest.)
type scriptedAgent struct {
	replies []policy.AssistantMessage
	runs    chan policy.AssistantMessage
}

func (a *scriptedAgent) Continue() error {
	reply := a.replies[0]
	a.replies = a.replies[1:]
	a.runs <- reply
	return nil
}

func (a *scriptedAgent) DropLastAssistant() {}

// ExampleController embeds a Controller in a tiny agent loop: the first
// run fails with an overloaded error, the first retry with a 503, the
// second retry succeeds. A mock clock stands in for the 2 s and 4 s waits.
func ExampleController() {
	mock := clock.NewMock()
	agent := &scriptedAgent{
		replies: []policy.AssistantMessage{
			{StopReason: policy.StopReasonError, ErrorMessage: "503 service unavailable"},
			{StopReason: policy.StopReasonStop},
		},
		runs: make(chan policy.AssistantMessage, 1),
	}
	ctl, err := policy.NewController(policy.Config{Clock: mock, Agent: agent})
	if err != nil {
		panic(err)
	}
	unsubscribe := ctl.Subscribe(func(e policy.Event) {
		// The events' MarshalJSON writes JSON.stringify's bytes; json.Marshal
		// would also escape any <, > and & in an error message.
		b, _ := e.(json.Marshaler).MarshalJSON()
		fmt.Println(string(b))
	})
	defer unsubscribe()

	// The agent loop: report each run's reply, and while a retry is
	// scheduled, let the backoff pass and take the retried run's reply.
	reply := policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error"}
	for {
		ctl.OnMessageEnd(reply)
		if !ctl.OnAgentEnd(&reply) {
			break // no retry: the loop would go on to its compaction check
		}
		mock.Add(ctl.Settings().Delay(ctl.Attempt()))
		reply = <-agent.runs
	}
	fmt.Println("retrying:", ctl.IsRetrying(), "attempt:", ctl.Attempt(), "state:", ctl.State())
	// Output:
	// {"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
	// {"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":4000,"errorMessage":"503 service unavailable"}
	// {"type":"auto_retry_end","success":true,"attempt":2}
	// retrying: false attempt: 0 state: idle
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
