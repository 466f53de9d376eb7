package explore

import (
	"crypto/sha256"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

// Temporary: fingerprint of every exploration, to compare before/after.
func TestZZTmpFingerprint(t *testing.T) {
	out := os.Getenv("FP_OUT")
	if out == "" {
		t.Skip()
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, v := range []*policy.Variant{policy.Sound, policy.Original} {
		for _, ext := range []bool{false, true} {
			for mr := 0; mr <= 10; mr++ {
				r := Explore(Options{Variant: v, MaxRetries: mr, Extended: ext})
				h := sha256.New()
				for i := 0; i < r.States; i++ {
					fmt.Fprintf(h, "%d %v %d %d\n", i, r.State(i), r.parent[i], r.via[i])
					if i > 0 {
						fmt.Fprintf(h, "%v\n", r.PathTo(i))
					}
				}
				var units []string
				for u, ok := range r.Reached {
					if ok {
						units = append(units, fmt.Sprint(u.Rule, u.From))
					}
				}
				sort.Strings(units)
				fmt.Fprintf(f, "%s ext=%t mr=%d states=%d transitions=%d pruned=%d violations=%v reached=%v hash=%x\n",
					r.Variant, ext, mr, r.States, r.Transitions, r.Pruned, r.Violations, units, h.Sum(nil))
			}
		}
	}
}
