// Package proxy serves the providers' HTTP APIs (the Anthropic Messages
// API and the OpenAI Chat Completions and Responses APIs, JSON and
// server-sent events) answered from a script, so that a real client (an
// agent, an SDK, in any language) meets the provider's faults for real:
// a scenario file's turns become the provider's exact error responses or
// valid answers, and faults only a wire has (latency before the headers,
// a slow body, a stream cut after N events, an error event mid-stream, a
// dropped connection) are applied per request. With an upstream, what the
// script does not fault is forwarded to the real endpoint unchanged.
//
// Every request is written to a JSON-lines wire log (Record): the retry
// headers its client sent, the answer given and its timing, which
// audit.Auditor.AuditWire checks against a retry profile. The proxy
// decides no retries; it is the provider. SPEC.md §18 is the contract;
// "retrysim proxy" is the command.
package proxy
