package retry_test

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestVariantCheckSettings: the original variant's table takes only
// enabled, maxRetries and baseDelayMs; the sound one takes any settings.
func TestVariantCheckSettings(t *testing.T) {
	plain := retry.Settings{Enabled: true, MaxRetries: 5, BaseDelay: time.Second}
	jittered := plain
	jittered.Jitter = retry.Jitter{Mode: retry.JitterFull, Ratio: 1}
	for _, c := range []struct {
		v    *retry.Variant
		s    retry.Settings
		fail bool
	}{
		{retry.Original(), plain, false},
		{retry.Original(), jittered, true},
		{retry.Sound(), jittered, false},
	} {
		if err := c.v.CheckSettings(&c.s); (err != nil) != c.fail {
			t.Errorf("%s %+v: %v", c.v.Name, c.s, err)
		}
	}
}
