package rpc

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ohmypi/retryfsm/session"
)

// The client's methods for session's commands: each one sends its row of
// session's command table (session.Commands) with its arguments, in the
// row's order, through command.

// SetAutoRetry sends set_auto_retry.
func (c *Client) SetAutoRetry(ctx context.Context, enabled bool) error {
	_, err := c.command(ctx, session.SetAutoRetry, enabled)
	return err
}

// SetAutoCompaction sends set_auto_compaction: whether a context overflow
// is handed to compaction (and continued after it) from now on.
func (c *Client) SetAutoCompaction(ctx context.Context, enabled bool) error {
	_, err := c.command(ctx, session.SetAutoCompaction, enabled)
	return err
}

// SetRetrySettings sends set_retry_settings: settings (a value that
// marshals to a JSON object of retry settings, such as a map or
// json.RawMessage) are merged key by key over those in force. An invalid
// setting is refused with an error naming it.
func (c *Client) SetRetrySettings(ctx context.Context, settings any) error {
	_, err := c.command(ctx, session.SetRetrySettings, settings)
	return err
}

// AbortRetry sends abort_retry. Whether a chain was cancelled is told by
// the auto_retry_end event that follows the response.
func (c *Client) AbortRetry(ctx context.Context) error {
	_, err := c.command(ctx, session.AbortRetry)
	return err
}

// Abort sends abort. Its response comes after the events it causes.
func (c *Client) Abort(ctx context.Context) error {
	_, err := c.command(ctx, session.Abort)
	return err
}

// GetState sends get_state.
func (c *Client) GetState(ctx context.Context) (State, error) {
	var st State
	resp, err := c.command(ctx, session.GetState)
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(resp.Data, &st); err != nil {
		return st, fmt.Errorf("rpc: get_state (id %s): bad data: %w", resp.ID, err)
	}
	return st, nil
}

// Prompt sends a prompt and returns its number, as soon as the server has
// accepted it; its completion is the prompt_resolved event with that
// number. A prompt rejected because the session is busy is a
// *ResponseError.
func (c *Client) Prompt(ctx context.Context, message string) (int, error) {
	resp, err := c.command(ctx, session.Prompt, message)
	if err != nil {
		return 0, err
	}
	var data struct {
		Prompt *int `json:"prompt"`
	}
	if err := json.Unmarshal(resp.Data, &data); err != nil || data.Prompt == nil {
		return 0, fmt.Errorf("rpc: prompt (id %s): response without a prompt number: %s", resp.ID, resp.Data)
	}
	return *data.Prompt, nil
}

// command sends the session command of kind k (Call): values are its first
// arguments, in its row's order.
func (c *Client) command(ctx context.Context, k session.EventKind, values ...any) (Response, error) {
	cmd, ok := session.CommandOf(k)
	if !ok || len(values) > len(cmd.Args) {
		return Response{}, fmt.Errorf("rpc: event kind %d with %d arguments is no command of session's table", k, len(values))
	}
	var fields map[string]any
	if len(values) > 0 {
		fields = make(map[string]any, len(values))
		for i, v := range values {
			fields[cmd.Args[i].Name] = v
		}
	}
	return c.Call(ctx, cmd.Name, fields)
}
