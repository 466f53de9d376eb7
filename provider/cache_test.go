package provider_test

import (
	"reflect"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/provider"
	"github.com/ohmypi/retryfsm/wire"
	"pgregory.net/rapid"
)

// TestBodyCacheIsHTTP: through a BodyCache, request after request, every
// answer is Answer.HTTP's, byte for byte: the same model, text and stop
// again (a copy with the new id), or another (a new rendering), any API,
// streaming or not, an error, a tool call, a negative request number,
// ids of six digits and of seven (another Content-Length); and
// HTTPReusing's too, each given the last one's body, a Messages JSON
// success's body in that body's array when it is large enough.
func TestBodyCacheIsHTTP(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c provider.BodyCache
		var last []byte // the last answer's body, given back
		str := func(name string, usual ...string) string {
			if rapid.Bool().Draw(t, name+"?") {
				return rapid.SampledFrom(usual).Draw(t, name)
			}
			return string(rapid.SliceOf(rapid.Byte()).Draw(t, name))
		}
		for i := range rapid.IntRange(1, 8).Draw(t, "requests") {
			a := provider.Answer{Stop: rapid.SampledFrom([]policy.StopReason{policy.StopReasonStop, policy.StopReasonToolUse,
				policy.StopReasonLength, policy.StopReasonError}).Draw(t, "stop"), Status: 529, Message: "Overloaded",
				InputTokens: rapid.SampledFrom([]int{0, 0, 7}).Draw(t, "input")}
			req := provider.Request{API: rapid.SampledFrom([]wire.API{wire.Anthropic, wire.Anthropic, wire.OpenAIChat, wire.OpenAIResponses}).Draw(t, "api"),
				Model: str("model", "m", "claude-sonnet-4-5"), Text: str("text", "Hello.", "a <b>"), Tool: str("tool", "", "t"),
				Stream: rapid.IntRange(0, 4).Draw(t, "stream") == 0, Seq: rapid.OneOf(rapid.IntRange(-3, 20), rapid.IntRange(999_998, 1_000_001), rapid.IntRange(-3, 1<<30)).Draw(t, "seq"), Now: 1700000000 + int64(i)}
			want := a.HTTP(req)
			if got := c.HTTP(&a, req); !reflect.DeepEqual(got, want) {
				t.Fatalf("request %d:\n got %+v\nwant %+v", i, got, want)
			}
			got := c.HTTPReusing(&a, req, last)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("request %d, reusing a body of %d bytes:\n got %+v\nwant %+v", i, cap(last), got, want)
			}
			cached := req.API == wire.Anthropic && !req.Stream && a.Stop != policy.StopReasonError
			if cached && cap(last) >= len(got.Body) && &got.Body[:1][0] != &last[:1][0] {
				t.Fatalf("request %d: a body of %d bytes not copied into the %d bytes given", i, len(got.Body), cap(last))
			}
			if got.Body != nil {
				last = got.Body
			}
		}
	})
}

// TestBodyCacheLength: the same answer again with an id one digit longer
// or shorter (request 999999, then 1000000, then 5) is a copy of the
// cached body with its own Content-Length.
func TestBodyCacheLength(t *testing.T) {
	var c provider.BodyCache
	a := provider.Answer{Stop: policy.StopReasonStop}
	for _, seq := range []int{999_999, 1_000_000, 5, 1_000_001} {
		req := provider.Request{API: wire.Anthropic, Model: "m", Text: "Hello.", Seq: seq}
		if got, want := c.HTTP(&a, req), a.HTTP(req); !reflect.DeepEqual(got, want) {
			t.Fatalf("request %d:\n got %+v\nwant %+v", seq, got, want)
		}
	}
}
