package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/rpc"
	"github.com/ohmypi/retryfsm/scenario"
)

// rpcCommand is one command line sent to the RPC server.
type rpcCommand struct {
	ID      string  `json:"id,omitempty"`
	Type    string  `json:"type"`
	Message *string `json:"message,omitempty"`
	Enabled *bool   `json:"enabled,omitempty"`
	Ms      *int64  `json:"ms,omitempty"`
}

// rpcLog is the log `retrysim rpc --virtual --variant VARIANT --scenario
// FILE` writes for scenario sc when it is sent the scenario's initial prompt
// and actions as commands at their times (advance in between): the session
// run in-process by rpc.Serve. variant "" keeps the scenario's.
func rpcLog(t *testing.T, sc *scenario.Scenario, variant string) []byte {
	t.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	send := func(c rpcCommand) {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	if sc.InitialPrompt {
		send(rpcCommand{ID: "p1", Type: "prompt", Message: &sc.Prompt})
	}
	actions := slices.Clone(sc.Actions)
	slices.SortStableFunc(actions, func(a, b scenario.Action) int { return int(a.At - b.At) })
	var now time.Duration
	for _, a := range actions {
		if a.At > now {
			ms := int64((a.At - now) / time.Millisecond)
			send(rpcCommand{Type: "advance", Ms: &ms})
			now = a.At
		}
		c := rpcCommand{ID: a.ID, Type: a.Do, Enabled: a.Enabled}
		if a.Do == "prompt" {
			c.Message = &a.Message
		}
		send(c)
	}
	var out bytes.Buffer
	if err := rpc.Serve(context.Background(), &in, &out, rpc.Options{Scenario: sc, Variant: variant, Virtual: true}); err != nil {
		t.Fatalf("%s: rpc.Serve: %v", sc.Name, err)
	}
	return out.Bytes()
}

// loadScenario loads a scenario file.
func loadScenario(t *testing.T, path string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// auditLog audits log under opt and returns its findings in the order
// reported.
func auditLog(t *testing.T, log []byte, opt audit.Options) ([]audit.Finding, audit.Summary) {
	t.Helper()
	a, err := audit.New(opt)
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

// numbered returns log with line numbers, for failure messages.
func numbered(log []byte) string {
	var b strings.Builder
	for i, l := range strings.Split(strings.TrimSuffix(string(log), "\n"), "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}
