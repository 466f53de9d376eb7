package audit_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/internal/testkit"
)

// dangling is block i of a log whose every block is a prompt whose chain
// is left open by a fatal error, so that the next block's prompt's run
// reports it (chain-not-ended): one finding per block, made without the
// log ever being in memory.
func dangling(i int) []byte {
	t := strconv.Itoa(i * 10000)
	return []byte(`{"id":"p` + strconv.Itoa(i) + `","type":"response","command":"prompt","success":true}` + "\n" +
		`{"t":` + t + `,"type":"agent_start"}` + "\n" +
		`{"t":` + t + `,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"},"model":"m"}` + "\n" +
		`{"t":` + t + `,"type":"agent_end"}` + "\n" +
		`{"t":` + t + `,"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"529 overloaded_error"}` + "\n" +
		`{"t":` + t + `,"type":"agent_start"}` + "\n" +
		`{"t":` + t + `,"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"invalid api key"},"model":"m"}` + "\n" +
		`{"t":` + t + `,"type":"agent_end"}` + "\n")
}

// TestAuditMemoryBounded: the heap in use while auditing does not grow with
// the log: after 20 000 chains (160 000 lines and as many findings) it is
// within 1 MB of what it was after 2 000 (50 bytes kept a chain would
// exceed it).
func TestAuditMemoryBounded(t *testing.T) {
	testkit.Need(t, testkit.Soak, "reading 160 000 lines")
	const n, early = 20000, 2000
	a, err := audit.New(audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found int
	var heapEarly, heapLate uint64
	sum, err := a.Audit(&testkit.Feed{N: n, Block: dangling}, func(f audit.Finding) {
		found++
		switch found {
		case early:
			heapEarly = testkit.HeapAlloc()
		case n - 1:
			heapLate = testkit.HeapAlloc()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != n || sum.Lines != 8*n || sum.Chains != n {
		t.Fatalf("%d findings, summary %+v: want %d chains not ended", found, sum, n)
	}
	if heapLate > heapEarly+1<<20 {
		t.Errorf("heap grew from %d to %d bytes between chain %d and chain %d", heapEarly, heapLate, early, n-1)
	}
}

// BenchmarkAudit measures the audit of a log of chains of three retries
// that succeed (bytes/s, and lines/s).
func BenchmarkAudit(b *testing.B) {
	var block bytes.Buffer
	block.WriteString(promptOK + "\n")
	for k := 1; k <= 3; k++ {
		block.WriteString(`{"t":0,"type":"agent_start"}` + "\n" + error529 + "\n" + agentEnd + "\n")
		block.WriteString(start(k, float64(int(2000)<<(k-1))) + "\n")
	}
	block.WriteString(agentStart + "\n" + replyStop + "\n" + endSuccess(3) + "\n" + agentEnd + "\n")
	log := bytes.Repeat(block.Bytes(), 1000)
	lines := bytes.Count(log, []byte("\n"))
	a, err := audit.New(audit.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		sum, err := a.Audit(bytes.NewReader(log), nil)
		if err != nil || sum.Findings != 0 || sum.Lines != lines {
			b.Fatalf("%+v, %v", sum, err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
