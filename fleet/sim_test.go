package fleet_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// recorder keeps a fleet session's JSON trace and its wire calls.
type recorder struct {
	info  fleet.SessionInfo
	json  trace.Writer
	calls []scenario.Turn
}

func (r *recorder) Record(rec *trace.Record) { r.json.Record(rec) }

func (r *recorder) Call(m policy.AssistantMessage, latency time.Duration) {
	r.calls = append(r.calls, scenario.Turn{StopReason: m.StopReason, ErrorMessage: m.ErrorMessage, Status: m.Status,
		Headers: m.Headers, Duration: latency})
}

// TestFleetSessionsAreSimSessions: a sample of the sessions of a fleet
// with every profile, capacity, outages of every kind, background errors
// and overflows, run through sim as scenarios (their wire answers as
// turns, their latencies as durations, their jitter seed as the
// scenario's seed), write exactly the trace the fleet's session core
// wrote: the same engine, not a second model of the policy.
func TestFleetSessionsAreSimSessions(t *testing.T) {
	cfg := fleetspec.Default(900)
	everything(&cfg) // the digests' fleet (digest_test.go); its profiles are set below
	cfg.Profiles = nil
	flat := flatProfiles()
	for _, p := range flat {
		cfg.Profiles = append(cfg.Profiles, fleetspec.Share{Profile: p.Name, Percent: 100.0 / float64(len(flat))})
	}
	cfg.Profiles[0].Percent = 100 - float64(len(flat)-1)*(100.0/float64(len(flat)))
	var traced []*recorder
	res, err := runConfig(cfg, fleet.Options{Trace: func(info fleet.SessionInfo) fleet.Tracer {
		if info.Index%7 != 0 {
			return nil
		}
		r := &recorder{info: info}
		traced = append(traced, r)
		return r
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The "all" row (Profiles[9] when the test was written with nine
	// profiles; profiles added since moved it).
	if all := res.Groups[0].Profiles; len(all) > 0 && all[len(all)-1].Profile != fleet.AllProfiles {
		t.Fatalf("the last row is %q, want the all row", all[len(all)-1].Profile)
	}
	if s := res.Groups[0].Profiles[len(res.Groups[0].Profiles)-1]; s.ChainsFailFast == 0 || s.ChainsExhausted == 0 || s.ChainsSucceeded == 0 || s.Rejected == 0 {
		t.Fatalf("the fleet does not exercise the engine enough: %+v", s)
	}
	perProfile := map[string]int{}
	for _, r := range traced {
		perProfile[r.info.Profile]++
		sc, err := scenario.Parse("fleet-session", []byte("{}"))
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.SetProfile(r.info.Profile); err != nil {
			t.Fatal(err)
		}
		sc.Seed = r.info.JitterSeed
		sc.Turns = r.calls
		s, err := sim.NewSession(sc, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(); err != nil {
			t.Fatal(err)
		}
		got := s.Trace().Bytes()
		final := bytes.LastIndex(bytes.TrimSuffix(got, []byte("\n")), []byte("\n")) + 1
		if !bytes.Contains(got[final:], []byte(`"type":"final"`)) || !bytes.Contains(got[final:], []byte(`"unresolvedPrompts":[]`)) {
			t.Fatalf("session %d: sim's final line %s", r.info.Index, got[final:])
		}
		if want := r.json.Bytes(); !bytes.Equal(got[:final], want) {
			t.Fatalf("session %d (%s): the fleet's trace differs from sim's\nfleet:\n%s\nsim:\n%s", r.info.Index, r.info.Profile, want, got)
		}
	}
	if len(traced) < 100 || len(perProfile) != len(flat) {
		t.Fatalf("%d sessions traced, profiles %v", len(traced), perProfile)
	}
	// The sample saw what matters: fail-fast ends, credential questions,
	// compactions, hints.
	var all strings.Builder
	for _, r := range traced {
		all.Write(r.json.Bytes())
	}
	for _, want := range []string{`Provider requested`, `"type":"mark_usage_limit_reached"`, `"type":"auto_compaction_start"`, `"success":false`, `"success":true`} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("no traced session has %s", want)
		}
	}
}

// flatProfiles are the profiles of whole agents and SDKs: not a provider
// layer's, and not one over a layer of its own (a fleet's SDK layer is one
// for all its sessions; TestProviderLayerProfile runs those).
func flatProfiles() []policy.Profile {
	layers := map[string]bool{}
	for _, p := range policy.Profiles() {
		layers[p.Layer] = true
	}
	var flat []policy.Profile
	for _, p := range policy.Profiles() {
		if p.Layer == "" && !layers[p.Name] {
			flat = append(flat, p)
		}
	}
	return flat
}
