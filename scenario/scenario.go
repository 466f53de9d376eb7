package scenario

import (
	"encoding/json"
	"time"

	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// Limits of the scenario loader.
const (
	// maxSize is the largest scenario file accepted, in bytes.
	maxSize = 1 << 20
	// maxEntries is the largest number of turns, and of actions,
	// one scenario may list.
	maxEntries = 10000
	// maxValueDepth bounds the nesting of values inside expected events.
	maxValueDepth = 64
)

// Scenario defaults (see the conformance README).
const (
	defaultVariant       = "sound"
	defaultContextWindow = session.DefaultContextWindow
	defaultPrompt        = "hello"
	defaultEpochMs       = session.DefaultEpochMs
	defaultProvider      = session.DefaultProvider
	defaultModelID       = session.DefaultModel
	defaultBaseURL       = session.DefaultBaseURL
	defaultSessionID     = session.DefaultSessionID
	defaultSeed          = int64(1)
)

// Scenario is one scenario file, defaults applied.
type Scenario struct {
	Path        string // file it was loaded from ("" for Parse without a name)
	Name        string // "name" (default: file base name without extension)
	Description string // "description"
	Variant     string // "variant": "sound" | "original"; default "sound" (SetVariant changes it)
	// Profile is "profile": the policy profile (policy.Profiles) whose
	// settings the file's "settings" are merged over; default
	// policy.DefaultProfile, the only one variant "original" allows.
	// SetProfile changes it.
	Profile string
	// Settings are the effective retry settings: Profile's settings with
	// SettingsPatch merged over them key by key, nested objects too
	// (policy.Settings.Apply), checked by compiling them (Policy gives
	// the result).
	Settings policy.Settings
	// SettingsPatch is the file's "settings" mapping as a JSON object, its
	// keys in file order, as the file wrote them; nil when the file has none
	// (or null). SetProfile merges it over another profile's settings.
	SettingsPatch json.RawMessage
	ContextWindow int64      // "contextWindow", default 200000; 0 turns the usage rule off
	Compaction    Compaction // "compaction": {enabled, succeed}, defaults true/true
	InitialPrompt bool       // "initialPrompt", default true
	Prompt        string     // "prompt", default "hello"
	EpochMs       int64      // "epochMs", default 1771200000000
	Provider      string     // "provider", default "anthropic"
	ModelID       string     // "modelId", default "claude-sonnet-4-5"
	BaseURL       string     // "baseUrl", default "https://api.anthropic.com"
	SessionID     string     // "sessionId", default "session-1"
	// Seed is "seed": a positive integer, default 1, the seed of the
	// simulated session's random draws (the jitter). 0, in a scenario built
	// in Go that sets none, stands for 1 (Format leaves it out).
	Seed int64
	// RandomFixed is "random: {fixed: U}", U in [0, 1): every draw is U,
	// whatever Seed. It means something only when HasRandomFixed is true.
	RandomFixed float64
	// HasRandomFixed reports whether the file gives "random: {fixed: U}".
	HasRandomFixed bool
	Turns          []Turn   // "turns"
	Actions        []Action // "actions"
	Expect         *Expect  // "expect"; nil when absent

	src *fileSource // where profile, variant and settings are in the file; nil when none is
	// pol is Settings as the loader compiled them (Policy); nil for a
	// scenario built in Go.
	pol *policy.Policy
}

// Compaction configures the overflow-compaction stub.
type Compaction struct{ Enabled, Succeed bool }

// Usage is a turn's scripted usage (the "usage" key).
type Usage struct {
	Input     int64 // "input"
	CacheRead int64 // "cacheRead"
}

// Turn is one scripted model reply.
type Turn struct {
	StopReason   policy.StopReason // "stopReason", required: stop|length|toolUse|error|aborted
	ErrorMessage string            // "errorMessage"
	Usage        Usage             // "usage": {input, cacheRead}, non-negative integers
	SwitchModel  bool              // "switchModel", default false
	Duration     time.Duration     // "durationMs", default 0, non-negative integer ms
	// Status is "status": the HTTP status of the reply's response, an
	// integer from 100 to 599; 0 when not given (unknown).
	Status int
	// Headers is "headers": the response's headers, by lower-case name
	// (policy.AssistantMessage.ValidateHTTP), values strings; nil when not
	// given or empty.
	Headers map[string]string
	Pos     Pos
}

// Reply is the assistant message the turn scripts, its Status and Headers
// included (Headers is the turn's map, not a copy: do not modify it).
func (t *Turn) Reply() policy.AssistantMessage {
	return policy.AssistantMessage{StopReason: t.StopReason, ErrorMessage: t.ErrorMessage, InputTokens: t.Usage.Input, CacheReadTokens: t.Usage.CacheRead,
		Status: t.Status, Headers: t.Headers}
}

// Action is one scripted client command at a virtual time: a command of
// session's table (session.Commands), its arguments held by their kind.
type Action struct {
	At      time.Duration // "at": required, ms, non-negative integer
	Do      string        // "do": the command's name
	ID      string        // "id", optional
	Enabled *bool         // an ArgBool argument ("enabled": set_auto_retry, set_auto_compaction): required
	Message string        // an ArgText argument ("message": prompt), default ""
	// Settings is an ArgSettings argument ("settings": set_retry_settings),
	// required: a JSON object of retry settings, merged over those in force
	// when the action runs and validated then.
	Settings json.RawMessage
	Pos      Pos
}

// Expect is the expectation part of a scenario.
type Expect struct {
	Events []ExpectEvent // "events": ordered list of objects
	Final  *ExpectFinal  // "final"
}

// ExpectEvent is a partial trace line: each listed field must equal the trace line's field.
type ExpectEvent struct {
	Fields map[string]any // values normalised to JSON types: string, float64, bool, nil, []any, map[string]any
	Keys   []string       // the field names in file order (for printing)
	Pos    Pos
}

// ExpectFinal is the expected final state of the session.
type ExpectFinal struct {
	State             *string // one of idle|backoff|continuing|exhausted|cancelled
	Attempt           *int
	IsRetrying        *bool
	UnresolvedPrompts []int // nil when absent; non-nil (possibly empty) when given
	HasUnresolved     bool  // true when "unresolvedPrompts" was given
	Pos               Pos
}

// Pos is a position in a scenario file. Line and Column are 1-based; 0
// means unknown.
type Pos struct {
	File         string
	Line, Column int
}

// String gives "file:line:col"; the file is omitted when empty, the column
// when unknown, and line and column when the line is unknown.
func (p Pos) String() string { return strictfile.Pos(p).String() }

// Error is every validation/parse error: where and what.
type Error struct {
	Pos   Pos
	Field string // path like "turns[2].stopReason"; "" for the whole file; keys from the file escaped (termsafe.Text), those over 64 bytes shortened
	Msg   string // what is wrong and what is allowed
	Err   error  // underlying error, if any (I/O, *policy.SettingsError)
}

// Error gives "file:3:14: turns[2].stopReason: unknown value ...", leaving
// out the parts that are empty.
func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = "invalid scenario"
	}
	// File names and scenario text are printed escaped (termsafe.Text): an
	// error is always one line and cannot send the terminal escape codes.
	return termsafe.Text((&strictfile.Error{Pos: strictfile.Pos(e.Pos), Field: e.Field, Msg: msg}).Error())
}

// Unwrap returns the underlying error (an I/O error or a
// *policy.SettingsError), or nil.
func (e *Error) Unwrap() error { return e.Err }
