package fleetspec

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
)

// Limits of a fleet's parameters (Validate).
const (
	// MaxSessions is the largest number of sessions of one fleet.
	MaxSessions = 100_000_000
	// MaxLiveSessions is the largest number of sessions a fleet keeps
	// alive at once (each takes about 2.5 KB): the bound of its memory.
	// Sessions arriving at rate 0 all live at once; at a rate, a fleet
	// whose arrivals outrun its sessions' ends past this bound stops
	// with an error (*LiveSessionsError).
	MaxLiveSessions = 1_000_000
	// MaxPrompts is the largest number of prompts per session.
	MaxPrompts = 1_000_000
	// MaxCalls bounds a count distribution's values (calls per prompt).
	MaxCalls = 1_000_000
	// MaxOutages is the largest number of outage windows.
	MaxOutages = 1000
	// MaxDuration bounds every duration of a fleet (a year), so that sums
	// of them never overflow a time.Duration.
	MaxDuration = 365 * 24 * time.Hour
	// MaxSeed is the largest seed (seeds are positive integers).
	MaxSeed = math.MaxInt64
)

// Kind is a kind of provider answer that is not a success: an outage's,
// a background error's, a prompt script's, or the over-capacity answer.
type Kind uint8

// The kinds of error answers (SPEC.md §15.2 gives each one's status,
// headers and message).
const (
	KindNone       Kind = iota
	Kind529             // "529": overloaded
	Kind503             // "503": service unavailable
	Kind500             // "500": internal server error
	KindNetwork         // "network": a connection error, no HTTP status
	KindUsageLimit      // "usage_limit": a usage limit with a retry-after
	Kind429             // "429": rate limited (the over-capacity answer)
	KindOverflow        // "overflow": the context window is exceeded
	// NumKinds is the number of kinds, KindNone included (an array by
	// kind has NumKinds elements).
	NumKinds
)

var kindNames = [NumKinds]string{"", "529", "503", "500", "network", "usage_limit", "429", "overflow"}

// String returns the kind's name in flags and files ("529", "usage_limit", ...).
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// OutageKinds are the kinds an outage window may have, in order.
var OutageKinds = []Kind{Kind529, Kind503, Kind500, KindNetwork, KindUsageLimit, Kind429}

// ErrorKinds are the kinds a background error rate or a prompt script may
// name, in order.
var ErrorKinds = []Kind{Kind529, Kind503, Kind500, KindNetwork, KindUsageLimit, Kind429, KindOverflow}

func kindList(ks []Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.String()
	}
	return strings.Join(names, ", ")
}

// ParseKind reads a kind among allowed.
func ParseKind(s string, allowed []Kind) (Kind, error) {
	for _, k := range allowed {
		if k.String() == s {
			return k, nil
		}
	}
	return KindNone, fmt.Errorf("unknown kind %q (allowed: %s)", s, kindList(allowed))
}

// HintMode says how the over-capacity 429 carries its retry-after.
type HintMode string

// Hint modes.
const (
	HintHeader HintMode = "header" // a retry-after header, in whole seconds
	HintText   HintMode = "text"   // "try again in Ns" in the message
	HintNone   HintMode = "none"   // no hint
)

// HintModes lists the hint modes.
var HintModes = []HintMode{HintHeader, HintText, HintNone}

// Capacity is the provider's capacity; zero fields are no limit.
type Capacity struct {
	// RPS and Burst are a token bucket: RPS tokens a second, at most Burst
	// held (a full bucket at t=0); a call takes one token or is answered 429.
	RPS   float64
	Burst int
	// MaxInFlight bounds the calls admitted and not yet answered; a call
	// over it is answered 429.
	MaxInFlight int
}

// Limited reports whether the provider has a capacity.
func (c Capacity) Limited() bool { return c.RPS > 0 || c.MaxInFlight > 0 }

// OverCapacity is the answer to a call over capacity: a 429.
type OverCapacity struct {
	// Hint is how the retry-after is given ("" means header).
	Hint HintMode
	// RetryAfter is the retry-after given; 0 means computed: the time until
	// the bucket holds a token (at least 1 s; 1 s under MaxInFlight),
	// rounded up to whole seconds.
	RetryAfter time.Duration
}

// Outage is a window during which every call fails with Kind.
type Outage struct {
	Start, Duration time.Duration
	Kind            Kind
	// RetryAfter is the retry-after of a usage_limit or 429 window; 0 means
	// the time left until the window ends, rounded up to whole seconds.
	RetryAfter time.Duration
}

// End is when the window ends (exclusive).
func (o Outage) End() time.Duration { return o.Start + o.Duration }

// Rate is a background error rate: the probability that an admitted call
// fails with Kind.
type Rate struct {
	Kind Kind
	P    float64
}

// PromptErrors scripts the first wire calls of every prompt: the first
// Count fail with Kind (the default fleet: 3 × 529).
type PromptErrors struct {
	Count int
	Kind  Kind
}

// Share is a profile's share of a fleet's sessions.
type Share struct {
	Profile string
	Percent float64
}

// Mix is the profiles a fleet's sessions run, by share.
type Mix []Share

// String writes the mix as --profile takes it: "a=50%,b=50%", or the one
// name alone.
func (m Mix) String() string {
	if len(m) == 1 && m[0].Percent == 100 {
		return m[0].Profile
	}
	parts := make([]string, len(m))
	for i, s := range m {
		parts[i] = s.Profile + "=" + strconv.FormatFloat(s.Percent, 'f', -1, 64) + "%"
	}
	return strings.Join(parts, ",")
}

// ParseMix reads "NAME" or "NAME=P%,NAME=P%,...": profiles of
// policy.Profiles, each at most once, shares above 0 that add up to 100 %.
func ParseMix(s string) (Mix, error) {
	if s == "" {
		return nil, errors.New("empty profile mix (allowed: NAME or NAME=P%,NAME=P%,... adding up to 100%)")
	}
	var m Mix
	total := 0.0
	for part := range strings.SplitSeq(s, ",") {
		name, pct, hasPct := strings.Cut(strings.TrimSpace(part), "=")
		p := 100.0
		if hasPct {
			num, ok := strings.CutSuffix(strings.TrimSpace(pct), "%")
			v, err := strconv.ParseFloat(num, 64)
			if !ok || err != nil || !(v > 0 && v <= 100) {
				return nil, fmt.Errorf("profile %s: share %q (allowed: a percentage above 0%% and at most 100%%, e.g. 50%%)", name, pct)
			}
			p = v
		} else if strings.Contains(s, ",") {
			return nil, fmt.Errorf("profile %s: no share (allowed: NAME=P%%, the shares adding up to 100%%)", name)
		}
		if _, err := policy.ProfileByName(name); err != nil || name == "" {
			if err == nil {
				err = errors.New("empty profile name")
			}
			return nil, err
		}
		for _, x := range m {
			if x.Profile == name {
				return nil, fmt.Errorf("profile %s listed twice", name)
			}
		}
		m = append(m, Share{Profile: name, Percent: p})
		total += p
	}
	if math.Abs(total-100) > 1e-9 {
		return nil, fmt.Errorf("the shares add up to %s%% (allowed: exactly 100%%)", strconv.FormatFloat(total, 'f', -1, 64))
	}
	return m, nil
}

// Compaction configures the sessions' overflow compaction (session.Config).
type Compaction struct{ Enabled, Succeed bool }

// Config is one fleet. Zero values of optional fields mean what each says;
// Default gives the default fleet, and Validate checks a Config.
type Config struct {
	// Name names the fleet in results (a file's base name, or "default").
	Name string
	// Sessions is the number of agent sessions (1 to MaxSessions).
	Sessions int
	// Rate is the sessions' arrival rate, per second, of a Poisson process;
	// 0 means every session arrives at t=0.
	Rate float64
	// Prompts is the number of prompts per session, one after the other
	// (0 means 1); Think is the wait between a prompt's end and the next.
	Prompts int
	Think   Dist
	// Calls is the number of successful model calls a prompt needs (its
	// toolUse turns and the final stop; at least 1).
	Calls Dist
	// Latency is a successful call's latency, ErrorLatency an error
	// answer's (both at least 1 ns).
	Latency, ErrorLatency Dist
	Capacity              Capacity
	OverCapacity          OverCapacity
	// Outages are the outage windows; where two overlap, the first listed
	// answers.
	Outages []Outage
	// Errors are the background error rates of admitted calls, and
	// Overflow the rate of context-overflow answers (all of them together
	// at most 1).
	Errors   []Rate
	Overflow float64
	// PromptErrors scripts each prompt's first wire calls.
	PromptErrors PromptErrors
	// Profiles are the profiles the sessions run (nil: the default profile).
	Profiles Mix
	// SDK is the profile of an SDK layer under every agent call ("": none):
	// each call is retried with its settings before the agent sees it.
	// Left empty, it is the provider layer (policy.Profile.Layer) of the
	// mix's profiles when they have one (all the same).
	SDK string
	// Horizon stops the simulation (0: when every session is done).
	Horizon time.Duration
	// Recovery is the window after an outage over which the "after" peak
	// is taken (0 means 60 s).
	Recovery time.Duration
	// Compaction is the sessions' overflow compaction.
	Compaction Compaction
	// Seed seeds every random draw (1 to MaxSeed; 0 means 1).
	Seed int64
	// A field added from here on is tagged `json:",omitempty"`: a sweep's
	// identity (Plan.ID) hashes its Configs' JSON, so that a fleet leaving
	// the new field zero keeps its identity and its partial results.

	// Settings, when set, are the retry settings every session's agent
	// layer runs in place of its profile's (the profile names the rows and
	// its SDK layer stays): a settings file (--settings, ReadSettings), or
	// a candidate of retrysim tune.
	Settings *policy.Settings `json:",omitempty"`
}

// DefaultRecovery is the "after" window of an outage when Recovery is 0.
const DefaultRecovery = 60 * time.Second

// Default is the default fleet: sessions sessions arriving at 100 a second,
// one prompt each of one call, three 529 answers and then a success (a
// chain of three retryable errors), no capacity limit, the default
// profile, calls of 1 s and error answers of 100 ms.
func Default(sessions int) Config {
	return Config{
		Name:         "default",
		Sessions:     sessions,
		Rate:         100,
		Prompts:      1,
		Calls:        Fixed(1),
		Latency:      Fixed(float64(time.Second)),
		ErrorLatency: Fixed(float64(100 * time.Millisecond)),
		PromptErrors: PromptErrors{Count: 3, Kind: Kind529},
		Profiles:     Mix{{Profile: policy.DefaultProfile, Percent: 100}},
		Compaction:   Compaction{Enabled: true, Succeed: true},
		Seed:         1,
	}
}

// Normalized is c with its zero values that stand for a default filled
// in (what Validate checks and a run runs).
func (c Config) Normalized() Config {
	if c.Prompts == 0 {
		c.Prompts = 1
	}
	if c.Calls.Kind == DistNone {
		c.Calls = Fixed(1)
	}
	if c.Latency.Kind == DistNone {
		c.Latency = Fixed(float64(time.Second))
	}
	if c.ErrorLatency.Kind == DistNone {
		c.ErrorLatency = Fixed(float64(100 * time.Millisecond))
	}
	if c.Think.Kind == DistNone {
		c.Think = Fixed(0)
	}
	if c.OverCapacity.Hint == "" {
		c.OverCapacity.Hint = HintHeader
	}
	if len(c.Profiles) == 0 {
		c.Profiles = Mix{{Profile: policy.DefaultProfile, Percent: 100}}
	}
	if c.SDK == "" {
		c.SDK = mixLayer(c.Profiles)
	}
	if c.Recovery == 0 {
		c.Recovery = DefaultRecovery
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// mixLayer is the provider layer of the mix's profiles ("" when none has
// one); when they differ it is the first, and Validate refuses the mix.
func mixLayer(m Mix) string {
	for _, sh := range m {
		if p, err := policy.ProfileByName(sh.Profile); err == nil && p.Layer != "" {
			return p.Layer
		}
	}
	return ""
}

// FieldError is a Config's invalid field: its key (as in fleet files) and
// what is allowed.
type FieldError struct {
	Field string // the key path, e.g. "outages[1].kind"
	Msg   string
}

// Error gives "FIELD: MSG".
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

func checkDuration(field string, d time.Duration, min time.Duration) error {
	if d < min || d > MaxDuration {
		return fieldErr(field, "%v is out of range (allowed: %v to %v)", d, min, MaxDuration)
	}
	return nil
}

func checkProb(field string, p float64) error {
	if !(p >= 0 && p <= 1) {
		return fieldErr(field, "%v is out of range (allowed: a probability from 0 to 1)", p)
	}
	return nil
}

// Validate checks c; the error is a *FieldError naming the key at fault
// and what is allowed.
func (c Config) Validate() error {
	c = c.Normalized()
	if c.Settings != nil {
		if err := c.Settings.Validate(); err != nil {
			return fieldErr("settings", "%v", err)
		}
	}
	if c.Sessions < 1 || c.Sessions > MaxSessions {
		return fieldErr("sessions", "%d is out of range (allowed: an integer from 1 to %d)", c.Sessions, MaxSessions)
	}
	if !(c.Rate >= 0 && c.Rate <= 1e9) {
		return fieldErr("rate", "%v is out of range (allowed: sessions per second from 0, all at t=0, to 1e9)", c.Rate)
	}
	if c.Rate == 0 && c.Sessions > MaxLiveSessions {
		return fieldErr("sessions", "%d sessions all at t=0 is more than the %d a fleet keeps alive at once (about 2.5 KB each; allowed: at most %d with rate 0, or a rate that spreads them)", c.Sessions, MaxLiveSessions, MaxLiveSessions)
	}
	if c.Prompts < 1 || c.Prompts > MaxPrompts {
		return fieldErr("prompts", "%d is out of range (allowed: an integer from 1 to %d)", c.Prompts, MaxPrompts)
	}
	for _, d := range []struct {
		field string
		dist  Dist
		count bool
	}{{"think", c.Think, false}, {"calls", c.Calls, true}, {"latency", c.Latency, false}, {"errorLatency", c.ErrorLatency, false}} {
		if err := d.dist.validate(d.count); err != nil {
			return fieldErr(d.field, "%v", err)
		}
	}
	if !(c.Capacity.RPS >= 0 && c.Capacity.RPS <= 1e9) {
		return fieldErr("capacity.rps", "%v is out of range (allowed: requests per second from 0, no limit, to 1e9)", c.Capacity.RPS)
	}
	if c.Capacity.Burst < 0 || c.Capacity.Burst > 1e9 || (c.Capacity.RPS > 0 && c.Capacity.Burst < 1) {
		return fieldErr("capacity.burst", "%d is out of range (allowed: an integer from 1 to 1e9 with rps, 0 without)", c.Capacity.Burst)
	}
	if c.Capacity.RPS == 0 && c.Capacity.Burst != 0 {
		return fieldErr("capacity.burst", "a burst needs rps (allowed: 0 without rps)")
	}
	if c.Capacity.MaxInFlight < 0 || c.Capacity.MaxInFlight > 1e9 {
		return fieldErr("capacity.maxInFlight", "%d is out of range (allowed: an integer from 0, no limit, to 1e9)", c.Capacity.MaxInFlight)
	}
	if !hintModeOK(c.OverCapacity.Hint) {
		return fieldErr("overCapacity.hint", "unknown hint mode %q (allowed: header, text, none)", c.OverCapacity.Hint)
	}
	if err := checkDuration("overCapacity.retryAfter", c.OverCapacity.RetryAfter, 0); err != nil {
		return err
	}
	if err := c.validateOutages(); err != nil {
		return err
	}
	total := c.Overflow
	if !(c.Overflow >= 0 && c.Overflow < 1) {
		// at 1 every call overflows, and every compaction's continue too:
		// a session would never end
		return fieldErr("overflow", "%v is out of range (allowed: a probability from 0 to below 1)", c.Overflow)
	}
	for i, r := range c.Errors {
		at := "errors." + r.Kind.String()
		if !kindIn(r.Kind, ErrorKinds) || r.Kind == KindOverflow {
			return fieldErr("errors", "%q is not an error kind (allowed: %s; the overflow rate is the key overflow)", r.Kind, kindList(ErrorKinds[:len(ErrorKinds)-1]))
		}
		for _, x := range c.Errors[:i] {
			if x.Kind == r.Kind {
				return fieldErr(at, "listed twice")
			}
		}
		if err := checkProb(at, r.P); err != nil {
			return err
		}
		total += r.P
	}
	if total > 1+1e-12 {
		return fieldErr("errors", "the error rates and the overflow rate add up to %v (allowed: at most 1)", total)
	}
	if c.PromptErrors.Count < 0 || c.PromptErrors.Count > MaxCalls {
		return fieldErr("promptErrors.count", "%d is out of range (allowed: an integer from 0 to %d)", c.PromptErrors.Count, MaxCalls)
	}
	if c.PromptErrors.Count > 0 && !kindIn(c.PromptErrors.Kind, ErrorKinds) {
		return fieldErr("promptErrors.kind", "%q is not an error kind (allowed: %s)", c.PromptErrors.Kind, kindList(ErrorKinds))
	}
	if err := c.validateProfiles(); err != nil {
		return err
	}
	if err := checkDuration("horizon", c.Horizon, 0); err != nil {
		return err
	}
	if err := checkDuration("recovery", c.Recovery, 0); err != nil {
		return err
	}
	if c.Seed < 1 {
		return fieldErr("seed", "%d is out of range (allowed: an integer from 1 to %d)", c.Seed, int64(MaxSeed))
	}
	return nil
}

// validateProfiles checks the profile mix and the SDK layer (Validate).
func (c *Config) validateProfiles() error {
	if _, err := ParseMix(c.Profiles.String()); err != nil {
		return fieldErr("profile", "%v", err)
	}
	if c.SDK != "" {
		if _, err := policy.ProfileByName(c.SDK); err != nil {
			return fieldErr("sdk", "%v", err)
		}
	}
	if layer := mixLayer(c.Profiles); layer != "" {
		// a profile with a provider layer of its own runs over it, and
		// every session of the fleet shares the one SDK layer
		for _, sh := range c.Profiles {
			if p, err := policy.ProfileByName(sh.Profile); err == nil && p.Layer != c.SDK {
				return fieldErr("profile", "profile %s runs over provider layer %q, but the fleet's SDK layer is %q (allowed: the profiles of a mix share one provider layer, and sdk is it or unset)",
					p.Name, p.Layer, c.SDK)
			}
		}
	}
	return nil
}

// validateOutages checks the outage windows (Validate).
func (c *Config) validateOutages() error {
	if len(c.Outages) > MaxOutages {
		return fieldErr("outages", "too many windows: %d (at most %d allowed)", len(c.Outages), MaxOutages)
	}
	for i, o := range c.Outages {
		at := "outages[" + strconv.Itoa(i) + "]"
		if err := checkDuration(at+".start", o.Start, 0); err != nil {
			return err
		}
		if err := checkDuration(at+".duration", o.Duration, time.Nanosecond); err != nil {
			return err
		}
		if !kindIn(o.Kind, OutageKinds) {
			return fieldErr(at+".kind", "%q is not an outage kind (allowed: %s)", o.Kind, kindList(OutageKinds))
		}
		if err := checkDuration(at+".retryAfter", o.RetryAfter, 0); err != nil {
			return err
		}
		if o.RetryAfter != 0 && o.Kind != KindUsageLimit && o.Kind != Kind429 {
			return fieldErr(at+".retryAfter", "only a usage_limit or 429 window has a retry-after")
		}
	}
	return nil
}

func hintModeOK(m HintMode) bool {
	for _, x := range HintModes {
		if x == m {
			return true
		}
	}
	return false
}

func kindIn(k Kind, ks []Kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// ParseOutage reads START,DURATION,KIND[,RETRY_AFTER] (Go durations, e.g.
// "10s,60s,529" or "0s,3h,usage_limit").
func ParseOutage(s string) (Outage, error) {
	parts := strings.Split(s, ",")
	if len(parts) < 3 || len(parts) > 4 {
		return Outage{}, fmt.Errorf("%q: expected START,DURATION,KIND[,RETRY_AFTER] (e.g. 10s,60s,529; kinds: %s)", s, kindList(OutageKinds))
	}
	var o Outage
	var err error
	if o.Start, err = time.ParseDuration(strings.TrimSpace(parts[0])); err != nil {
		return Outage{}, fmt.Errorf("%q: start: %v", s, err)
	}
	if o.Duration, err = time.ParseDuration(strings.TrimSpace(parts[1])); err != nil {
		return Outage{}, fmt.Errorf("%q: duration: %v", s, err)
	}
	if o.Kind, err = ParseKind(strings.TrimSpace(parts[2]), OutageKinds); err != nil {
		return Outage{}, fmt.Errorf("%q: %v", s, err)
	}
	if len(parts) == 4 {
		if o.RetryAfter, err = time.ParseDuration(strings.TrimSpace(parts[3])); err != nil {
			return Outage{}, fmt.Errorf("%q: retry-after: %v", s, err)
		}
	}
	return o, nil
}

// String writes o as ParseOutage reads it.
func (o Outage) String() string {
	s := o.Start.String() + "," + o.Duration.String() + "," + o.Kind.String()
	if o.RetryAfter != 0 {
		s += "," + o.RetryAfter.String()
	}
	return s
}

// ParseRate reads KIND=P (e.g. "529=0.01").
func ParseRate(s string) (Rate, error) {
	k, p, ok := strings.Cut(s, "=")
	if !ok {
		return Rate{}, fmt.Errorf("%q: expected KIND=P (e.g. 529=0.01; kinds: %s)", s, kindList(ErrorKinds[:len(ErrorKinds)-1]))
	}
	kind, err := ParseKind(strings.TrimSpace(k), ErrorKinds[:len(ErrorKinds)-1])
	if err != nil {
		return Rate{}, fmt.Errorf("%q: %v", s, err)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
	if err != nil || !(v >= 0 && v <= 1) {
		return Rate{}, fmt.Errorf("%q: rate %q (allowed: a probability from 0 to 1)", s, p)
	}
	return Rate{Kind: kind, P: v}, nil
}

// ParsePromptErrors reads COUNT,KIND (e.g. "3,529").
func ParsePromptErrors(s string) (PromptErrors, error) {
	n, k, ok := strings.Cut(s, ",")
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || count < 0 || count > MaxCalls {
		return PromptErrors{}, fmt.Errorf("%q: expected COUNT,KIND with COUNT from 0 to %d (e.g. 3,529)", s, MaxCalls)
	}
	kind, err := ParseKind(strings.TrimSpace(k), ErrorKinds)
	if err != nil {
		return PromptErrors{}, fmt.Errorf("%q: %v", s, err)
	}
	return PromptErrors{Count: count, Kind: kind}, nil
}

// ParseSeeds reads a seed range "A-B" or a seed "A" (positive integers,
// A <= B, at most 1,000,000 seeds).
func ParseSeeds(s string) (from, to int64, err error) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	from, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	to, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil || from < 1 || to < from || to-from >= 1_000_000 {
		return 0, 0, fmt.Errorf("%q: expected A-B, positive integers with A <= B, at most 1000000 seeds (e.g. 1-20)", s)
	}
	return from, to, nil
}
