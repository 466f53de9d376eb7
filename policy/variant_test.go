package policy_test

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// TestVariantCheckSettings: the original variant's table takes only
// enabled, maxRetries and baseDelayMs; the sound one takes any settings.
func TestVariantCheckSettings(t *testing.T) {
	plain := policy.Settings{Enabled: true, MaxRetries: 5, BaseDelay: time.Second}
	jittered := plain
	jittered.Jitter = policy.Jitter{Mode: policy.JitterFull, Ratio: 1}
	for _, c := range []struct {
		v    *policy.Variant
		s    policy.Settings
		fail bool
	}{
		{policy.Original(), plain, false},
		{policy.Original(), jittered, true},
		{policy.Sound(), jittered, false},
	} {
		if err := c.v.CheckSettings(&c.s); (err != nil) != c.fail {
			t.Errorf("%s %+v: %v", c.v.Name, c.s, err)
		}
	}
}
