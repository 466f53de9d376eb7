package trace_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/trace"
)

// A Writer accumulates trace lines; Parse reads a whole trace back into
// typed records, and FormatText renders it for people.
func ExampleWriter() {
	var w trace.Writer
	w.Record(&trace.Record{Type: trace.AgentRun, Model: "m1"})
	w.Record(&trace.Record{T: time.Second, Type: trace.AutoRetryStart,
		Start: policy.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded"}})
	w.Record(&trace.Record{T: 3500 * time.Millisecond, Type: trace.AutoRetryEnd,
		End: policy.AutoRetryEnd{Success: true, Attempt: 1}})
	fmt.Printf("%d lines:\n%s", w.Lines(), w.Bytes())

	recs, err := trace.Parse(w.Bytes())
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Println(r.T, r.Type)
	}
	fmt.Println("delay of the retry:", recs[1].Start.DelayMs, "ms")

	text, err := trace.FormatText(w.Bytes())
	if err != nil {
		panic(err)
	}
	fmt.Print(string(text))
	// Output:
	// 3 lines:
	// {"t":0,"type":"agent_run","kind":"prompt","model":"m1"}
	// {"t":1000,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded"}
	// {"t":3500,"type":"auto_retry_end","success":true,"attempt":1}
	// 0s agent_run
	// 1s auto_retry_start
	// 3.5s auto_retry_end
	// delay of the retry: 2000 ms
	//      0  0.000s  agent_run         kind=prompt model=m1
	//   1000  1.000s  auto_retry_start  attempt=1 maxAttempts=3 delayMs=2000 errorMessage="529 overloaded"
	//   3500  3.500s  auto_retry_end    success=true attempt=1
}

// A Scanner reads a trace line by line with a bounded line length, and
// Decode turns each line into a Record; N numbers the lines (blank ones
// counted) for error messages.
func ExampleScanner() {
	in := `{"t":0,"type":"agent_run","kind":"prompt"}

{"t":250,"type":"prompt_resolved","prompt":1}
{"t":300,"type":"no_such_line"}
`
	sc := trace.NewScanner(strings.NewReader(in))
	for sc.Scan() {
		r, err := trace.Decode(sc.Line())
		if err != nil {
			fmt.Printf("line %d: %v\n", sc.N(), err)
			continue
		}
		fmt.Printf("line %d: %v at %v\n", sc.N(), r.Type, r.T)
	}
	if err := sc.Err(); err != nil {
		panic(err)
	}
	// Output:
	// line 1: agent_run at 0s
	// line 3: prompt_resolved at 250ms
	// line 4: unknown type "no_such_line" (allowed: agent_run, message_end, agent_run_end, transition, auto_retry_start, auto_retry_end, auto_compaction_start, auto_compaction_end, mark_usage_limit_reached, prompt_resolved, prompt_rejected, continue_rejected, response, final, retry_fallback)
}
