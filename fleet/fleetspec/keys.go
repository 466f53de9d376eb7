package fleetspec

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
	"gopkg.in/yaml.v3"
)

// The fleet's settings, declared once: each top-level key of a fleet file
// with its reader, the flags of retrysim fleet that override it (each
// with its parser and setter) and its row of SPEC.md §15.3's table. The
// file reader (Parse), the flags (Overlay) and FileKeys derive from it,
// and a test checks SPEC's table against it; a new key is one entry here.

// target is what a key sets: a spec and its fleet.
type target struct {
	spec     *Spec
	c        *Config
	seedsSet bool // the file gave seeds (it wins over seed)
}

// fileKey is one of a fleet file's top-level keys.
type fileKey struct {
	name string
	// shape is how SPEC writes the value's form after the key ("{rps,
	// burst}"); "" for a scalar.
	shape string
	// read reads the file's value v of the key at path into t.
	read  func(p *fileParser, v *yaml.Node, path string, t *target)
	flags []flagDef
	// value and def are SPEC's columns: what is allowed and the default.
	value, def string
}

// flagDef is a flag of retrysim fleet that sets (part of) a key.
type flagDef struct {
	name, usage string
	repeat      bool // repeatable: each use adds a value
	// define defines the flag on fs and returns the setting of its
	// value, applied when the flag is given.
	define func(fs *flag.FlagSet) func(t *target) error
}

// flagOf is a flag of type T (its default def) whose value set sets.
func flagOf[T int | int64 | float64 | time.Duration | string](name string, def T, usage string, set func(t *target, v T) error) flagDef {
	return flagDef{name: name, usage: usage, define: func(fs *flag.FlagSet) func(*target) error {
		v := new(T)
		switch d := any(def).(type) {
		case int:
			fs.IntVar(any(v).(*int), name, d, usage)
		case int64:
			fs.Int64Var(any(v).(*int64), name, d, usage)
		case float64:
			fs.Float64Var(any(v).(*float64), name, d, usage)
		case time.Duration:
			fs.DurationVar(any(v).(*time.Duration), name, d, usage)
		case string:
			fs.StringVar(any(v).(*string), name, d, usage)
		}
		return func(t *target) error { return set(t, *v) }
	}}
}

// listOf is a repeatable flag whose every value parse reads; set sets
// them all.
func listOf[T any](name, usage string, parse func(string) (T, error), set func(t *target, vs []T)) flagDef {
	return flagDef{name: name, usage: usage, repeat: true, define: func(fs *flag.FlagSet) func(*target) error {
		l := &listValue{}
		fs.Var(l, name, usage)
		return func(t *target) error {
			var out []T
			for _, s := range *l {
				v, err := parse(s)
				if err != nil {
					return err
				}
				out = append(out, v)
			}
			set(t, out)
			return nil
		}
	}}
}

// listValue is a repeatable flag's values.
type listValue []string

func (l *listValue) String() string     { return strings.Join(*l, " ") }
func (l *listValue) Set(v string) error { *l = append(*l, v); return nil }

// fileKeys is the table, in SPEC.md §15.3's order.
var fileKeys = []fileKey{
	{name: "name", value: "a string", def: "the file's base name",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { t.c.Name = p.Str(v, path) }},
	{name: "description", value: "a string", def: "none",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { t.spec.Description = p.Str(v, path) }},
	{name: "sessions", value: "1 to 100 000 000", def: "required (flag: 1000)",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) {
			t.c.Sessions = int(p.integer(v, path, 1, MaxSessions))
		},
		flags: []flagDef{flagOf("sessions", 1000, "the number `N` of agent sessions (key sessions)",
			func(t *target, v int) error { t.c.Sessions = v; return nil })}},
	{name: "rate", value: "sessions per second, 0 (all at t=0) to 1e9", def: "0 (flag: 100)",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { t.c.Rate = p.Number(v, path) },
		flags: []flagDef{flagOf("rate", 100.0, "sessions arriving per second, a Poisson process; 0: all at t=0 (key rate)",
			func(t *target, v float64) error { t.c.Rate = v; return nil })}},
	{name: "prompts", value: "prompts per session, 1 to 1 000 000", def: "1",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) {
			t.c.Prompts = int(p.integer(v, path, 1, MaxPrompts))
		},
		flags: []flagDef{flagOf("prompts", 1, "prompts per session, one after the other (key prompts)",
			func(t *target, v int) error { t.c.Prompts = v; return nil })}},
	distKey("think", "think", "0s", "a duration distribution", false, func(c *Config) *Dist { return &c.Think },
		"the `DIST` of the wait between a prompt's end and the next (key think)"),
	distKey("calls", "calls", "1", "a count distribution", true, func(c *Config) *Dist { return &c.Calls },
		"the `DIST` of successful model calls a prompt needs: 3, uniform:1,5, geometric:4 (key calls)"),
	distKey("latency", "latency", "1s", "a duration distribution", false, func(c *Config) *Dist { return &c.Latency },
		"the `DIST` of a successful call's latency: 1s, uniform:1s,3s, exp:2s, lognormal:2s,0.5 (key latency)"),
	distKey("errorLatency", "error-latency", "100ms", "a duration distribution", false, func(c *Config) *Dist { return &c.ErrorLatency },
		"the `DIST` of an error answer's latency (key errorLatency)"),
	{name: "capacity", shape: "{rps, burst, maxInFlight}", read: readCapacity,
		value: "rps 0 (none) to 1e9, burst 1 to 1e9 with rps (flag: rps rounded up), maxInFlight 0 (none) to 1e9", def: "no limit",
		flags: []flagDef{
			flagOf("capacity", "", "the provider's token bucket, `RPS[,BURST]` (burst default: RPS rounded up) (keys capacity.rps, capacity.burst)",
				func(t *target, v string) (err error) {
					t.c.Capacity.RPS, t.c.Capacity.Burst, err = ParseCapacity(v)
					return err
				}),
			flagOf("max-in-flight", 0, "the provider's bound on calls in flight, 0 none (key capacity.maxInFlight)",
				func(t *target, v int) error { t.c.Capacity.MaxInFlight = v; return nil }),
		}},
	{name: "overCapacity", shape: "{hint, retryAfter}", read: readOverCapacity,
		value: "`header` \\| `text` \\| `none`; a duration (0: computed)", def: "`header`, 0",
		flags: []flagDef{
			flagOf("hint", "header", "how the over-capacity 429 gives its retry-after: header, text or none (key overCapacity.hint)",
				func(t *target, v string) (err error) {
					t.c.OverCapacity.Hint, err = ParseHint(v)
					return err
				}),
			flagOf("retry-after", time.Duration(0), "the over-capacity 429's retry-after; 0: computed from the bucket (key overCapacity.retryAfter)",
				func(t *target, v time.Duration) error { t.c.OverCapacity.RetryAfter = v; return nil }),
		}},
	{name: "outages", shape: "[{start, duration, kind, retryAfter}]", read: readOutages,
		value: "kind " + kindsDoc(OutageKinds) + "; duration above 0; retryAfter only for usage_limit and 429", def: "none",
		flags: []flagDef{listOf("outage", "an outage window `START,DURATION,KIND[,RETRY_AFTER]`, e.g. 30s,60s,529; kinds 529, 503, 500, network, usage_limit, 429; repeatable (key outages)",
			ParseOutage, func(t *target, vs []Outage) { t.c.Outages = vs })}},
	{name: "errors", shape: "{KIND: P}", read: readErrors,
		value: "the kinds of §15.2 but overflow; probabilities", def: "none",
		flags: []flagDef{listOf("error", "a background error rate `KIND=P`, e.g. 503=0.01; repeatable (key errors)",
			ParseRate, func(t *target, vs []Rate) { t.c.Errors = vs })}},
	{name: "overflow", value: "a probability below 1 (with the error rates at most 1 in all)", def: "0",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { t.c.Overflow = p.Number(v, path) },
		flags: []flagDef{flagOf("overflow", 0.0, "the rate of context-overflow answers (key overflow)",
			func(t *target, v float64) error { t.c.Overflow = v; return nil })}},
	{name: "promptErrors", shape: "{count, kind}", read: readPromptErrors,
		value: "count 0 to 1 000 000, a kind of §15.2", def: "none (the default fleet: 3, 529)",
		flags: []flagDef{flagOf("prompt-errors", "", "each prompt's first wire calls fail: `COUNT,KIND`, e.g. 3,529 (key promptErrors; the default fleet's is 3,529)",
			func(t *target, v string) (err error) {
				t.c.PromptErrors, err = ParsePromptErrors(v)
				return err
			})}},
	{name: "profile", read: readProfile,
		value: "a mix, `NAME` or `NAME=P%,NAME=P%,...` (profiles of §14, each once, shares above 0 adding up to 100 %), or a list of mixes (quoted: a comma ends a YAML flow item), one run each",
		def:   "`" + policy.DefaultProfile + "`",
		flags: []flagDef{listOf("profile", "the profile `MIX` the sessions run: NAME or NAME=P%,NAME=P%; repeated, one run each (key profile)",
			ParseMix, func(t *target, vs []Mix) { t.spec.Mixes = vs })}},
	{name: "sdk", value: "a profile of §14", def: "none",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { t.c.SDK = p.Str(v, path) },
		flags: []flagDef{flagOf("sdk", "", "an SDK layer under every agent call, retrying with profile `NAME`'s settings (key sdk)",
			func(t *target, v string) error {
				t.c.SDK = v
				if v == "" {
					return nil
				}
				_, err := policy.ProfileByName(v)
				return err
			})}},
	{name: "settings", shape: "{maxRetries, baseDelayMs, ...}", read: readSettings,
		value: "retry settings (§1's keys), read onto the default settings; they replace every profile's agent settings (the rows keep the profiles' names, an SDK layer stays)",
		def:   "none (each profile's own)",
		flags: []flagDef{flagOf("settings", "", "run every session's agent layer with the retry settings of `FILE` (JSON, as retrysim tune --out writes them) in place of its profile's (key settings)",
			func(t *target, v string) error {
				if v == "" {
					t.c.Settings = nil
					return nil
				}
				s, err := ReadSettings(v)
				t.c.Settings = &s
				return err
			})}},
	durationKey("horizon", "horizon", 0, "a duration (0: until every session is done)", "0", func(c *Config) *time.Duration { return &c.Horizon },
		"stop the simulation at this virtual time; 0: when every session is done (key horizon)"),
	durationKey("recovery", "recovery", DefaultRecovery, "a duration: the window after an outage of the after-peak (0: 60 s)", "60 s",
		func(c *Config) *time.Duration { return &c.Recovery },
		"the window after an outage over which the after-peak is taken (key recovery)"),
	{name: "compaction", read: readCompaction,
		value: "`on` \\| `off` \\| `fail` (it runs and fails), or `{enabled, succeed}` (booleans)", def: "`on`",
		flags: []flagDef{flagOf("compaction", "on", "overflow compaction: on, off, or fail (it runs and fails) (key compaction)",
			func(t *target, v string) (err error) {
				t.c.Compaction.Enabled, t.c.Compaction.Succeed, err = session.ParseCompaction(v)
				return err
			})}},
	{name: "seed", value: "1 to 2^63−1", def: "1",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { t.c.Seed = p.integer(v, path, 1, MaxSeed) },
		flags: []flagDef{flagOf("seed", int64(1), "the seed of every random draw (key seed)",
			func(t *target, v int64) error {
				if v < 1 {
					return fmt.Errorf("%d (allowed: an integer from 1)", v)
				}
				t.c.Seed, t.spec.SeedFrom, t.spec.SeedTo = v, v, v // seeds, after it, wins
				return nil
			})}},
	{name: "seeds", value: "a seed range `A-B`, one run each (at most 1 000 000 seeds)", def: "`seed` alone",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) {
			var err error
			if t.spec.SeedFrom, t.spec.SeedTo, err = ParseSeeds(p.Scalar(v, path)); err != nil {
				p.Fail(v, path, "%v", err)
			}
			t.seedsSet = true
		},
		flags: []flagDef{flagOf("seeds", "", "a seed sweep `A-B`, one run per seed (key seeds)",
			func(t *target, v string) (err error) {
				t.spec.SeedFrom, t.spec.SeedTo, err = ParseSeeds(v)
				t.c.Seed = t.spec.SeedFrom
				return err
			})}},
}

// FileKeys are a fleet file's top-level keys, in SPEC.md §15.3's order.
var FileKeys = func() []string {
	names := make([]string, len(fileKeys))
	for i, k := range fileKeys {
		names[i] = k.name
	}
	return names
}()

// distKey is a key whose value is a distribution (count: of counts, else
// of durations), and its flag.
func distKey(name, flagName, def, value string, count bool, field func(*Config) *Dist, usage string) fileKey {
	parse := ParseDuration
	if count {
		parse = ParseCount
	}
	return fileKey{name: name, value: value, def: "`" + def + "`",
		read: func(p *fileParser, v *yaml.Node, path string, t *target) { *field(t.c) = p.dist(v, path, count) },
		flags: []flagDef{flagOf(flagName, def, usage, func(t *target, v string) (err error) {
			*field(t.c), err = parse(v)
			return err
		})}}
}

// durationKey is a key whose value is a duration, and its flag.
func durationKey(name, flagName string, def time.Duration, value, specDef string, field func(*Config) *time.Duration, usage string) fileKey {
	return fileKey{name: name, value: value, def: specDef,
		read:  func(p *fileParser, v *yaml.Node, path string, t *target) { *field(t.c) = p.duration(v, path) },
		flags: []flagDef{flagOf(flagName, def, usage, func(t *target, v time.Duration) error { *field(t.c) = v; return nil })}}
}

func kindsDoc(ks []Kind) string {
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = "`" + k.String() + "`"
	}
	return strings.Join(parts, " \\| ")
}

// ParseCapacity reads a token bucket, RPS[,BURST] (the burst's default:
// RPS rounded up).
func ParseCapacity(v string) (rps float64, burst int, err error) {
	r, b, hasBurst := strings.Cut(v, ",")
	rps, err = strconv.ParseFloat(strings.TrimSpace(r), 64)
	if err != nil || !(rps > 0) {
		return 0, 0, fmt.Errorf("%q: expected RPS[,BURST], RPS a number above 0 (e.g. 200 or 200,50)", v)
	}
	burst = max(1, int(rps+0.999999))
	if hasBurst {
		if burst, err = strconv.Atoi(strings.TrimSpace(b)); err != nil || burst < 1 {
			return 0, 0, fmt.Errorf("%q: the burst must be an integer from 1", v)
		}
	}
	return rps, burst, nil
}

// ParseHint reads a hint mode (HintModes).
func ParseHint(s string) (HintMode, error) {
	if !hintModeOK(HintMode(s)) {
		return "", fmt.Errorf("unknown mode %q (allowed: header, text, none)", s)
	}
	return HintMode(s), nil
}

// Overlay is the flags of retrysim fleet that set a fleet's keys, one or
// more per key (the key table's): values given on a command line, applied
// over a fleet file's keys (Apply), or over the default fleet's.
type Overlay struct {
	fs   *flag.FlagSet
	sets map[string]func(t *target) error // by flag name
}

// NewOverlay defines the flags of every fleet key on fs, with their
// defaults and help, and returns the overlay of their values once fs has
// parsed a command line.
func NewOverlay(fs *flag.FlagSet) *Overlay {
	o := &Overlay{fs: fs, sets: map[string]func(*target) error{}}
	for _, k := range fileKeys {
		for _, f := range k.flags {
			o.sets[f.name] = f.define(fs)
		}
	}
	return o
}

// Apply sets every flag given over spec's keys, in the key table's order
// (seed before seeds, which wins); an invalid value is an error naming the
// flag and what is allowed ("--think: ..."). Apply does not validate the
// fleet as a whole (Spec.Validate does).
func (o *Overlay) Apply(spec *Spec) error {
	given := map[string]bool{}
	o.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	t := &target{spec: spec, c: &spec.Config}
	for _, k := range fileKeys {
		for _, f := range k.flags {
			if !given[f.name] {
				continue
			}
			if err := o.sets[f.name](t); err != nil {
				return fmt.Errorf("--%s: %v", f.name, err)
			}
		}
	}
	return nil
}
