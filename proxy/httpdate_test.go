package proxy_test

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/classify"
)

// TestHTTPDateAsNetHTTP: the policy reads an HTTP date in a retry-after
// header (one an upstream sends, which the proxy forwards) exactly as
// net/http.ParseTime does, on every form and near miss. The policy has its
// own copy of ParseTime's three layouts, so that the library core does not
// link net/http; this test is in the proxy's module, which links net/http
// anyway, so that the root module's tests do not link it either (SPEC.md
// §18.4).
func TestHTTPDateAsNetHTTP(t *testing.T) {
	base := time.Date(2026, 2, 17, 12, 0, 30, 0, time.UTC)
	now := base.Add(-2 * time.Hour) // the dates below are after now, but for the near misses' one of 7 Feb
	var inputs []string
	for _, layout := range []string{http.TimeFormat, time.RFC850, time.ANSIC, time.RFC1123Z, time.RFC3339, time.UnixDate, "2006-01-02 15:04:05"} {
		for _, d := range []time.Duration{0, -time.Hour, 48 * time.Hour, 400 * 24 * time.Hour} {
			inputs = append(inputs, base.Add(d).Format(layout))
		}
	}
	inputs = append(inputs, "", "GMT", "Tue, 17 Feb 2026 12:00:30 UTC", "Tue, 17 Feb 2026 12:00:30 gmt",
		"Tuesday, 17-Feb-26 12:00:30 GMT", "Tue Feb 17 12:00:30 2026", "Tue Feb  7 12:00:30 2026",
		"Tue, 17 Feb 2026 25:00:30 GMT", "Tue, 31 Feb 2026 12:00:30 GMT", " Tue, 17 Feb 2026 12:00:30 GMT\t")
	read := 0
	for _, in := range inputs {
		got := classify.ClassifyReply(classify.AssistantMessage{
			StopReason: classify.StopReasonError,
			Headers:    map[string]string{"retry-after": in},
		}, 0, now)
		want, err := http.ParseTime(strings.Trim(in, " \t")) // the policy trims spaces and tabs first
		if got.HasWaitHint != (err == nil) {
			t.Errorf("%q: a hint %v, net/http's error %v", in, got.HasWaitHint, err)
			continue
		}
		if err == nil {
			read++
			ms := math.Max(0, float64(want.UnixMilli()-now.UnixMilli())) // a time in the past is no wait
			if got.WaitHintMs != ms {
				t.Errorf("%q: %v ms, net/http's date %v (%v ms)", in, got.WaitHintMs, want, ms)
			}
		}
	}
	if read < 12 { // the three layouts net/http reads, at four dates each
		t.Errorf("net/http read %d of the dates: the check compared too few", read)
	}
}
