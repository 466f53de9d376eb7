package session

// The defaults of a simulated session's identity and environment, written
// once: a scenario file's defaults (scenario) and every fleet session
// (fleet) take them, so that a fleet session and a scenario write the same
// trace.
const (
	// DefaultProvider is Config.Provider's default (a scenario's "provider").
	DefaultProvider = "anthropic"
	// DefaultModel is Config.Model's default (a scenario's "modelId").
	DefaultModel = "claude-sonnet-4-5"
	// DefaultBaseURL is Config.BaseURL's default (a scenario's "baseUrl").
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultSessionID is Config.SessionID's default (a scenario's
	// "sessionId").
	DefaultSessionID = "session-1"
	// DefaultContextWindow is the model's context window, in tokens (a
	// scenario's "contextWindow"; a fleet's sessions, whose answers report
	// no usage, so only messages overflow).
	DefaultContextWindow = int64(200000)
	// DefaultEpochMs is the wall-clock time of a simulation's t=0
	// (2026-02-16T00:00:00Z), in Unix milliseconds, passed to
	// classification (a scenario's "epochMs").
	DefaultEpochMs = int64(1771200000000)
)
