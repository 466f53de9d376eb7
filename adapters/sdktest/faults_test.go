package sdktest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// TestGoSDKsWireFaults: every wire fault with both Go SDKs, every
// endpoint, JSON and streaming: what the SDK returns, how many requests
// it made, and that its wire log fits the SDK's profile.
func TestGoSDKsWireFaults(t *testing.T) {
	ok := []scenario.Turn{proxytest.OkTurn(), proxytest.OkTurn()}
	cases := []struct {
		name  string
		fault proxy.Fault
		// requests made and whether the call fails, JSON and streaming
		jsonReqs, streamReqs int
		jsonErr, streamErr   bool
		check                func(t *testing.T, r proxy.Record)
	}{
		{name: "latency", fault: proxy.Fault{Request: 1, Kind: proxy.FaultLatency, Delay: 3 * time.Second},
			jsonReqs: 1, streamReqs: 1,
			check: func(t *testing.T, r proxy.Record) {
				if r.HeadersMs < 3000 || r.AnswerMs < 3000 {
					t.Errorf("headers after %v ms, answer after %v ms; want >= 3000", r.HeadersMs, r.AnswerMs)
				}
			}},
		{name: "slow-body", fault: proxy.Fault{Request: 1, Kind: proxy.FaultSlowBody, Delay: 200 * time.Millisecond, Chunk: 32},
			jsonReqs: 1, streamReqs: 1,
			check: func(t *testing.T, r proxy.Record) {
				if r.HeadersMs != 0 || r.AnswerMs < 400 {
					t.Errorf("headers after %v ms, answer after %v ms; want 0 and >= 400 (two pauses or more)", r.HeadersMs, r.AnswerMs)
				}
			}},
		{name: "drop", fault: proxy.Fault{Request: 1, Kind: proxy.FaultDrop},
			jsonReqs: 2, streamReqs: 2,
			check: func(t *testing.T, r proxy.Record) {
				if r.Status != 0 || !r.Dropped() {
					t.Errorf("status %d, faults %v; want 0 and drop", r.Status, r.Faults)
				}
			}},
		{name: "stream-cut", fault: proxy.Fault{Request: 1, Kind: proxy.FaultStreamCut, Events: 3},
			// a JSON body cut short is a dropped body the SDKs retry; a
			// stream cut after its headers is the caller's error
			jsonReqs: 2, streamReqs: 1, streamErr: true},
		{name: "sse-error", fault: proxy.Fault{Request: 1, Kind: proxy.FaultSSEError, Events: 3},
			jsonReqs: 1, streamReqs: 1, streamErr: true,
			check: func(t *testing.T, r proxy.Record) {
				if r.Stream && (r.Events != 3 || len(r.Faults) != 1) {
					t.Errorf("events %d, faults %v; want 3 and the error event", r.Events, r.Faults)
				}
			}},
	}
	for _, tc := range cases {
		for _, sdk := range goSDKs {
			for _, call := range sdk.calls {
				t.Run(tc.name+"/"+sdk.name+"/"+call.name, func(t *testing.T) {
					sc := proxy.Script{Turns: ok, Faults: []proxy.Fault{tc.fault}}
					text, err, recs, log := runSDK(t, sc, call)
					wantReqs, wantErr := tc.jsonReqs, tc.jsonErr
					cutNotRetried := tc.name == "stream-cut" && sdk.name == "openai-go" && !isStream(call)
					if cutNotRetried {
						// openai-go v3.98.0 returns a 200 whose body is cut
						// ("unexpected EOF") without retrying it, where
						// anthropic-sdk-go retries it (SPEC §14.9)
						wantReqs, wantErr = 1, true
					}
					if isStream(call) {
						wantReqs, wantErr = tc.streamReqs, tc.streamErr
					}
					if (err != nil) != wantErr {
						t.Fatalf("error %v, want an error: %v", err, wantErr)
					}
					if err == nil && text != proxy.DefaultText {
						t.Errorf("text %q, want %q", text, proxy.DefaultText)
					}
					if tc.name == "sse-error" && err != nil && sdk.name == "anthropic-sdk-go" && !strings.Contains(err.Error(), "overloaded_error") {
						t.Errorf("error %q, want the overloaded_error event", err)
					}
					if len(recs) != wantReqs {
						t.Fatalf("%d requests, want %d: %+v", len(recs), wantReqs, recs)
					}
					if tc.check != nil {
						tc.check(t, recs[0])
					}
					// The wire audit knows each SDK's cut JSON body (audit's
					// TestCutJSONBodyEdges): openai-go not retrying it is
					// what its profile says, so even that log is clean.
					fs, _ := proxytest.AuditWire(t, sdk.profile, log)
					if len(fs) != 0 {
						t.Errorf("audit under %s: %v", sdk.profile, fs)
					}
				})
			}
		}
	}
}
