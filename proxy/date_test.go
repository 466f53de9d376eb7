package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/scenario"
)

// TestAnswerDate: an answer carries the Date header net/http writes (the
// current second, http.TimeFormat), which the proxy writes itself, so a
// recorder sees it too; it moves on with the second, and a turn's own
// date header replaces it.
func TestAnswerDate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := scenario.Turn{StopReason: policy.StopReasonStop}
		own := stop
		own.Headers = map[string]string{"date": "Mon, 02 Jan 2006 15:04:05 GMT"}
		p, err := proxy.New(proxy.Options{Script: proxy.Script{Turns: []scenario.Turn{stop, stop, stop, own}}})
		if err != nil {
			t.Fatal(err)
		}
		date := func() []string {
			w := httptest.NewRecorder()
			p.ServeHTTP(w, httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`{"model":"m","max_tokens":1,"messages":[]}`)))
			if w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			return w.Result().Header["Date"]
		}
		start := time.Now()
		if got, want := date(), start.UTC().Format(http.TimeFormat); len(got) != 1 || got[0] != want {
			t.Errorf("Date %q, want %q", got, want)
		}
		time.Sleep(999 * time.Millisecond)
		if got, want := date(), start.UTC().Format(http.TimeFormat); len(got) != 1 || got[0] != want {
			t.Errorf("within the second: Date %q, want %q", got, want)
		}
		time.Sleep(time.Millisecond)
		if got, want := date(), start.Add(time.Second).UTC().Format(http.TimeFormat); len(got) != 1 || got[0] != want {
			t.Errorf("the next second: Date %q, want %q", got, want)
		}
		if got := date(); len(got) != 1 || got[0] != "Mon, 02 Jan 2006 15:04:05 GMT" {
			t.Errorf("a turn's date header: Date %q, want its own", got)
		}
		_ = p.Close()
	})
}
