// Package audit checks a real agent's RPC log against a retry policy
// (SPEC.md §16, "retrysim audit").
//
// A log is JSON Lines as `retrysim rpc` writes them, the original agent's
// protocol (SPEC.md §10): the events agent_start, message_end, agent_end,
// auto_retry_start, auto_retry_end, retry_fallback, auto_compaction_start,
// auto_compaction_end and prompt_resolved, and the command responses. A line
// may carry "t" (virtual milliseconds) or "timestamp" (epoch milliseconds).
// Other JSON lines are skipped and counted; a line that is not JSON is
// reported (rule bad-json) and skipped.
//
// An Auditor checks each retry chain of the log against a profile's
// settings (policy.ProfileByName), with the policy's own backoff,
// classifier and hint parser, and reports each Finding (a line, a Rule and a
// one-line reason) as soon as it is known. It streams: it keeps the state of
// the open chain and of the current run, never the log, so its memory is
// bounded by MaxLineSize whatever the log's length.
package audit
