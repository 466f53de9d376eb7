package audit_test

import (
	"fmt"
	"strings"

	"github.com/ohmypi/retryfsm/audit"
)

// An Auditor reads an RPC log line by line and reports what the profile's
// policy could not have done: here the second retry waited 3 s where the
// default profile waits 4 s, and the second prompt's chain never ended.
func Example() {
	log := `{"id":"p1","type":"response","command":"prompt","success":true}
{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"}}
{"type":"agent_end"}
{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}
{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"}}
{"type":"agent_end"}
{"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":3000,"errorMessage":"529 overloaded_error"}
{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"stop"}}
{"type":"agent_end"}
{"type":"auto_retry_end","success":true,"attempt":2}
{"id":"p2","type":"response","command":"prompt","success":true}
{"type":"agent_start"}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"503 service unavailable"}}
{"type":"agent_end"}
{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 service unavailable"}
`
	a, err := audit.New(audit.Options{Profile: "omp-2026-02"})
	if err != nil {
		panic(err)
	}
	sum, err := a.Audit(strings.NewReader(log), func(f audit.Finding) {
		fmt.Println(f)
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("lines=%d chains=%d retries=%d findings=%d\n", sum.Lines, sum.Chains, sum.Retries, sum.Findings)
	// Output:
	// 9: delay: delayMs 3000 for attempt 2: profile omp-2026-02 waits 4000, or 0 (a credential switch, a fallback)
	// 18: chain-not-ended: the chain that started here has no auto_retry_end by the end of the log (line 18); its last attempt was 1 (line 18)
	// lines=18 chains=2 retries=3 findings=2
}
