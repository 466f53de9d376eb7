package explore

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

func TestQuick(t *testing.T) {
	for _, v := range []*policy.Variant{policy.Sound, policy.Original} {
		for mr := 0; mr <= 10; mr++ {
			t0 := time.Now()
			r := Explore(Options{Variant: v, MaxRetries: mr})
			t.Logf("%s mr=%d states=%d transitions=%d pruned=%d viol=%d %v", v.Name, mr, r.States, r.Transitions, r.Pruned, len(r.Violations), time.Since(t0))
			if mr == 3 {
				for _, x := range r.Violations {
					t.Logf("  %v", x)
				}
			}
		}
	}
}
