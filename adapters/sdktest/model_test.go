package sdktest_test

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
)

// TestFaultModel: the fleet's provider answers on the real clock (here
// the synctest bubble's): during a 529 outage anthropic-sdk-go's call and
// its two retries get 529 and the call fails; after the window a call
// succeeds; over capacity (a token bucket of 1 at 0.5/s) a 429 with
// retry-after 2 is waited and retried to a success; a network outage
// drops the connections. Every log fits anthropic-sdk-go.
func TestFaultModel(t *testing.T) {
	call := goSDKs[0].calls[0]
	synctest.Test(t, func(t *testing.T) {
		cfg := &fleetspec.Config{Outages: []fleetspec.Outage{{Start: 0, Duration: 10 * time.Second, Kind: fleetspec.Kind529}},
			Capacity: fleetspec.Capacity{RPS: 0.5, Burst: 1}}
		s := proxytest.Serve(t, proxy.Script{Fleet: cfg})
		if _, err := call.call(t.Context(), s); err == nil || !strings.Contains(err.Error(), "529") {
			t.Errorf("during the outage: %v, want the 529", err)
		}
		time.Sleep(10 * time.Second)
		if text, err := call.call(t.Context(), s); err != nil || text != proxy.DefaultText {
			t.Errorf("after the outage: %q, %v", text, err)
		}
		if text, err := call.call(t.Context(), s); err != nil || text != proxy.DefaultText {
			t.Errorf("over capacity: %q, %v (want the 429 waited and retried)", text, err)
		}
		synctest.Wait()
		recs, log := s.Close(t)
		var kinds []string
		for _, r := range recs {
			kinds = append(kinds, r.Fleet)
		}
		if got := strings.Join(kinds, " "); got != "529 529 529 ok 429 ok" {
			t.Errorf("answers %q", got)
		}
		if g := proxytest.Gaps(recs); g[4] != 2000 || recs[4].Headers["retry-after"] != "2" {
			t.Errorf("the 429's retry-after %q waited %v ms, want 2 and 2000", recs[4].Headers["retry-after"], g[4])
		}
		if fs, _ := proxytest.AuditWire(t, "anthropic-sdk-go", log); len(fs) != 0 {
			t.Errorf("audit: %v", fs)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		cfg := &fleetspec.Config{Outages: []fleetspec.Outage{{Start: 0, Duration: time.Hour, Kind: fleetspec.KindNetwork}}}
		s := proxytest.Serve(t, proxy.Script{Fleet: cfg})
		if _, err := call.call(t.Context(), s); err == nil {
			t.Error("a network outage: no error")
		}
		synctest.Wait()
		recs, log := s.Close(t)
		if len(recs) != 3 || !recs[0].Dropped() || recs[0].Fleet != "network" {
			t.Errorf("wire log %+v, want three dropped connections", recs)
		}
		if fs, _ := proxytest.AuditWire(t, "anthropic-sdk-go", log); len(fs) != 0 {
			t.Errorf("audit: %v", fs)
		}
	})
}

// TestLoadScriptFleet: a script's fleet key reads a fleet file (relative
// to the script) as the fault model; an error in it names the fleet
// file's position.
func TestLoadScriptFleet(t *testing.T) {
	write := proxytest.Files(t)
	write("f.yaml", "sessions: 1\ncapacity: {rps: 2, burst: 4}\noutages:\n  - {start: 30s, duration: 60s, kind: 529}\n")
	s, err := proxy.LoadScript(write("p.yaml", "fleet: f.yaml\n"))
	if err != nil || s.Fleet == nil || s.Fleet.Capacity.RPS != 2 || len(s.Fleet.Outages) != 1 {
		t.Fatalf("%+v, %v", s, err)
	}
	write("bad.yaml", "sessions: 1\noutages:\n  - {start: 30s, duration: 60s, kind: 530}\n")
	if _, err := proxy.LoadScript(write("p.yaml", "fleet: bad.yaml\n")); err == nil || !strings.Contains(err.Error(), "p.yaml:1:8: fleet: ") || !strings.Contains(err.Error(), "bad.yaml:3:") {
		t.Errorf("bad fleet file: %v", err)
	}
}
