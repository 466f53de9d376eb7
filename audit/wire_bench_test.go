package audit_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
)

// BenchmarkAuditWire measures the audit of a wire log of calls of two
// 529s and a success, the waits the profile's (bytes/s, and lines/s), as
// BenchmarkAudit does for an RPC log: every profile of the fits follows
// it too.
func BenchmarkAuditWire(b *testing.B) {
	var log bytes.Buffer
	const calls = 1000
	for i := range calls {
		t0 := float64(i) * 10000
		for k, at := range []float64{0, 451, 1452} {
			status, body := 529, `,"errorType":"overloaded_error","errorMessage":"Overloaded"`
			if k == 2 {
				status, body = 200, ""
			}
			fmt.Fprintf(&log, `{"type":"request","seq":%d,"timestamp":%.3f,"method":"POST","path":"/v1/messages","api":"anthropic-messages","model":"claude-sonnet-4-5","stream":true,"client":{"x-stainless-retry-count":"%d","user-agent":"Anthropic/Go 2.15.0"},"turn":%d,"status":%d%s,"headersMs":0.5,"answerMs":1,"bytesIn":8161}`+"\n",
				3*i+k+1, 1_800_000_000_000+t0+at, k, 3*i+k+1, status, body)
		}
	}
	a, err := audit.New(audit.Options{Profile: "anthropic-sdk-go"})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(log.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sum, err := a.AuditWire(bytes.NewReader(log.Bytes()), audit.WireOptions{}, nil)
		if err != nil || sum.Findings != 0 || sum.Events != 3*calls {
			b.Fatalf("%+v, %v", sum, err)
		}
	}
	b.ReportMetric(float64(3*calls)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
