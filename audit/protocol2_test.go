package audit_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/rpc"
)

// newerAbortRetryLog is oh-my-pi 18.3.4's RPC log as issue 24 describes
// it: the newer protocol's ready line, turn and message events, errorId,
// errorStatus, completedAt and duration; two session-layer retries
// (delayMs 445.5 and 926.2, unrounded), abort_retry during attempt 2's
// wait, then auto_retry_end, agent_end, prompt_result{status:error} and
// session_settled; an extension UI request and a command list between.
const newerAbortRetryLog = `{"type":"ready","protocolVersion":2,"supportedProtocolVersions":[1,2],"maxFrameBytes":16777216,"agent":"omp","version":"18.3.4"}
{"type":"available_commands_update","commands":[{"name":"compact"}]}
{"id":"p1","type":"response","command":"prompt","success":true}
{"type":"agent_start","timestamp":1771200000000}
{"type":"turn_start","timestamp":1771200000000}
{"type":"message_start","message":{"role":"assistant"},"timestamp":1771200000001}
{"type":"message_update","message":{"role":"assistant"},"assistantMessageEvent":{"type":"error"},"timestamp":1771200048000}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","errorStatus":529,"completedAt":1771200048100,"duration":48099},"timestamp":1771200048100}
{"type":"turn_end","timestamp":1771200048100}
{"type":"agent_end","messages":[],"timestamp":1771200048101}
{"type":"auto_retry_start","attempt":1,"maxAttempts":10,"delayMs":445.5,"errorMessage":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","errorId":"err-1","timestamp":1771200048102}
{"type":"agent_start","timestamp":1771200048548}
{"type":"turn_start","timestamp":1771200048548}
{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","errorStatus":529,"completedAt":1771200096600,"duration":48052},"timestamp":1771200096600}
{"type":"turn_end","timestamp":1771200096600}
{"type":"agent_end","messages":[],"timestamp":1771200096601}
{"type":"auto_retry_start","attempt":2,"maxAttempts":10,"delayMs":926.2,"errorMessage":"529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}","errorId":"err-2","timestamp":1771200096602}
{"type":"extension_ui_request","id":"ui-1","method":"notify","message":"retrying"}
{"id":"a1","type":"response","command":"abort_retry","success":true}
{"type":"auto_retry_end","success":false,"attempt":2,"finalError":"Retry cancelled","timestamp":1771200096900}
{"type":"agent_end","messages":[],"timestamp":1771200096901}
{"type":"prompt_result","id":"p1","agentInvoked":true,"status":"error","sessionSettled":true,"error":"Retry cancelled","timestamp":1771200096902}
{"type":"session_settled","timestamp":1771200096903}
`

// TestNewerProtocolLog: the newer protocol's log is read without a
// finding of its own: clean under omp-2026-06 and omp-18 (the provider
// layer said not visible), flagged delay at both retries under the
// default; the protocol version comes from the ready line; the new event
// types are skipped, the lines that resolve a prompt read.
func TestNewerProtocolLog(t *testing.T) {
	log := []byte(newerAbortRetryLog)
	fs, sum := auditLog(t, log, audit.Options{Profile: "omp-2026-06"})
	if len(fs) != 0 {
		t.Fatalf("omp-2026-06: %v\n%s", fs, numbered(log))
	}
	// ready, response x2, agent_start x2, message_end x2, agent_end x3,
	// auto_retry_start x2, auto_retry_end, prompt_result, session_settled
	if sum.Protocol != 2 || sum.Lines != 23 || sum.Events != 15 || sum.Skipped != 8 || sum.Chains != 1 || sum.Retries != 2 || sum.ProviderLayer != "" {
		t.Errorf("omp-2026-06 summary %+v", sum)
	}
	fs, sum = auditLog(t, log, audit.Options{Profile: "omp-18"})
	if len(fs) != 0 || sum.ProviderLayer != audit.ProviderLayerNotVisible || sum.Protocol != 2 {
		t.Errorf("omp-18: %v, %+v; want clean, provider layer not visible", fs, sum)
	}
	checkFindings(t, log, audit.Options{}, finding{11, audit.Delay}, finding{17, audit.Delay})
}

// TestNewerProtocolBadLines: the lines the audit reads are checked: a
// prompt_result's status is ok or error, a protocolVersion a whole
// number.
func TestNewerProtocolBadLines(t *testing.T) {
	for _, tc := range []struct{ line, reason string }{
		{`{"type":"prompt_result","id":"p1","status":"maybe"}`, `prompt_result: status = "maybe" (allowed: completed, error, aborted, ok)`},
		{`{"type":"prompt_result","id":"p1","status":1}`, `prompt_result: status is a number (allowed: a string)`},
		{`{"type":"ready","protocolVersion":"2"}`, `ready: protocolVersion is a JSON string (allowed: a number)`},
		{`{"type":"ready","protocolVersion":2.5}`, `ready: protocolVersion = 2.5 is not a whole number from 0`},
	} {
		fs, sum := auditLog(t, []byte(tc.line+"\n"), audit.Options{Profile: "omp-18"})
		if len(fs) != 1 || fs[0].Rule != audit.BadEvent || !strings.Contains(fs[0].Reason, tc.reason) || sum.Bad != 1 || sum.Protocol != 0 {
			t.Errorf("%s: %v, %+v; want one bad-event saying %q", tc.line, fs, sum, tc.reason)
		}
	}
}

// TestProviderLayerNotVisible: under a profile with a provider layer, a
// log with no auto_retry_* event (529, 529, OK absorbed by the provider
// layer) is clean but says the layer was not visible; under a profile
// without one it is plainly clean.
func TestProviderLayerNotVisible(t *testing.T) {
	log := []byte(`{"type":"ready","protocolVersion":2}
{"id":"p1","type":"response","command":"prompt","success":true}
{"type":"agent_start","timestamp":1771200000000}
{"type":"message_end","message":{"role":"assistant","stopReason":"stop","completedAt":1771200001600,"duration":1600},"timestamp":1771200001600}
{"type":"agent_end","messages":[],"timestamp":1771200001601}
{"type":"prompt_result","id":"p1","agentInvoked":true,"status":"ok","sessionSettled":true}
{"type":"session_settled"}
`)
	for profile, want := range map[string]string{"omp-18": audit.ProviderLayerNotVisible, "omp-2026-06": "", "": ""} {
		fs, sum := auditLog(t, log, audit.Options{Profile: profile})
		if len(fs) != 0 || sum.ProviderLayer != want || sum.Chains != 0 || sum.Events != 7 {
			t.Errorf("%q: %v, %+v; want clean, provider layer %q", profile, fs, sum, want)
		}
	}
}

// TestServedProtocol2LogIsRead: the log retrysim rpc --protocol 2 writes
// (the abort_retry example of issue 24, under omp-18) is read as the
// agent's: clean under omp-18 with protocol 2 reported and the provider
// layer not visible, delay at both retries under the default.
func TestServedProtocol2LogIsRead(t *testing.T) {
	sc := loadScenario(t, filepath.Join(scenariosDir, "profiles", "omp-18", "abort-retry-during-attempt-2-wait.yaml"))
	in := `{"id":"p1","type":"prompt","message":"hi"}` + "\n" + `{"type":"advance","ms":600}` + "\n" + `{"id":"r1","type":"abort_retry"}` + "\n"
	var out bytes.Buffer
	if err := rpc.Serve(context.Background(), strings.NewReader(in), &out, rpc.Options{Scenario: sc, Virtual: true, Protocol: 2}); err != nil {
		t.Fatal(err)
	}
	log := out.Bytes()
	fs, sum := auditLog(t, log, audit.Options{Profile: "omp-18"})
	if len(fs) != 0 || sum.Protocol != 2 || sum.ProviderLayer != audit.ProviderLayerNotVisible || sum.Chains != 1 || sum.Retries != 2 || sum.Skipped != 0 {
		t.Errorf("omp-18: %v, %+v\n%s", fs, sum, numbered(log))
	}
	checkFindings(t, log, audit.Options{}, finding{lineOf(t, log, "auto_retry_start", 1), audit.Delay}, finding{lineOf(t, log, "auto_retry_start", 2), audit.Delay})
}
