package retry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestSettingsJSONDuplicateKeys: a key given twice, at any depth, is an
// error naming its path, in UnmarshalJSON and Apply alike (issue 19 §5:
// the last one won); keys that differ only once unescaped are the same
// key, keys that differ in case are not.
func TestSettingsJSONDuplicateKeys(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"baseDelayMs":1,"baseDelayMs":70000}`, `retry settings: key "baseDelayMs" given twice`},
		{`{"maxRetries":1,"enabled":true,"maxRetries":1}`, `key "maxRetries" given twice`},
		{`{"jitter":{"mode":"full","mode":"none"}}`, `key "jitter.mode" given twice`},
		{`{"retryAfter":{"use":"floor","maxWaitMs":1,"maxWaitMs":2}}`, `key "retryAfter.maxWaitMs" given twice`},
		{`{"baseDelayMs":1,"base\u0044elayMs":2}`, `key "baseDelayMs" given twice`},
	} {
		var s retry.Settings
		err := json.Unmarshal([]byte(c.in), &s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Unmarshal(%s): %v, want %q", c.in, err, c.want)
		}
		if _, err := retry.DefaultSettings().Apply([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Apply(%s): %v, want %q", c.in, err, c.want)
		}
	}
	var s retry.Settings
	if err := json.Unmarshal([]byte(`{"baseDelayMs":1,"jitter":{"mode":"full","ratio":0.5},"retryAfter":{"use":"floor","maxWaitMs":5}}`), &s); err != nil {
		t.Fatalf("no duplicate: %v", err)
	}
}
