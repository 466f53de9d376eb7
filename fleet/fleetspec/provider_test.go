package fleetspec_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
)

// The provider takes time as an argument: the same calls at the same
// times get the same answers, whoever's clock the times come from.
func TestProviderTimeArgument(t *testing.T) {
	cfg := fleetspec.Config{
		Capacity: fleetspec.Capacity{RPS: 2, Burst: 2, MaxInFlight: 3},
		Outages: []fleetspec.Outage{
			{Start: 10 * time.Second, Duration: 5 * time.Second, Kind: fleetspec.Kind529},
			{Start: 20 * time.Second, Duration: 30 * time.Second, Kind: fleetspec.Kind429},
		},
	}
	p := fleetspec.NewProvider(&cfg)
	rng := rand.NewPCG(1, 2)
	type call struct {
		at       time.Duration
		want     fleetspec.Answer
		admitted bool
		over     bool
		release  bool // release it at once
	}
	ok := fleetspec.Answer{}
	over429 := func(secs int64) fleetspec.Answer {
		return fleetspec.Answer{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: secs}
	}
	for i, c := range []call{
		{at: 0, want: ok, admitted: true, release: true},                        // the full bucket: 2 tokens
		{at: 0, want: ok, admitted: true, release: true},                        // 0 left
		{at: 0, want: over429(1), over: true},                                   // empty: a token in 0.5 s, at least 1 s
		{at: 500 * time.Millisecond, want: ok, admitted: true},                  // refilled by the time given
		{at: 2 * time.Second, want: ok, admitted: true},                         // 2 in flight
		{at: 3 * time.Second, want: ok, admitted: true},                         // 3 in flight: the bound
		{at: 4 * time.Second, want: over429(1), over: true},                     // over MaxInFlight
		{at: 12 * time.Second, want: fleetspec.Answer{Kind: fleetspec.Kind529}}, // the window, not admitted
		{at: 20 * time.Second, want: over429(30)},                               // the 429 window's retry-after: its end - now
		{at: 49*time.Second + time.Millisecond, want: over429(1)},               // rounded up
	} {
		var pr fleetspec.Prompt
		pr.Remaining = 1
		a, admitted, over := p.Request(c.at, &pr, rng)
		if a != c.want || admitted != c.admitted || over != c.over {
			t.Errorf("call %d at %v: got %+v admitted=%v over=%v, want %+v admitted=%v over=%v",
				i, c.at, a, admitted, over, c.want, c.admitted, c.over)
		}
		if c.release {
			p.Release()
		}
	}
	if got := p.InFlight(); got != 3 {
		t.Errorf("in flight %d, want 3", got)
	}
	if !cfg.Outages[0].Cuts() || cfg.Outages[1].Cuts() {
		t.Errorf("a 529 window cuts the calls in flight, a 429 window does not")
	}
	if a := p.Cut(0); a != (fleetspec.Answer{Kind: fleetspec.Kind529}) {
		t.Errorf("cut answer %+v", a)
	}
}

// A prompt's first calls get the scripted errors, then its successes are
// toolUse turns until the last, a stop.
func TestProviderPrompt(t *testing.T) {
	cfg := fleetspec.Config{PromptErrors: fleetspec.PromptErrors{Count: 2, Kind: fleetspec.Kind503}}
	p := fleetspec.NewProvider(&cfg)
	pr := fleetspec.Prompt{Remaining: 2}
	var got []string
	for at := range 5 {
		a, admitted, _ := p.Request(time.Duration(at)*time.Second, &pr, nil)
		if admitted {
			p.Release()
		}
		got = append(got, fmt.Sprintf("%s/%v", a.Message().StopReason, a.Message().Status))
	}
	want := "[error/503 error/503 toolUse/0 stop/0 stop/0]"
	if fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// A fault model on a server's clock: the provider answers one request at
// the time since the server started (here, times given by hand).
func ExampleProvider() {
	cfg := fleetspec.Config{Outages: []fleetspec.Outage{{Start: time.Minute, Duration: time.Minute, Kind: fleetspec.KindUsageLimit}}}
	p := fleetspec.NewProvider(&cfg)
	rng := rand.NewPCG(1, 0)
	for _, since := range []time.Duration{0, 90 * time.Second} {
		pr := fleetspec.Prompt{Remaining: 1}
		a, admitted, _ := p.Request(since, &pr, rng)
		if admitted {
			p.Release()
		}
		m := a.Message()
		fmt.Printf("t=%v %s status=%d retry-after=%q\n", since, m.StopReason, m.Status, m.Headers["retry-after"])
	}
	// Output:
	// t=0s stop status=0 retry-after=""
	// t=1m30s error status=429 retry-after="30"
}

// Every answer's message, rendered from its provider.Answer, is SPEC
// §15.2's text, byte for byte.
func TestMessagesAreTheTexts(t *testing.T) {
	for _, c := range []struct {
		a       fleetspec.Answer
		status  int
		text    string
		headers map[string]string
	}{
		{fleetspec.Answer{Kind: fleetspec.Kind529}, 529, fleetspec.Message529, nil},
		{fleetspec.Answer{Kind: fleetspec.Kind503}, 503, fleetspec.Message503, nil},
		{fleetspec.Answer{Kind: fleetspec.Kind500}, 500, fleetspec.Message500, nil},
		{fleetspec.Answer{Kind: fleetspec.KindNetwork}, 0, fleetspec.MessageNetwork, nil},
		{fleetspec.Answer{Kind: fleetspec.KindOverflow}, 400, fleetspec.MessageOverflow, nil},
		{fleetspec.Answer{Kind: fleetspec.Kind429}, 429, fleetspec.Message429, nil},
		{fleetspec.Answer{Kind: fleetspec.Kind429, Hint: fleetspec.HintNone, RetryAfter: 3}, 429, fleetspec.Message429, nil},
		{fleetspec.Answer{Kind: fleetspec.Kind429, Hint: fleetspec.HintText, RetryAfter: 3}, 429, fleetspec.Message429 + " Please try again in 3s.", nil},
		{fleetspec.Answer{Kind: fleetspec.Kind429, Hint: fleetspec.HintHeader, RetryAfter: 3}, 429, fleetspec.Message429, map[string]string{"retry-after": "3"}},
		{fleetspec.Answer{Kind: fleetspec.KindUsageLimit, Hint: fleetspec.HintHeader, RetryAfter: 60}, 429, fleetspec.MessageUsageLimit + " Please try again in 60s.", map[string]string{"retry-after": "60"}},
	} {
		m := c.a.Message()
		if m.StopReason != "error" || m.Status != c.status || m.ErrorMessage != c.text || fmt.Sprint(m.Headers) != fmt.Sprint(c.headers) {
			t.Errorf("%+v: got %+v, want status %d, %q, headers %v", c.a, m, c.status, c.text, c.headers)
		}
	}
	for _, tool := range []bool{false, true} {
		want := "stop"
		if tool {
			want = "toolUse"
		}
		if m := (fleetspec.Answer{Tool: tool}).Message(); string(m.StopReason) != want || m.ErrorMessage != "" || m.Status != 0 {
			t.Errorf("success (tool %v): got %+v, want %s", tool, m, want)
		}
	}
}
