package provider_test

import (
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/provider"
	"github.com/ohmypi/retryfsm/wire"
)

// TestSuccessBodyBytes pins a JSON success answer's bytes for each stop
// kind, with a model and text that JSON escapes: the proxy's answers are
// byte for byte what they were however they are encoded.
func TestSuccessBodyBytes(t *testing.T) {
	req := provider.Request{API: wire.Anthropic, Model: `m<&>"x`, Text: "a <b> & \"c\"\n\u2028", Tool: "t&", Seq: 42, Now: 1700000000}
	for _, c := range []struct {
		stop policy.StopReason
		tok  int
		want string
	}{
		{policy.StopReasonStop, 0, `{"content":[{"text":"a \u003cb\u003e \u0026 \"c\"\n\u2028","type":"text"}],"id":"msg_retrysim000042","model":"m\u003c\u0026\u003e\"x","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message","usage":{"input_tokens":12,"output_tokens":8}}`},
		{policy.StopReasonToolUse, 0, `{"content":[{"id":"toolu_retrysim000042","input":{},"name":"t\u0026","type":"tool_use"}],"id":"msg_retrysim000042","model":"m\u003c\u0026\u003e\"x","role":"assistant","stop_reason":"tool_use","stop_sequence":null,"type":"message","usage":{"input_tokens":12,"output_tokens":8}}`},
		{policy.StopReasonLength, 99, `{"content":[{"text":"a \u003cb\u003e \u0026 \"c\"\n\u2028","type":"text"}],"id":"msg_retrysim000042","model":"m\u003c\u0026\u003e\"x","role":"assistant","stop_reason":"max_tokens","stop_sequence":null,"type":"message","usage":{"input_tokens":99,"output_tokens":8}}`},
	} {
		a := provider.Answer{Stop: c.stop, InputTokens: c.tok}
		res := a.HTTP(req)
		if string(res.Body) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.stop, res.Body, c.want)
		}
	}
}
