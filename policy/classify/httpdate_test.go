package classify

import (
	"net/http"
	"testing"
	"time"
)

// TestHTTPDateAsNetHTTP: parseHeaderRetryAfter reads an HTTP date exactly
// as net/http.ParseTime does (its three layouts, written in policy so that
// the library core does not link net/http), on every form and near miss.
func TestHTTPDateAsNetHTTP(t *testing.T) {
	now := time.Date(2026, 2, 17, 12, 0, 0, 0, time.UTC)
	base := time.Date(2026, 2, 17, 12, 0, 30, 0, time.UTC)
	var inputs []string
	for _, layout := range []string{http.TimeFormat, time.RFC850, time.ANSIC, time.RFC1123Z, time.RFC3339, time.UnixDate, "2006-01-02 15:04:05"} {
		for _, d := range []time.Duration{0, -time.Hour, 48 * time.Hour, 400 * 24 * time.Hour} {
			inputs = append(inputs, base.Add(d).Format(layout))
		}
	}
	inputs = append(inputs, "", "GMT", "Tue, 17 Feb 2026 12:00:30 UTC", "Tue, 17 Feb 2026 12:00:30 gmt",
		"Tuesday, 17-Feb-26 12:00:30 GMT", "Tue Feb 17 12:00:30 2026", "Tue Feb  7 12:00:30 2026",
		"Tue, 17 Feb 2026 25:00:30 GMT", "Tue, 31 Feb 2026 12:00:30 GMT", " Tue, 17 Feb 2026 12:00:30 GMT\t")
	for _, in := range inputs {
		ms, ok := parseHeaderRetryAfter(in, now)
		if _, isNum := headerNumber(in); isNum {
			continue
		}
		want, err := http.ParseTime(in)
		trimmed, errTrim := http.ParseTime(trimSpaceTab(in))
		if err != nil && errTrim == nil {
			want, err = trimmed, nil // parseHeaderRetryAfter trims spaces and tabs first
		}
		if ok != (err == nil) {
			t.Errorf("%q: ok %v, net/http's error %v", in, ok, err)
			continue
		}
		if ok && ms != float64(want.UnixMilli())-float64(now.UnixMilli()) {
			t.Errorf("%q: %v ms, net/http's date %v", in, ms, want)
		}
	}
}

func trimSpaceTab(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
