package policy_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// TestAbsurdSettingsRejected: invalid settings do not compile into a
// Policy (a *SettingsError), so no store or Controller ever holds them; a
// store keeps its policy when given nil, and a Controller is not built on
// a source with no policy.
func TestAbsurdSettingsRejected(t *testing.T) {
	st := policy.NewSettingsStore(policy.DefaultPolicy())
	for _, bad := range []policy.Settings{
		{Enabled: true, MaxRetries: -1, BaseDelay: time.Second},
		{Enabled: true, MaxRetries: policy.MaxRetriesLimit + 1, BaseDelay: time.Second},
		{Enabled: true, MaxRetries: 3, BaseDelay: -time.Millisecond},
	} {
		var se *policy.SettingsError
		p, err := policy.Compile(bad)
		if !errors.As(err, &se) || p != nil {
			t.Errorf("Compile(%+v) = %v, %v, want nil and a *SettingsError", bad, p, err)
		}
		st.Set(p)
		if got := st.RetryPolicy().Settings(); !got.Equal(policy.DefaultSettings()) {
			t.Errorf("after Set(nil) the store holds %+v", got)
		}
	}
	if _, err := policy.NewController(policy.Config{Agent: newCtlAgent(), Settings: &badLaterSource{calls: 1}}); err == nil {
		t.Error("NewController on a source with no policy: no error")
	}
	if _, err := policy.Compile(policy.Settings{Enabled: false, MaxRetries: 0, BaseDelay: 0}); err != nil {
		t.Errorf("valid settings rejected: %v", err)
	}
}
