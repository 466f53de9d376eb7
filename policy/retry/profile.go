package retry

import (
	"fmt"
	"strings"
	"time"
)

// Profile is a named bundle of retry settings reproducing another agent's
// or SDK's policy (SPEC.md §14, "Profiles"). A scenario's or a command's own
// settings merge key by key over its profile's.
type Profile struct {
	// Name is the profile's name, e.g. "omp-2026-06".
	Name string
	// Summary says in one line whose policy it is.
	Summary string
	// Source is where its parameters were read (repository@commit).
	Source string
	// Settings are the profile's retry settings.
	Settings Settings
	// Layer names the profile of the provider layer beneath this one ("":
	// none): an agent whose every model call is first retried by its
	// provider code, which the agent's session layer sees only when that
	// layer gives up (SPEC.md §14.11). The fleet runs it as its SDK layer;
	// an audit of an RPC log alone cannot see it.
	Layer string

	pol *Policy // Settings compiled, for the profiles of the table
}

// Policy returns the profile's settings compiled (Compile). For a profile
// of Profiles or ProfileByName it is the table's settings, compiled once
// when the package starts: changing p.Settings does not change it (compile
// changed settings with Compile).
func (p Profile) Policy() (*Policy, error) {
	if p.pol != nil {
		return p.pol, nil
	}
	return Compile(p.Settings)
}

// compiledProfiles compiles each profile of the table once; a profile whose
// settings do not compile is a bug of the table (TestProfiles).
func compiledProfiles(ps []Profile) []Profile {
	for i := range ps {
		ps[i].pol = MustCompile(ps[i].Settings)
	}
	return ps
}

// The pattern lists of the profiles whose classifier is not the original's
// regex. Each is the upstream list as read in source (SPEC.md §14 gives
// the origin of each and where the lists cannot say what upstream does).
var (
	// piRetryable is RETRYABLE_PROVIDER_ERROR_PATTERN and piLimits is
	// NON_RETRYABLE_PROVIDER_LIMIT_ERROR_PATTERN of earendil-works/pi@0cfc73e4
	// (packages/ai/src/utils/retry.ts), alternative by alternative.
	piRetryable = []string{
		"overloaded", "rate.?limit", "too many requests", "429", "500", "502", "503", "504", "524",
		"service.?unavailable", "server.?error", "internal.?error",
		"provider.?returned.?error", "exceeded request buffer limit while retrying upstream",
		"network.?error", "connection.?error", "connection.?refused", "connection.?lost", "other side closed",
		"fetch failed", "getaddrinfo", "ENOTFOUND", "EAI_AGAIN", "upstream.?connect", "reset before headers",
		"socket hang up", "socket connection was closed", "timed? out", "timeout", "terminated",
		"websocket.?closed", "websocket.?error",
		"ended without", "stream ended before message_stop", "stream ended before a terminal response event",
		"http2 request did not get a response",
		"retry delay",
		"you can retry your request", "try your request again", "please retry your request",
		"ResourceExhausted",
	}
	piLimits = []string{
		"GoUsageLimitError", "FreeUsageLimitError", "Monthly usage limit reached", "available balance",
		"insufficient_quota", "out of budget", "quota exceeded", "billing",
	}

	// codexRetryable and codexFatal: Codex retries every error of its turn
	// loop except a list of kinds (openai/codex@edb4efee core/src/error.rs);
	// these are the kinds that show in a message: QuotaExceeded
	// (insufficient_quota, whose message is OpenAI's "You exceeded your
	// current quota ..."), UsageNotIncluded, UsageLimitReached and
	// RateLimited (an HTTP 429; retry_429 is false).
	codexRetryable = []string{"."}
	codexFatal     = []string{
		"insufficient_quota", "exceeded your current quota", "usage_not_included", "usage.?limit",
		"(^|[^0-9])429([^0-9]|$)", "too many requests",
	}

	// geminiRetryable are the network codes and the fetch texts
	// (retryFetchErrors, default true) that Gemini CLI's retryWithBackoff
	// retries beyond the status rule; geminiTerminal are its
	// terminal quota errors (daily quotas, a zero limit, QUOTA_EXHAUSTED, no
	// G1 credits), as they show in a message (google-gemini/gemini-cli@5411f113,
	// packages/core/src/utils/retry.ts and googleQuotaErrors.ts).
	geminiRetryable = []string{
		"ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED",
		"ERR_SSL_WRONG_VERSION_NUMBER", "EPROTO", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT",
		"UND_ERR_CONNECT_TIMEOUT", "ERR_STREAM_PREMATURE_CLOSE", "ERR_SSL_.*BAD_RECORD_MAC",
		"fetch failed", "incomplete json segment",
	}
	geminiTerminal = []string{
		"per ?day", "daily", "QUOTA_EXHAUSTED", "INSUFFICIENT_G1_CREDITS_BALANCE", "limit: 0([^0-9]|$)",
	}

	// opencodeRetryable: opencode retries an error whose message is a JSON
	// object (SessionRetry.retryable, anomalyco/opencode@0266548a) and a
	// connection reset, which its fromError makes a retryable APIError
	// ("Connection reset by server", code ECONNRESET).
	opencodeRetryable = []string{`^\s*\{[\s\S]*\}\s*$`, "ECONNRESET", "Connection reset by server"}

	// aiderRetryable and aiderFatal are the litellm exception classes of
	// Aider's exceptions.py (Aider-AI/aider@5dc9490b) with retry True and
	// False, as litellm names them in its messages ("litellm.RateLimitError:
	// ..."), and its two exceptions to a retried class: an APIError about
	// insufficient credits with code 402, and the boto3 hint.
	aiderRetryable = []string{
		`\b(APIConnectionError|APIError|APIResponseValidationError|AzureOpenAIError|BadGatewayError|` +
			`BudgetExceededError|ContentPolicyViolationError|InternalServerError|InvalidRequestError|` +
			`JSONSchemaValidationError|OpenAIError|RateLimitError|RouterRateLimitError|ServiceUnavailableError|` +
			`UnprocessableEntityError|UnsupportedParamsError|Timeout)\b`,
	}
	aiderFatal = []string{
		`\b(AuthenticationError|BadRequestError|ContextWindowExceededError|ImageFetchError|NotFoundError|PermissionDeniedError)\b`,
		`insufficient credits[\s\S]*"code":\s*402|"code":\s*402[\s\S]*insufficient credits`,
		"boto3",
	}

	// stainlessRetryable: the Stainless SDKs (Anthropic, OpenAI) retry a
	// timeout, whose error says "Request timed out." (a connection error,
	// "Connection error.", is in the original's regex already).
	stainlessRetryable = []string{"request timed out"}
)

// profiles lists every profile, the default first. SPEC.md §14 has one
// table per profile with the origin of each value.
var profiles = compiledProfiles([]Profile{
	{Name: DefaultProfile, Summary: "oh-my-pi, February 2026 (the original; the default)", Source: "xtxk110/oh-my-pi@63ec7b6",
		Settings: DefaultSettings()},
	{Name: "omp-2026-06",
		Summary: "oh-my-pi, June 2026: 10 retries from 500 ms, 8 s cap, 25 % downward jitter, hints as a floor, 5-minute fail-fast",
		Source:  "xtxk110/oh-my-pi@ca9f2847e",
		Settings: Settings{Enabled: true, MaxRetries: 10, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
			Jitter:     Jitter{Mode: JitterDown, Ratio: 0.25},
			RetryAfter: RetryAfter{Use: HintFloor, MaxWait: 300 * time.Second}}},
	{Name: "pi",
		Summary: "pi: 3 retries from 2 s, no cap, no jitter, hints unused; quota and billing errors not retried",
		Source:  "badlogic/pi-mono@83378aad, earendil-works/pi@0cfc73e4",
		Settings: Settings{Enabled: true, MaxRetries: 3, BaseDelay: 2 * time.Second,
			RetryablePatterns: piRetryable, NonRetryablePatterns: piLimits}},
	{Name: "codex",
		Summary: "Codex CLI turn loop: 5 retries from 200 ms, no cap, ±10 % jitter, an in-stream hint replaces the backoff, 429 never retried",
		Source:  "openai/codex@0a7fb0d7",
		Settings: Settings{Enabled: true, MaxRetries: 5, BaseDelay: 200 * time.Millisecond,
			Jitter: Jitter{Mode: JitterUpDown, Ratio: 0.1}, RetryAfter: RetryAfter{Use: HintReplace},
			RetryablePatterns: codexRetryable, NonRetryablePatterns: codexFatal}},
	{Name: "gemini-cli",
		Summary: "Gemini CLI: 9 retries from 5 s, 30 s cap, ±30 % jitter, hints as a floor, over 300 s terminal",
		Source:  "google-gemini/gemini-cli@5411f113",
		Settings: Settings{Enabled: true, MaxRetries: 9, BaseDelay: 5 * time.Second, MaxBackoff: 30 * time.Second,
			Jitter:     Jitter{Mode: JitterUpDown, Ratio: 0.3},
			RetryAfter: RetryAfter{Use: HintFloor, MaxWait: 300 * time.Second}, Classify: ClassifyStatus,
			RetryablePatterns: geminiRetryable, NonRetryablePatterns: geminiTerminal}},
	{Name: "opencode",
		Summary: "opencode v1.18: 5 retries from 2 s, 30 s cap, no jitter, hints replace the backoff (no bound)",
		Source:  "anomalyco/opencode@0266548a",
		Settings: Settings{Enabled: true, MaxRetries: 5, BaseDelay: 2 * time.Second, MaxBackoff: 30 * time.Second,
			RetryAfter: RetryAfter{Use: HintReplace}, Classify: ClassifyStatus, RetryablePatterns: opencodeRetryable}},
	{Name: "aider",
		Summary: "Aider: 8 retries from 250 ms (doubling to 32 s), no jitter, hints ignored, litellm's exception classes",
		Source:  "Aider-AI/aider@5dc9490b",
		Settings: Settings{Enabled: true, MaxRetries: 8, BaseDelay: 250 * time.Millisecond,
			RetryablePatterns: aiderRetryable, NonRetryablePatterns: aiderFatal}},
	{Name: "anthropic-sdk",
		Summary:  "Anthropic TypeScript SDK (@anthropic-ai/sdk 1.15.0): 2 retries from 500 ms, 8 s cap, 25 % downward jitter, hints replace (no bound)",
		Source:   "anthropics/anthropic-sdk-typescript@bfa9197f",
		Settings: stainless(RetryAfter{Use: HintReplace})},
	{Name: "openai-sdk",
		Summary:  "OpenAI Node SDK openai@6.49.0: 2 retries from 500 ms, 8 s cap, 25 % downward jitter, hints replace (no bound)",
		Source:   "openai/openai-node@7b7d6ca7; openai@6.49.0 measured through retrysim proxy",
		Settings: stainless(RetryAfter{Use: HintReplace})},
	{Name: "anthropic-sdk-go",
		Summary:  "Anthropic Go SDK v2.15.0: 2 retries from 500 ms, 8 s cap, 25 % downward jitter, hints replace (no bound, below 0 at once)",
		Source:   "anthropics/anthropic-sdk-go@v2.15.0",
		Settings: stainless(RetryAfter{Use: HintReplace})},
	{Name: "openai-sdk-go",
		Summary:  "OpenAI Go SDK v3.98.0: 2 retries from 500 ms, 8 s cap, 25 % downward jitter, hints replace; a hint over 120 s is not waited (the error is returned)",
		Source:   "openai/openai-go@v3.98.0",
		Settings: stainless(RetryAfter{Use: HintReplace, MaxWait: 120 * time.Second})},
	{Name: "omp-18",
		Summary: "oh-my-pi 18.3.4: the session layer as omp-2026-06 over the provider layer pi-ai-anthropic (11 requests per model call)",
		Source:  "@oh-my-pi/pi-coding-agent@18.3.4 (observed on the wire; issue 24)",
		Settings: Settings{Enabled: true, MaxRetries: 10, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
			Jitter:     Jitter{Mode: JitterDown, Ratio: 0.25},
			RetryAfter: RetryAfter{Use: HintFloor, MaxWait: 300 * time.Second}},
		Layer: "pi-ai-anthropic"},
	{Name: "pi-ai-anthropic",
		Summary: "pi-ai's Anthropic provider (oh-my-pi 18.3.4's provider layer): 10 retries from 500 ms, 8 s cap, 25 % downward jitter, hints as a floor; a wait over 300 s is not waited (the error goes to the session layer)",
		Source:  "@oh-my-pi/pi-ai, as @oh-my-pi/pi-coding-agent@18.3.4 runs it (measured through retrysim proxy, audit/testdata/realagent; its maxRetryDelayMs is the agent's retry.maxDelayMs, 300 s)",
		Settings: Settings{Enabled: true, MaxRetries: 10, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
			Jitter:     Jitter{Mode: JitterDown, Ratio: 0.25},
			RetryAfter: RetryAfter{Use: HintFloor, MaxWait: 300 * time.Second}, Classify: ClassifyStatus,
			RetryablePatterns: stainlessRetryable}},
})

// Profiles returns every profile, the default first (copies).
func Profiles() []Profile {
	out := make([]Profile, len(profiles))
	for i, p := range profiles {
		p.Settings = p.Settings.Clone()
		out[i] = p
	}
	return out
}

// ProfileByName returns the profile called name ("" is the default).
func ProfileByName(name string) (Profile, error) {
	if name == "" {
		name = DefaultProfile
	}
	for _, p := range profiles {
		if p.Name == name {
			p.Settings = p.Settings.Clone()
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("unknown profile %q (allowed: %s)", name, strings.Join(ProfileNames(), ", "))
}

// Resolve returns the variant called variant ("" is sound) and the profile
// called profile ("" is DefaultProfile), and checks that they go together:
// the original variant has no policy but the original's, so it takes only
// DefaultProfile (a *PairError otherwise). An unknown name is
// VariantByName's or ProfileByName's error. Every command, scenario file
// and flag pairs the two through it.
func Resolve(variant, profile string) (*Variant, Profile, error) {
	v, err := VariantByName(variant)
	if err != nil {
		return nil, Profile{}, err
	}
	p, err := ProfileByName(profile)
	if err != nil {
		return nil, Profile{}, err
	}
	if v != Sound() && p.Name != DefaultProfile {
		return nil, Profile{}, &PairError{Variant: v.Name, Profile: p.Name}
	}
	return v, p, nil
}

// PairError says that a variant does not take a profile (Resolve).
type PairError struct{ Variant, Profile string }

// Error implements error.
func (e *PairError) Error() string {
	return fmt.Sprintf("variant %s allows only profile %s, not %s (the %s variant has no other policy; use variant sound)",
		e.Variant, DefaultProfile, e.Profile, e.Variant)
}

// ProfileNames lists the profiles' names, the default first.
func ProfileNames() []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return names
}

// stainless are the retry settings the Stainless-generated SDKs share
// (Anthropic's and OpenAI's, in TypeScript and Go): 2 retries from 500 ms,
// an 8 s cap, 25 % downward jitter, classified by status; they differ in
// how they read retry-after hints (ra).
func stainless(ra RetryAfter) Settings {
	return Settings{Enabled: true, MaxRetries: 2, BaseDelay: 500 * time.Millisecond, MaxBackoff: 8 * time.Second,
		Jitter: Jitter{Mode: JitterDown, Ratio: 0.25}, RetryAfter: ra, Classify: ClassifyStatus,
		RetryablePatterns: stainlessRetryable}
}
