package explore

import (
	"testing"

	"github.com/ohmypi/retryfsm/session"
)

// BenchmarkCheckOriginal11 is `retrysim check --variant original
// --max-retries 11`, the explorer's largest single check: time per check,
// and (from benchCheck) the states explored, the CPU time per check
// (cpu-s/op: the figure to compare, which other work on the machine does
// not inflate), the heap live when Check returns (live-MB) and the
// process's peak resident memory (peak-RSS-MB).
// SPEC.md §12.5 gives its figures and how they were measured:
//
//	go test ./explore -run '^$' -bench CheckOriginal11 -benchtime 1x -benchmem -count 5
func BenchmarkCheckOriginal11(b *testing.B) {
	benchCheck(b, session.Original, 11, 11)
}
