package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/internal/testkit"
)

// TestOriginalRpcClient drives `retrysim rpc --mode rpc --provider
// --model` with a transcription of the original's RpcClient
// (testdata/rpcclient.js, run by node; skipped without node): its ids,
// its response matching and its event filter work unchanged, get_state
// has the original's fields and values, the retry events are written but
// filtered out as the original's client filters them.
func TestOriginalRpcClient(t *testing.T) {
	testkit.Need(t, testkit.JS, "node")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	sc := writeScenario(t, "name: node client\ninitialPrompt: false\nturns:\n"+
		"  - {stopReason: error, errorMessage: 529 overloaded_error}\n  - {stopReason: stop}\n")
	args, err := json.Marshal([]string{"rpc", "--mode", "rpc", "--provider", "anthropic", "--model", "claude-opus-4",
		"--virtual", "--scenario", sc})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/rpcclient.js", os.Args[0], "-test.run=^TestWatchHelperProcess$")
	cmd.Env = append(os.Environ(), watchHelperEnv+"="+string(args))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	type model struct{ ID, Provider, API string }
	type state struct {
		Model                                     *model
		ThinkingLevel                             string
		IsStreaming, IsCompacting                 bool
		SteeringMode, FollowUpMode, InterruptMode string
		SessionID                                 string
		AutoCompactionEnabled                     bool
		MessageCount, QueuedMessageCount          int
		AutoRetryEnabled, IsRetrying              bool
		RetryAttempt                              int
	}
	var got struct {
		Before, During, After, Disabled state
		Events, Raw                     []string
		Exit                            int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := model{ID: "claude-opus-4", Provider: "anthropic", API: "anthropic-messages"}
	if got.Before.Model == nil || *got.Before.Model != want {
		t.Errorf("model %+v, want %+v", got.Before.Model, want)
	}
	b := got.Before
	if b.ThinkingLevel != "off" || b.SteeringMode != "one-at-a-time" || b.FollowUpMode != "one-at-a-time" ||
		b.InterruptMode != "immediate" || b.IsStreaming || b.IsCompacting || b.SessionID == "" || !b.AutoCompactionEnabled {
		t.Errorf("get_state before the prompt: %+v", b)
	}
	if d := got.During; !d.IsStreaming || !d.IsRetrying || d.RetryAttempt != 1 || d.MessageCount != 1 {
		t.Errorf("get_state during the backoff: %+v", d)
	}
	if a := got.After; a.IsStreaming || a.IsRetrying || a.RetryAttempt != 0 {
		t.Errorf("get_state after the retry: %+v", a)
	}
	if got.Disabled.AutoRetryEnabled {
		t.Error("setAutoRetry(false) did not disable retry")
	}
	if wantEv := []string{"agent_start", "message_end", "agent_end", "agent_start", "message_end", "agent_end"}; !slices.Equal(got.Events, wantEv) {
		t.Errorf("listener events %q, want %q", got.Events, wantEv)
	}
	if !slices.Contains(got.Raw, "auto_retry_start") || !slices.Contains(got.Raw, "auto_retry_end") {
		t.Errorf("the retry events are not on the wire: %q", got.Raw)
	}
	if got.Exit != 0 {
		t.Errorf("retrysim rpc exited %d at end of input", got.Exit)
	}
}
