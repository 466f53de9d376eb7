// Package adapters is the home of the provider SDK adapters, one package per
// SDK: adapters/anthropic (github.com/anthropics/anthropic-sdk-go/v2) and
// adapters/openai (github.com/openai/openai-go/v3). Each turns what a call
// through its SDK returned (a message, a stream's accumulated message and
// error, an error) into the policy.AssistantMessage that a policy.Controller
// classifies: stop reason, errorMessage, HTTP status, retry-relevant headers
// and the usage the overflow rule reads.
//
// # Layering
//
// The SDKs retry failed requests themselves (2 retries by default). Under a
// policy.Controller, which retries the whole run and reports each retry as
// an event, switch the SDK's retries off with option.WithMaxRetries(0), or
// the two multiply: with the Controller's 3 retries and the SDK's 2, a
// prompt can make 12 requests, and the Controller sees only the last
// error of each call. To keep an SDK's own policy, run the Controller with
// the SDK's profile ("anthropic-sdk", "openai-sdk") instead. The default
// profile ignores retry-after hints, as the original does; those two
// profiles (and "opencode", "codex", "omp-2026-06", "gemini-cli") honour
// them (each adapter's documentation says how).
//
// adapters/otel records a Controller's (or retryfsm.Do's) retry chains with
// the OpenTelemetry Go API: metrics and a span per chain.
//
// Package policy imports neither SDK (TestPolicyImportsNoSDK) nor
// OpenTelemetry (TestPolicyImportsNoOpenTelemetry): only a program that
// imports an adapter builds what it wraps.
package adapters
