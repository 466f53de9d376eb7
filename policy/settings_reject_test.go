package policy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// TestAbsurdSettingsRejected: a store keeps its value when given invalid
// settings, and a Controller is not built on invalid settings.
func TestAbsurdSettingsRejected(t *testing.T) {
	st := policy.NewSettingsStore(policy.DefaultSettings())
	for _, bad := range []policy.Settings{
		{Enabled: true, MaxRetries: -1, BaseDelay: time.Second},
		{Enabled: true, MaxRetries: policy.MaxRetriesLimit + 1, BaseDelay: time.Second},
		{Enabled: true, MaxRetries: 3, BaseDelay: -time.Millisecond},
	} {
		var se *policy.SettingsError
		if err := st.Set(bad); !errors.As(err, &se) {
			t.Errorf("Set(%+v) = %v, want a *SettingsError", bad, err)
		}
		if got := st.RetrySettings(); !got.Equal(policy.DefaultSettings()) {
			t.Errorf("after a rejected Set the store holds %+v", got)
		}
		_, err := policy.NewController(policy.Config{Agent: newCtlAgent(), Settings: policy.NewSettingsStore(bad)})
		if !errors.As(err, &se) {
			t.Errorf("NewController on %+v = %v, want a *SettingsError", bad, err)
		}
	}
	if err := st.Set(policy.Settings{Enabled: false, MaxRetries: 0, BaseDelay: 0}); err != nil {
		t.Errorf("valid settings rejected: %v", err)
	}
}
