package testkit

import "testing"

// TestNeedSkipsUnlessSet: without the variable the test is skipped; with
// it set to 1 it runs.
func TestNeedSkipsUnlessSet(t *testing.T) {
	const env = "RETRYSIM_OPTIN_SELFTEST"
	for _, c := range []struct {
		value string
		runs  bool
	}{{"", false}, {"0", false}, {"yes", false}, {"1", true}} {
		t.Setenv(env, c.value)
		ran := false
		t.Run(c.value, func(t *testing.T) {
			Need(t, env, "nothing")
			ran = true
		})
		if ran != c.runs {
			t.Errorf("%s=%q: ran %v, want %v", env, c.value, ran, c.runs)
		}
	}
}
