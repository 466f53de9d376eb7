package session_test

import (
	"fmt"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// A shell steps the pure core by hand: it feeds events (a prompt, the
// model's classified reply, a timer firing) and performs the effects the
// core returns, here by printing them. The core holds no clock: the
// virtual time travels in each event.
func Example() {
	core := &session.Core{Variant: session.Sound, Config: session.Config{Model: "m1"}}
	set := policy.DefaultPolicy()
	s := session.Initial()
	kinds := map[session.EffectKind]string{
		session.Emit: "emit", session.Answer: "answer", session.Resolve: "resolve",
		session.Call: "call", session.Arm: "arm", session.Cancel: "cancel",
		session.SetEnabled: "set-enabled", session.SetSettings: "set-settings",
		session.SetCompaction: "set-compaction",
	}

	var fx []session.Effect
	var call uint64         // the model call in flight
	var timer session.Timer // the timer armed last
	step := func(ev session.Event) {
		s, fx = core.Step(s, set, &ev, fx[:0])
		for _, e := range fx {
			switch e.Kind {
			case session.Emit, session.Answer, session.Resolve:
				fmt.Printf("%-7s %s\n", kinds[e.Kind], trace.AppendJSON(nil, &e.Record))
			case session.Call:
				call = e.Call
				fmt.Printf("%-7s call %d\n", kinds[e.Kind], e.Call)
			case session.Arm:
				timer = e.Timer
				fmt.Printf("%-7s %v timer %d, %v\n", kinds[e.Kind], e.Timer.Kind, e.Timer.ID, e.Timer.Delay)
			default:
				fmt.Println(kinds[e.Kind])
			}
		}
	}
	reply := func(stop policy.StopReason, msg string) classify.Outcome {
		m := policy.AssistantMessage{StopReason: stop, ErrorMessage: msg}
		return classify.ClassifyReply(m, 200000, time.Unix(0, 0))
	}

	step(session.Event{Kind: session.Prompt, Respond: true, ID: "p1"})
	step(session.Event{Kind: session.Reply, Call: call, At: time.Second,
		Reply: reply(policy.StopReasonError, "503 service unavailable")})
	step(session.Event{Kind: session.TimerFired, Timer: timer, At: time.Second + timer.Delay})
	step(session.Event{Kind: session.Reply, Call: call, At: 4 * time.Second,
		Reply: reply(policy.StopReasonStop, "")})
	step(session.Event{Kind: session.Settle, At: 4 * time.Second})
	fmt.Println("pending prompt:", s.Pending, "streaming:", s.IsStreaming())
	// Output:
	// answer  {"t":0,"type":"response","id":"p1","command":"prompt","success":true}
	// emit    {"t":0,"type":"agent_run","kind":"prompt","model":"m1"}
	// call    call 1
	// emit    {"t":1000,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"503 service unavailable"},"model":"m1"}
	// emit    {"t":1000,"type":"agent_run_end"}
	// emit    {"t":1000,"type":"transition","from":"idle","event":"retry","to":"backoff","input":"agent_end:retryable","rule":2}
	// emit    {"t":1000,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 service unavailable"}
	// arm     backoff timer 2, 2s
	// emit    {"t":3000,"type":"transition","from":"backoff","event":"elapse","to":"continuing","input":"backoff_elapsed","rule":14}
	// emit    {"t":3000,"type":"agent_run","kind":"continue","model":"m1"}
	// call    call 3
	// emit    {"t":4000,"type":"message_end","message":{"role":"assistant","stopReason":"stop"},"model":"m1"}
	// emit    {"t":4000,"type":"transition","from":"continuing","event":"succeed","to":"idle","input":"message_end:success","rule":25}
	// emit    {"t":4000,"type":"auto_retry_end","success":true,"attempt":1}
	// emit    {"t":4000,"type":"agent_run_end"}
	// resolve {"t":4000,"type":"prompt_resolved","prompt":1}
	// pending prompt: 0 streaming: false
}
