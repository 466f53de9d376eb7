package sdktest_test

import (
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// vectorDirs are the profiles pinned by vectors taken from a Go SDK
// through the proxy, and the SDK call that measures them.
var vectorDirs = []struct {
	profile string
	call    sdkCall
}{
	{"anthropic-sdk-go", goSDKs[0].calls[0]},
	{"openai-sdk-go", goSDKs[1].calls[0]},
}

// TestGoSDKVectors: each scenario file of scenarios/profiles/<sdk>-go
// (the engine's expectation under the profile) is served by the proxy to
// the real SDK: the SDK makes as many requests as the profile's retries
// + 1 and waits what the profile waits (a jittered backoff: within the
// jitter below the file's pinned draw), and its wire log is clean under
// the profile.
func TestGoSDKVectors(t *testing.T) {
	for _, v := range vectorDirs {
		files, err := filepath.Glob(filepath.Join("..", "..", "scenarios", "profiles", v.profile, "*.yaml"))
		if err != nil || len(files) < 5 {
			t.Fatalf("%s: %d vector files (%v)", v.profile, len(files), err)
		}
		for _, f := range files {
			t.Run(v.profile+"/"+filepath.Base(f), func(t *testing.T) {
				sc, err := scenario.Load(f)
				if err != nil {
					t.Fatal(err)
				}
				var delays []float64
				for _, ev := range sc.Expect.Events {
					if ev.Fields["type"] == "auto_retry_start" {
						delays = append(delays, ev.Fields["delayMs"].(float64))
					}
				}
				_, _, recs, log := runSDK(t, proxy.Script{Turns: sc.Turns}, v.call)
				if len(recs) != len(delays)+1 {
					t.Fatalf("the SDK made %d requests; the profile %d", len(recs), len(delays)+1)
				}
				jittered := sc.Settings.Jittered()
				for i, g := range proxytest.Gaps(recs) {
					want := delays[i]
					lo := want
					if jittered && recs[i].Headers["retry-after"] == "" && recs[i].Headers["retry-after-ms"] == "" {
						lo = want * (1 - sc.Settings.Jitter.Ratio)
					}
					if g < lo || g > want {
						t.Errorf("wait %d: the SDK %v ms, the profile %v ms (from %v)", i+1, g, want, lo)
					}
				}
				if fs, _ := proxytest.AuditWire(t, v.profile, log); len(fs) != 0 {
					t.Errorf("audit under %s: %v", v.profile, fs)
				}
			})
		}
	}
}

// TestGoSDKHintGaps pins where a Go SDK does what no settings can say,
// and that the audit reports it: openai-go ignores a negative hint and
// backs off (the engine clamps a hint to 0 and retries at once), so its
// wait is a wire-wait finding under openai-sdk-go; anthropic-sdk-go
// retries at once and fits anthropic-sdk-go.
func TestGoSDKHintGaps(t *testing.T) {
	for _, h := range []map[string]string{{"retry-after": "-1"}, {"retry-after-ms": "-5"}} {
		sc := proxy.Script{Turns: []scenario.Turn{proxytest.ErrTurn(429, "429 rate limited", h), proxytest.OkTurn()}}
		_, err, recs, log := runSDK(t, sc, goSDKs[1].calls[0])
		if err != nil || len(recs) != 2 {
			t.Fatalf("openai-go %v: %v, %d requests", h, err, len(recs))
		}
		if g := proxytest.Gaps(recs)[0]; g < 375 || g > 500 {
			t.Errorf("openai-go %v: waited %v ms, want its backoff 375..500", h, g)
		}
		fs, _ := proxytest.AuditWire(t, "openai-sdk-go", log)
		if len(fs) != 1 || fs[0].Rule != audit.WireWait || fs[0].Line != 2 {
			t.Errorf("openai-go %v under openai-sdk-go: %v, want one wire-wait at line 2", h, fs)
		}

		_, err, recs, log = runSDK(t, sc, goSDKs[0].calls[0])
		if err != nil || len(recs) != 2 || proxytest.Gaps(recs)[0] != 0 {
			t.Fatalf("anthropic-sdk-go %v: %v, %d requests, waits %v; want one retry at once", h, err, len(recs), proxytest.Gaps(recs))
		}
		if fs, _ := proxytest.AuditWire(t, "anthropic-sdk-go", log); len(fs) != 0 {
			t.Errorf("anthropic-sdk-go %v: %v", h, fs)
		}
	}
}
