package provider_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/provider"
	"github.com/ohmypi/retryfsm/wire"
)

// TestAnswerRenderings: one answer, two renderings: the agent's message
// (the SDKs' "STATUS BODY HINT") and each API's HTTP answer.
func TestAnswerRenderings(t *testing.T) {
	a := provider.Answer{Stop: policy.StopReasonError, Status: 429, Message: "Slow down", Hint: "Please try again in 2s.", Headers: map[string]string{"retry-after": "2"}}
	m := a.AgentMessage()
	if m.ErrorMessage != `429 {"type":"error","error":{"type":"rate_limit_error","message":"Slow down"}} Please try again in 2s.` || m.Status != 429 || m.Headers["retry-after"] != "2" {
		t.Errorf("agent message %+v", m)
	}
	for api, want := range map[wire.API]string{
		wire.Anthropic:  `{"type":"error","error":{"type":"rate_limit_error","message":"Slow down. Please try again in 2s."},"request_id":"req_retrysim000007"}`,
		wire.OpenAIChat: `{"error":{"message":"Slow down. Please try again in 2s.","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`,
	} {
		res := a.HTTP(provider.Request{API: api, Seq: 7})
		if res.Status != 429 || string(res.Body) != want || res.ErrorType != "rate_limit_error" || res.Events != nil {
			t.Errorf("%s: %d %s %q", api, res.Status, res.Body, res.ErrorType)
		}
		if h := res.Header; len(h) != 4 || h[0] != [2]string{"retry-after", "2"} || h[3][0] != "content-length" {
			t.Errorf("%s: headers %q, want the answer's then the id, type and length", api, h)
		}
	}
	if m := (provider.Answer{Stop: policy.StopReasonError, Status: 503, Message: "Service Unavailable", Plain: true}).AgentMessage(); m.ErrorMessage != "503 Service Unavailable" {
		t.Errorf("plain: %q", m.ErrorMessage)
	}
	conn := provider.Answer{Stop: policy.StopReasonError}
	if m := conn.AgentMessage(); m.ErrorMessage != provider.Connection || m.Status != 0 || !conn.Dropped() {
		t.Errorf("connection error: %+v, dropped %v", m, conn.Dropped())
	}
	if res := conn.HTTP(provider.Request{API: wire.Anthropic}); res.Status != 0 || res.Body != nil {
		t.Errorf("a dropped answer rendered as HTTP: %+v", res)
	}
	ok := provider.Answer{Stop: policy.StopReasonStop}
	res := ok.HTTP(provider.Request{API: wire.Anthropic, Stream: true, Text: "a b", Model: "m"})
	if res.Status != 200 || res.Body != nil || len(res.Events) != 8 || !strings.HasPrefix(string(res.Events[0]), "event: message_start\n") {
		t.Errorf("stream: %d, %d events", res.Status, len(res.Events))
	}
}
