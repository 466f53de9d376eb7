package provider

import (
	"encoding/json"
	"testing"

	"github.com/ohmypi/retryfsm/wire"
	"pgregory.net/rapid"
)

// anthropicJSON is the complete Messages API message as the struct that
// json.Marshal wrote (fields in the order it sorts a map's keys):
// anthropicBody's reference.
type anthropicJSON struct {
	Content      [1]anthropicContent `json:"content"`
	ID           string              `json:"id"`
	Model        string              `json:"model"`
	Role         string              `json:"role"`
	StopReason   string              `json:"stop_reason"`
	StopSequence *string             `json:"stop_sequence"`
	Type         string              `json:"type"`
	Usage        struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// anthropicContent is a text block ({text, type}) or a tool call ({id,
// input, name, type}).
type anthropicContent struct {
	ID    string    `json:"id,omitempty"`
	Input *struct{} `json:"input,omitempty"`
	Name  string    `json:"name,omitempty"`
	Text  *string   `json:"text,omitempty"`
	Type  string    `json:"type"`
}

// TestAnthropicBodyIsMarshal: anthropicBody appends json.Marshal's bytes
// of the message, for any model, text and tool name (arbitrary bytes,
// HTML characters, invalid UTF-8), stop kind, usage and request number.
func TestAnthropicBodyIsMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := func(name string) string { return string(rapid.SliceOf(rapid.Byte()).Draw(t, name)) }
		s := &success{api: wire.Anthropic, id: requestID(rapid.IntRange(-5, 1<<40).Draw(t, "seq")), model: str("model"),
			kind: rapid.SampledFrom([]string{"stop", "toolUse", "length"}).Draw(t, "kind"), text: str("text"), tool: str("tool"),
			input: rapid.IntRange(0, 1<<20).Draw(t, "input"), output: rapid.IntRange(0, 1<<20).Draw(t, "output")}
		m := anthropicJSON{ID: "msg_" + s.id, Model: s.model, Role: "assistant", StopReason: s.anthropicStop(), Type: "message"}
		m.Usage.InputTokens, m.Usage.OutputTokens = s.input, s.output
		if s.kind == "toolUse" {
			m.Content[0] = anthropicContent{ID: "toolu_" + s.id, Input: &struct{}{}, Name: s.toolName(), Type: "tool_use"}
		} else {
			m.Content[0] = anthropicContent{Text: &s.text, Type: "text"}
		}
		want, err := json.Marshal(&m)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.anthropicBody(); string(got) != string(want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}
