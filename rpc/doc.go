// Package rpc serves the original agent's JSON lines RPC protocol over a
// simulated session (Serve, behind "retrysim rpc"), and is a Go client of
// that protocol (Start, NewClient).
//
// The protocol: commands are read one per line and handled one at a time;
// each gets one response
//
//	{"id"?, "type":"response", "command", "success", "data"? | "error"?}
//
// and the session's events are written as they happen, one object per
// line without an envelope: agent_start, message_end, agent_end,
// auto_retry_start, auto_retry_end, retry_fallback (with
// retry.fallback), auto_compaction_start, auto_compaction_end and
// prompt_resolved (with "t", the virtual time in ms, first when the server
// runs with virtual time). message_end carries the original's full
// assistant message and agent_end the run's messages (see Message).
//
// Commands: prompt {message} (streamingBehavior and images accepted;
// queueing is not simulated), abort, abort_retry, set_auto_retry
// {enabled}, set_retry_settings {settings} (retry settings merged key by
// key over those in force, nested objects too; SPEC §1),
// set_auto_compaction {enabled}, get_state, and advance {ms} (virtual time
// only). Every command may carry a string "id", echoed in its response.
package rpc

// State, in state.go, is generated from trace.SessionState's declaration.
//go:generate go test . -run TestStateGenerated -update
