package policy

import "github.com/ohmypi/retryfsm/policy/retry"

// The embedder's names of the retry policy's pure core (package
// policy/retry, which also holds the transition machinery the project's
// tools use: the tables, Decide, decisions and effects). Each is an alias,
// the same type as retry's: its fields and methods are documented there.

// Settings is the retry settings group (SPEC.md §1): enabled, maxRetries,
// baseDelayMs and the opt-in keys (backoffFactor, maxBackoffMs, jitter,
// retryAfter, classify, patterns, persistent, fallback), with its JSON
// form. Compile checks it once into a Policy. See retry.Settings.
type Settings = retry.Settings

// Jitter is Settings.Jitter: a mode (the Jitter* constants) and a ratio.
type Jitter = retry.Jitter

// RetryAfter is Settings.RetryAfter: how a provider's wait hint is used
// (the Hint* constants) and its bounds.
type RetryAfter = retry.RetryAfter

// SettingsError is what Compile (and Settings.Validate, Settings.Apply)
// report for settings out of range: the field, its value and what is
// allowed. Test for it with errors.As.
type SettingsError = retry.SettingsError

// DefaultSettings returns the original's settings: enabled, 3 retries from
// 2 s, doubling.
func DefaultSettings() Settings { return retry.DefaultSettings() }

// Policy is a Settings value checked once: read-only, shared freely, handed
// to the Controller (through its SettingsSource) and to retryfsm.Do. See
// retry.Policy.
type Policy = retry.Policy

// Compile checks s and returns it as a Policy holding its classifier; the
// error is a *SettingsError naming the field.
func Compile(s Settings) (*Policy, error) { return retry.Compile(s) }

// MustCompile is Compile for settings known to be valid; it panics on
// invalid ones.
func MustCompile(s Settings) *Policy { return retry.MustCompile(s) }

// DefaultPolicy returns the Policy of DefaultSettings (one shared value).
func DefaultPolicy() *Policy { return retry.DefaultPolicy() }

// Profile is a named bundle of retry settings reproducing another agent's
// or SDK's policy (SPEC.md §14); Profile.Policy gives it compiled. See
// retry.Profile.
type Profile = retry.Profile

// Profiles returns every profile, the default (DefaultProfile) first.
func Profiles() []Profile { return retry.Profiles() }

// ProfileByName returns the profile called name ("" is DefaultProfile).
func ProfileByName(name string) (Profile, error) { return retry.ProfileByName(name) }

// Event is a retry event as subscribers receive it: AutoRetryStart,
// AutoRetryEnd or RetryFallback, each writing the original's exact JSON.
type Event = retry.Event

// AutoRetryStart is emitted when a retry is scheduled, before its wait.
type AutoRetryStart = retry.AutoRetryStart

// AutoRetryEnd is emitted once when a chain ends.
type AutoRetryEnd = retry.AutoRetryEnd

// RetryFallback is emitted when a chain falls back to the next model of
// Settings.Fallback.
type RetryFallback = retry.RetryFallback

// Reason says why a chain gave up (ExhaustedError.Reason).
type Reason = retry.Reason

// Reasons for giving up a chain (see retry.Reason).
const (
	ReasonMaxRetries     Reason = retry.ReasonMaxRetries
	ReasonNonRetryable   Reason = retry.ReasonNonRetryable
	ReasonDisabled       Reason = retry.ReasonDisabled
	ReasonNoMessage      Reason = retry.ReasonNoMessage
	ReasonContinueFailed Reason = retry.ReasonContinueFailed
	ReasonMaxWait        Reason = retry.ReasonMaxWait
)

// State is a state of the retry machine (Controller.State).
type State = retry.State

// The five states of the retry machine: idle, exhausted and cancelled are
// rest states; backoff and continuing belong to an open chain.
const (
	StateIdle       State = retry.StateIdle
	StateBackoff    State = retry.StateBackoff
	StateContinuing State = retry.StateContinuing
	StateExhausted  State = retry.StateExhausted
	StateCancelled  State = retry.StateCancelled
)

// States lists the five states in display order (a fresh slice).
func States() []State { return retry.States() }

// Variant is a retry policy's transition table, which Config.Variant
// chooses: Sound (the default) or Original.
type Variant = retry.Variant

// Sound is the default variant: the documented policy made total, every
// chain that starts ends exactly once.
func Sound() *Variant { return retry.Sound() }

// Original reproduces the original implementation's observable behaviour,
// hazards included (SPEC.md §9); it takes only the default profile's
// settings.
func Original() *Variant { return retry.Original() }

// VariantByName returns the variant called name ("" means sound).
func VariantByName(name string) (*Variant, error) { return retry.VariantByName(name) }

// The package's constants: the classification modes, the fixed finalError
// texts, the settings' defaults, bounds and modes, the default profile
// (see package retry).
const (
	ClassifyMessage = retry.ClassifyMessage // the original's (and "")
	ClassifyStatus  = retry.ClassifyStatus  // by HTTP status when there is one
	ClassifyStrict  = retry.ClassifyStrict  // status, quota messages never retried

	RetryCancelled     = retry.RetryCancelled
	NoAssistantMessage = retry.NoAssistantMessage
	UnknownError       = retry.UnknownError

	DefaultMaxRetries    = retry.DefaultMaxRetries
	DefaultBaseDelay     = retry.DefaultBaseDelay
	DefaultBackoffFactor = retry.DefaultBackoffFactor
	MaxRetriesLimit      = retry.MaxRetriesLimit
	MaxBaseDelay         = retry.MaxBaseDelay
	MaxBackoffFactor     = retry.MaxBackoffFactor
	MaxFallbacks         = retry.MaxFallbacks

	JitterNone   = retry.JitterNone
	JitterDown   = retry.JitterDown
	JitterUpDown = retry.JitterUpDown
	JitterFull   = retry.JitterFull
	JitterEqual  = retry.JitterEqual

	HintIgnore  = retry.HintIgnore
	HintFloor   = retry.HintFloor
	HintReplace = retry.HintReplace

	DefaultProfile = retry.DefaultProfile
)
