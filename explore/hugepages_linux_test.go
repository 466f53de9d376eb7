package explore

import (
	"os"
	"strings"
	"testing"
)

// TestAdviseHugePages: Linux takes the advice for the explorer's large
// arrays (a kernel without transparent huge pages refuses it, and the
// test says so), and for arrays that do not span a whole page there is
// nothing to advise.
func TestAdviseHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("no transparent huge pages in this kernel: %v", err)
	}
	big := makeBig[node](chunkLen)
	if err := adviseHugePages(big); err != nil {
		t.Errorf("madvise of %d MiB: %v", cap(big)*32>>20, err)
	}
	if err := adviseHugePages(make([]uint64, 0, 100)); err != nil {
		t.Errorf("a small array: %v", err)
	}
	if err := adviseHugePages([]node(nil)); err != nil {
		t.Errorf("nil: %v", err)
	}
	status, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err == nil {
		t.Logf("transparent_hugepage/enabled: %s", strings.TrimSpace(string(status)))
	}
}
