package rpc_test

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/rpc"
)

// BenchmarkServeGetState: raw get_state throughput of a --virtual server,
// 100,000 command lines through an OS pipe, the output discarded. One op
// is the 100,000 lines; lines/s is reported.
func BenchmarkServeGetState(b *testing.B) {
	const n = 100_000
	input := strings.Repeat(`{"id":"s","type":"get_state"}`+"\n", n)
	sc := parseScenario(b, "{}")
	b.ReportAllocs()
	for b.Loop() {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			io.WriteString(w, input)
			w.Close()
		}()
		if err := rpc.Serve(context.Background(), r, io.Discard, rpc.Options{Scenario: sc, Virtual: true}); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
