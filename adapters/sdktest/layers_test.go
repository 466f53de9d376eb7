package sdktest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/ohmypi/retryfsm"
	anthropicreply "github.com/ohmypi/retryfsm/adapters/anthropic"
	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/proxy"
	"github.com/ohmypi/retryfsm/proxy/proxytest"
	"github.com/ohmypi/retryfsm/scenario"
)

// oh-my-pi 18.3.4's two retry layers, modelled by the engine and driven
// through the proxy (SPEC.md §14.11), checked against what the real agent
// did (its logs, recorded through the proxy: the audit's
// testdata/realagent): the provider layer is retryfsm.Do with the layer's
// settings around the Anthropic Go SDK with its own retries off (pi-ai
// retries itself), the session layer a policy.Controller with the agent's
// settings whose agent writes the RPC log the agent writes (the newer
// protocol, stamped on the bubble's clock, as the wire log is).

// twoLayerAgent is the model: a session layer over a provider layer.
type twoLayerAgent struct {
	ctl      *policy.Controller
	client   anthropic.Client
	provider policy.Settings
	draw     float64 // every jitter draw, both layers

	mu  sync.Mutex
	rpc bytes.Buffer
	err int // errorId counter
}

// line writes one RPC line: fields in order, "timestamp" last.
func (a *twoLayerAgent) line(fields ...any) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(fields); i += 2 {
		v, _ := json.Marshal(fields[i+1])
		fmt.Fprintf(&b, "%q:%s,", fields[i], v)
	}
	fmt.Fprintf(&b, `"timestamp":%d}`, time.Now().UnixMilli())
	a.rpc.WriteString(b.String() + "\n")
}

// event writes a session-layer event (auto_retry_start and _end) with its
// timestamp, and errorId on a start, as the newer protocol does.
func (a *twoLayerAgent) event(e policy.Event) {
	raw, err := json.Marshal(e)
	if err != nil {
		panic(err)
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	fields := []any{"type", m["type"]}
	for _, k := range []string{"success", "attempt", "maxAttempts", "delayMs", "errorMessage", "finalError"} {
		if v, ok := m[k]; ok {
			fields = append(fields, k, v)
		}
	}
	if m["type"] == "auto_retry_start" {
		a.err++
		fields = append(fields, "errorId", a.err)
	}
	a.line(fields...)
}

var layerParams = anthropic.MessageNewParams{
	Model: "claude-sonnet-4-5", MaxTokens: 64,
	Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))},
}

// run is one run of the session layer: one model call through the
// provider layer, then message_end and agent_end.
func (a *twoLayerAgent) run(ctx context.Context) {
	a.line("type", "agent_start")
	start := time.Now()
	msg, err := retryfsm.Do(ctx, policy.MustCompile(a.provider), func(ctx context.Context) (*anthropic.Message, error) {
		return a.client.Messages.New(ctx, layerParams)
	}, retryfsm.WithReply(anthropicreply.Message), retryfsm.WithConfig(func(c *policy.Config) {
		c.Rand = func() float64 { return a.draw }
	}))
	reply := anthropicreply.Reply(msg, err)
	m := map[string]any{"role": "assistant", "stopReason": reply.StopReason, "completedAt": time.Now().UnixMilli(),
		"duration": time.Since(start).Milliseconds()}
	if reply.ErrorMessage != "" {
		m["errorMessage"], m["errorStatus"] = reply.ErrorMessage, reply.Status
	}
	a.line("type", "message_end", "message", m)
	a.line("type", "agent_end", "messages", []any{})
	a.ctl.OnMessageEnd(reply)
	a.ctl.OnAgentEnd(&reply)
}

// Continue implements policy.Agent.
func (a *twoLayerAgent) Continue(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.run(ctx)
	return nil
}

// prompt runs one prompt to its end, as the agent's RPC mode answers it.
func (a *twoLayerAgent) prompt(ctx context.Context) error {
	a.line("type", "response", "id", "p1", "command", "prompt", "success", true)
	a.ctl.OnPrompt(ctx)
	a.run(ctx)
	err := a.ctl.WaitForRetry(ctx)
	status := "completed"
	if err != nil {
		status = "error"
	}
	a.line("type", "prompt_result", "id", "p1", "agentInvoked", true, "status", status, "sessionSettled", true)
	a.line("type", "session_settled")
	return err
}

// runTwoLayers runs one prompt of the model (session layer profile
// session, provider layer settings provider) against a proxy serving sc,
// in a synctest bubble, and returns the prompt's error, the RPC log and the
// wire log.
func runTwoLayers(t *testing.T, session string, provider policy.Settings, sc proxy.Script) (perr error, rpcLog []byte, recs []proxy.Record, wireLog []byte) {
	t.Helper()
	p, err := policy.ProfileByName(session)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		s := proxytest.Serve(t, sc)
		a := &twoLayerAgent{provider: provider, draw: 0,
			client: anthropic.NewClient(aoption.WithBaseURL(s.URL), aoption.WithHTTPClient(s.Client), aoption.WithAPIKey("sk-test"), aoption.WithMaxRetries(0))}
		a.ctl, err = policy.NewController(policy.Config{Agent: a, Settings: policy.NewSettingsStore(policy.MustCompile(p.Settings)),
			Rand: func() float64 { return a.draw }})
		if err != nil {
			t.Fatal(err)
		}
		a.ctl.Subscribe(a.event)
		a.line("type", "ready", "protocolVersion", 1, "supportedProtocolVersions", []int{1, 2}, "maxFrameBytes", 1<<20)
		perr = a.prompt(t.Context())
		synctest.Wait()
		recs, wireLog = s.Close(t)
		rpcLog = bytes.Clone(a.rpc.Bytes())
	})
	return perr, rpcLog, recs, wireLog
}

// auditLayers audits the two logs under profile, the attempts and the
// findings of each log.
func auditLayers(t *testing.T, profile string, rpcLog, wireLog []byte) (rpcFs, wireFs []audit.Finding, attempts []audit.Attempt, sum audit.LayersSummary) {
	t.Helper()
	return auditLayersWith(t, profile, rpcLog, wireLog, audit.WireOptions{Slack: -1})
}

// auditLayersWith is auditLayers with opt.
func auditLayersWith(t *testing.T, profile string, rpcLog, wireLog []byte, opt audit.WireOptions) (rpcFs, wireFs []audit.Finding, attempts []audit.Attempt, sum audit.LayersSummary) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	sum, err = a.AuditLayers(bytes.NewReader(rpcLog), bytes.NewReader(wireLog), opt,
		func(f audit.Finding) { rpcFs = append(rpcFs, f) }, func(f audit.Finding) { wireFs = append(wireFs, f) },
		func(at audit.Attempt) { attempts = append(attempts, at) })
	if err != nil {
		t.Fatal(err)
	}
	return rpcFs, wireFs, attempts, sum
}

func count(log []byte, typ string) int { return bytes.Count(log, []byte(`"type":"`+typ+`"`)) }

func overloaded(n int) []scenario.Turn {
	turns := make([]scenario.Turn, n)
	for i := range turns {
		turns[i] = proxytest.ErrTurn(529, "Overloaded", nil)
	}
	return turns
}

// TestTwoLayerVectors: omp-18's vectors, measured on the real agent (its
// recorded logs: requests per session attempt and auto_retry_start
// lines), reproduced by the model through the proxy: a permanent 529 is
// 11 session attempts of 11 requests each (121 on the wire) and one chain
// of 10 auto_retry_start; 529, 529, OK and a 429 with retry-after 3 leave
// no auto_retry_* event (3 and 2 requests, the 429's retry 3 s later).
// Each RPC log is clean under omp-18 and says the provider layer is not
// visible; with the wire log beside it both layers are clean and each
// attempt's requests are counted.
func TestTwoLayerVectors(t *testing.T) {
	layer, err := policy.ProfileByName("pi-ai-anthropic")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, measured string // the recorded run
		turns          []scenario.Turn
		failed         bool
		gap            float64 // the first retry's wait on the wire, ms
	}{
		{"permanent 529", "529-forever", overloaded(121), true, 500},
		{"529, 529, OK", "529-529-ok", append(overloaded(2), proxytest.OkTurn()), false, 500},
		{"429 retry-after 3", "429-retry-after-3", []scenario.Turn{proxytest.ErrTurn(429, "Number of requests has exceeded your rate limit", map[string]string{"retry-after": "3"}), proxytest.OkTurn()}, false, 3000},
	} {
		requests, starts := measuredVector(t, filepath.Join("..", "..", "audit", "testdata", "realagent", tc.measured))
		t.Run(tc.name, func(t *testing.T) {
			perr, rpcLog, recs, wireLog := runTwoLayers(t, "omp-18", layer.Settings, proxy.Script{Turns: tc.turns})
			var ex *policy.ExhaustedError
			if tc.failed != errors.As(perr, &ex) || !tc.failed && perr != nil {
				t.Fatalf("prompt error %v, want exhausted %v", perr, tc.failed)
			}
			total := 0
			for _, n := range requests {
				total += n
			}
			if len(recs) != total {
				t.Errorf("%d requests on the wire, want %d", len(recs), total)
			}
			if g := proxytest.Gaps(recs); len(g) == 0 || g[0] != tc.gap {
				t.Errorf("waits on the wire %v, want the first %v ms", g, tc.gap)
			}
			if n := count(rpcLog, "auto_retry_start"); n != starts || (starts == 0) != (count(rpcLog, "auto_retry_end") == 0) {
				t.Errorf("%d auto_retry_start, %d auto_retry_end in the RPC log, want %d starts:\n%s", n, count(rpcLog, "auto_retry_end"), starts, rpcLog)
			}
			fs, sum := auditRPC(t, "omp-18", rpcLog)
			if len(fs) != 0 || sum.ProviderLayer != audit.ProviderLayerNotVisible || sum.Protocol != 2 {
				t.Errorf("RPC log alone under omp-18: %v, %+v; want clean, provider layer not visible, protocol 2", fs, sum)
			}
			rpcFs, wireFs, attempts, lsum := auditLayers(t, "omp-18", rpcLog, wireLog)
			if len(rpcFs)+len(wireFs) != 0 || lsum.RPC.ProviderLayer != audit.ProviderLayerChecked {
				t.Errorf("both layers: RPC %v, wire %v, %+v", rpcFs, wireFs, lsum)
			}
			if len(attempts) != len(requests) {
				t.Fatalf("attempts %+v, want %d", attempts, len(requests))
			}
			for i, at := range attempts {
				if at.Requests != requests[i] || at.Attempt != i {
					t.Errorf("attempt %d: %+v, want attempt %d with %d requests", i, at, i, requests[i])
				}
			}
			if lsum.Wire.Events != total || lsum.Wire.Chains != len(requests) {
				t.Errorf("wire summary %+v, want %d requests in %d calls", lsum.Wire, total, len(requests))
			}
		})
	}
}

// TestTwoLayerAuditFindsAShortProviderLayer: the same session layer over
// a provider layer that gives up after 2 retries (the Anthropic SDK's
// default) is found by the two-layer audit: every session attempt's last
// 529 is one pi-ai-anthropic retries (wire-not-retried), while the RPC log
// alone is clean (the provider layer is not visible in it).
func TestTwoLayerAuditFindsAShortProviderLayer(t *testing.T) {
	short, err := policy.ProfileByName("anthropic-sdk")
	if err != nil {
		t.Fatal(err)
	}
	_, rpcLog, recs, wireLog := runTwoLayers(t, "omp-18", short.Settings, proxy.Script{Turns: append(overloaded(6), proxytest.OkTurn())})
	if len(recs) != 7 || count(rpcLog, "auto_retry_start") != 2 {
		t.Fatalf("%d requests, %d auto_retry_start; want 7 and 2", len(recs), count(rpcLog, "auto_retry_start"))
	}
	if fs, _ := auditRPC(t, "omp-18", rpcLog); len(fs) != 0 {
		t.Errorf("RPC log alone: %v, want clean", fs)
	}
	rpcFs, wireFs, attempts, _ := auditLayers(t, "omp-18", rpcLog, wireLog)
	if len(rpcFs) != 0 || len(wireFs) != 2 || wireFs[0].Rule != audit.WireNotRetried || wireFs[0].Line != 3 || wireFs[1].Line != 6 {
		t.Errorf("RPC %v, wire %v; want wire-not-retried at wire lines 3 and 6", rpcFs, wireFs)
	}
	if len(attempts) != 3 || attempts[0].Requests != 3 || attempts[1].Requests != 3 || attempts[2].Requests != 1 {
		t.Errorf("attempts %+v, want 3, 3 and 1 requests", attempts)
	}
}

// measuredVector is what the real agent did in the recorded run dir: the
// requests of each session attempt (the two logs audited together) and
// its auto_retry_start lines.
func measuredVector(t *testing.T, dir string) (requests []int, starts int) {
	t.Helper()
	rpcLog, err := os.ReadFile(filepath.Join(dir, "rpc.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wireLog, err := os.ReadFile(filepath.Join(dir, "wire.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, attempts, _ := auditLayersWith(t, "omp-18", rpcLog, wireLog, audit.WireOptions{Slack: 500 * time.Millisecond})
	for _, at := range attempts {
		requests = append(requests, at.Requests)
	}
	if len(requests) == 0 {
		t.Fatalf("%s: no session attempt", dir)
	}
	return requests, count(rpcLog, "auto_retry_start")
}

// auditRPC audits an RPC log alone.
func auditRPC(t *testing.T, profile string, log []byte) ([]audit.Finding, audit.Summary) {
	t.Helper()
	a, err := audit.New(audit.Options{Profile: profile})
	if err != nil {
		t.Fatal(err)
	}
	var fs []audit.Finding
	sum, err := a.Audit(bytes.NewReader(log), func(f audit.Finding) { fs = append(fs, f) })
	if err != nil {
		t.Fatal(err)
	}
	return fs, sum
}
