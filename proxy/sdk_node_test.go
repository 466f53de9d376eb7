package proxy_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/internal/testkit"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// jsSDKEnv names a folder where @anthropic-ai/sdk and openai are installed
// already (node_modules); without it the test installs them from the npm
// registry into a temporary folder.
const jsSDKEnv = "RETRYSIM_JS_SDK_DIR"

// jsSlack is how much later than a profile's wait a JavaScript SDK's retry
// may come where it fits the profile: node's timers on a loaded machine
// (late by over half a second under load on this 2-core machine).
// jsDetect is the slack where the SDK's wait differs from the profile's:
// below the shortest difference (the backoff's 375 ms), so the difference
// is found however late the SDK is.
const (
	jsSlack  = 2 * time.Second
	jsDetect = 300 * time.Millisecond
)

// installJSSDKs returns a folder with the JavaScript SDKs and jscall.mjs,
// or skips the test when node or the registry is not there.
func installJSSDKs(t *testing.T) string {
	t.Helper()
	testkit.Need(t, testkit.JS, "node, npm (the JavaScript SDKs from the registry) and the real clock")
	if testing.Short() {
		t.Skip("-short: the JavaScript SDKs wait on the real clock")
	}
	_, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := os.Getenv(jsSDKEnv)
	if dir == "" {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skip("npm is not installed")
		}
		dir = t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", dir, "@anthropic-ai/sdk", "openai")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("npm install of the JavaScript SDKs failed (no registry?): %v\n%s", err, out)
		}
	}
	script, err := os.ReadFile(filepath.Join("testdata", "jscall.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jscall.mjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runJS serves sc on loopback and makes one call with a JavaScript SDK.
func runJS(t *testing.T, dir, sdk string, sc proxy.Script) (string, []proxy.Record, []byte) {
	t.Helper()
	var log bytes.Buffer
	p, err := proxy.New(proxy.Options{Script: sc, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "jscall.mjs"), sdk, srv.URL).CombinedOutput()
	srv.Close()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out)), proxytest.ReadLog(t, log.Bytes()), bytes.Clone(log.Bytes())
}

// TestJSSDKs checks the JavaScript SDKs (@anthropic-ai/sdk, openai, as
// npm installs them) through the proxy, with their own retries on: the
// backoff and a positive hint fit their profiles; where a JS SDK does what
// the settings cannot say (SPEC §14.8-14.9), the audit reports the
// difference at the retry: @anthropic-ai/sdk backs off on a hint of 0,
// and both read retry-after when retry-after-ms is 0.
func TestJSSDKs(t *testing.T) {
	dir := installJSSDKs(t)
	ra := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		sdk, profile, name string
		turns              []scenario.Turn
		lo, hi             float64 // the first wait, ms
		fits               bool    // clean under the profile; else one wire-wait at line 2
	}{
		{"anthropic", "anthropic-sdk", "backoff", []scenario.Turn{proxytest.ErrTurn(529, "Overloaded", nil), proxytest.OkTurn()}, 375, 500, true},
		{"anthropic", "anthropic-sdk", "retry-after-ms 20", []scenario.Turn{proxytest.ErrTurn(429, "rate limited", ra("retry-after-ms", "20")), proxytest.OkTurn()}, 20, 20, true},
		{"anthropic", "anthropic-sdk", "retry-after 0: the backoff", []scenario.Turn{proxytest.ErrTurn(429, "rate limited", ra("retry-after", "0")), proxytest.OkTurn()}, 375, 500, false},
		{"anthropic", "anthropic-sdk", "retry-after-ms 0, retry-after 1", []scenario.Turn{proxytest.ErrTurn(429, "rate limited", ra("retry-after-ms", "0", "retry-after", "1")), proxytest.OkTurn()}, 1000, 1000, false},
		{"openai", "openai-sdk", "backoff", []scenario.Turn{proxytest.ErrTurn(500, "boom", nil), proxytest.OkTurn()}, 375, 500, true},
		{"openai", "openai-sdk", "retry-after -1: at once", []scenario.Turn{proxytest.ErrTurn(429, "rate limited", ra("retry-after", "-1")), proxytest.OkTurn()}, 0, 0, true},
		{"openai", "openai-sdk", "retry-after-ms 0, retry-after 1", []scenario.Turn{proxytest.ErrTurn(429, "rate limited", ra("retry-after-ms", "0", "retry-after", "1")), proxytest.OkTurn()}, 1000, 1000, false},
	}
	for _, tc := range cases {
		t.Run(tc.sdk+"/"+tc.name, func(t *testing.T) {
			out, recs, log := runJS(t, dir, tc.sdk, proxy.Script{Turns: tc.turns})
			if out != "ok "+proxy.DefaultText {
				t.Fatalf("node printed %q", out)
			}
			if len(recs) != 2 || recs[1].Client["x-stainless-retry-count"] != "1" {
				t.Fatalf("requests %+v, want 2, the second with x-stainless-retry-count 1", recs)
			}
			if g := proxytest.Gaps(recs)[0]; g < tc.lo-1 || g > tc.hi+float64(jsSlack/time.Millisecond) {
				t.Errorf("waited %.1f ms, want %v to %v", g, tc.lo, tc.hi)
			}
			a, err := audit.New(audit.Options{Profile: tc.profile})
			if err != nil {
				t.Fatal(err)
			}
			var fs []audit.Finding
			slack := jsSlack
			if !tc.fits {
				slack = jsDetect
			}
			if _, err := a.AuditWire(bytes.NewReader(log), audit.WireOptions{Slack: slack}, func(f audit.Finding) { fs = append(fs, f) }); err != nil {
				t.Fatal(err)
			}
			if tc.fits && len(fs) != 0 {
				t.Errorf("audit under %s: %v", tc.profile, fs)
			}
			if !tc.fits && (len(fs) != 1 || fs[0].Rule != audit.WireWait || fs[0].Line != 2) {
				t.Errorf("audit under %s: %v, want the known difference as one wire-wait at line 2", tc.profile, fs)
			}
		})
	}
}
