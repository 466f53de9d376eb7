package explore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// ruleUnits returns the coverage units of v's rules whose event is ev.
func ruleUnits(v *session.Variant, ev string) []Unit {
	var out []Unit
	for i, r := range v.Retry.Rules() {
		if r.Event == ev {
			for _, f := range r.From {
				out = append(out, Unit{Rule: i, From: f})
			}
		}
	}
	return out
}

// reached reports whether r fired any rule whose event is ev.
func reached(r *Result, v *session.Variant, ev string) bool {
	for _, u := range ruleUnits(v, ev) {
		if r.Reached[u] {
			return true
		}
	}
	return false
}

// TestProfilesHold: the settings of every profile, explored at the
// profile's own maxRetries (what `retrysim check --profile NAME` does),
// hold every invariant with nothing pruned; the default profile is the
// default exploration exactly; a profile that reads hints under a ceiling
// reaches its fail-fast end.
func TestProfilesHold(t *testing.T) {
	counts := specProfileCounts(t) // SPEC.md §12.6's table: a row per profile
	for name := range counts {
		if _, err := policy.ProfileByName(name); err != nil {
			t.Errorf("SPEC.md §12.6's row %s: %v", name, err)
		}
	}
	for _, p := range policy.Profiles() {
		set := p.Settings
		sum, err := CheckSettings(session.Sound, &set, set.MaxRetries, set.MaxRetries)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		if len(sum.Counterexamples) != 0 || sum.Pruned != 0 || sum.States == 0 {
			t.Errorf("%s: %s pruned=%d, counterexamples %v", p.Name, sum.Line(), sum.Pruned, sum.Counterexamples)
		}
		r := sum.Results[0]
		// A profile's row in SPEC.md §12.6's table records its counts; a
		// profile added without one is checked by the invariants alone.
		if want, ok := counts[p.Name]; !ok {
			t.Logf("%s: no row in SPEC.md §12.6's table (states=%d transitions=%d)", p.Name, r.States, r.Transitions)
		} else if r.States != want[0] || r.Transitions != want[1] {
			t.Errorf("%s: states=%d transitions=%d, SPEC.md §12.6 says %d/%d", p.Name, r.States, r.Transitions, want[0], want[1])
		}
		// At most one timer pending: a wait's length orders it against
		// nothing (why one jitter draw is enough, SPEC.md §12.6).
		for i := 0; i < r.States; i++ {
			if s := r.State(i); s.NT > 1 {
				t.Fatalf("%s: state %d %v has %d timers", p.Name, i, s, s.NT)
			}
		}
		if p.Name == policy.DefaultProfile {
			d := exploreAll(Options{MaxRetries: set.MaxRetries})
			if r.States != d.States || r.Transitions != d.Transitions {
				t.Errorf("%s: states=%d transitions=%d, the default exploration %d/%d", p.Name, r.States, r.Transitions, d.States, d.Transitions)
			}
		}
		ra := set.Normalized().RetryAfter
		wantFailFast := ra.Use != policy.HintIgnore && ra.MaxWait > 0 && (ra.MaxHint == 0 || ra.MaxHint > ra.MaxWait)
		if got := reached(r, session.Sound, failFastEvent); got != wantFailFast {
			t.Errorf("%s: fail_fast reached %t, want %t", p.Name, got, wantFailFast)
		}
	}
}

// TestProfileAlphabetClasses: under every profile's classification each
// reply of the alphabet has its class (so each profile's exploration
// covers retryable, overflow, fatal, aborted and successful replies and
// both usage-limit answers: codex, which retries every error but quota and
// usage limits, gets other messages), and the hinted replies are in the
// alphabet exactly when the profile reads hints, and carry them.
func TestProfileAlphabetClasses(t *testing.T) {
	want := map[Input]classify.Class{
		ReplyRetryable: classify.ClassRetryable, ReplyOverflow: classify.ClassOverflow, ReplyFatal: classify.ClassFatal,
		ReplyAborted: classify.ClassAborted, ReplyStop: classify.ClassSuccess, ReplyToolUse: classify.ClassSuccess,
		ReplyUsageLimitSwitch: classify.ClassRetryable, ReplyUsageLimitStay: classify.ClassRetryable,
		ReplyHintLong: classify.ClassRetryable, ReplyHintShort: classify.ClassRetryable,
	}
	for _, p := range policy.Profiles() {
		c, err := newConfig(session.Sound, &p.Settings, p.Settings.MaxRetries, false)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for in, cl := range want {
			reads := p.Settings.Normalized().RetryAfter.Use != policy.HintIgnore
			if off := c.off&(1<<in) != 0; off != (in.isHint() && !reads) {
				t.Errorf("%s: %s in the alphabet %t", p.Name, in, !off)
			}
			if c.off&(1<<in) != 0 {
				continue
			}
			o := c.alpha.reply[in]
			if o.Class != cl {
				t.Errorf("%s: %s (%q) classifies as %s, want %s", p.Name, in, c.msgs[in].msg.ErrorMessage, o.Class, cl)
			}
			if isUL := in == ReplyUsageLimitSwitch || in == ReplyUsageLimitStay; o.UsageLimit != isUL {
				t.Errorf("%s: %s usage limit %t", p.Name, in, o.UsageLimit)
			}
			if in.isHint() && !o.HasWaitHint {
				t.Errorf("%s: %s has no wait hint", p.Name, in)
			}
		}
	}
}

// axes are settings that exercise every opt-in axis the explorer sees
// (without jitter, so that their paths replay through sim).
var axes = []struct {
	name string
	json string
}{
	{"fallback", `{"fallback":["m1","m2"]}`},
	{"fail-fast-floor", `{"maxBackoffMs":8000,"retryAfter":{"use":"floor","maxWaitMs":10000}}`},
	{"fail-fast-replace-fallback", `{"maxBackoffMs":4000,"retryAfter":{"use":"replace","maxWaitMs":5000},"fallback":["m1"]}`},
	{"max-hint", `{"maxBackoffMs":8000,"retryAfter":{"use":"replace","maxHintMs":60000}}`},
	{"persistent", `{"maxBackoffMs":8000,"persistent":true}`},
	{"persistent-fallback-hints", `{"backoffFactor":3,"maxBackoffMs":20000,"persistent":true,"retryAfter":{"use":"floor","maxWaitMs":30000},"fallback":["m1"]}`},
	{"status", `{"classify":"status","backoffFactor":1.5}`},
	{"strict-patterns", `{"classify":"strict","nonRetryablePatterns":["usage limit"]}`},
}

// jittered are settings with each jitter mode, and settings whose waits
// are not whole milliseconds (their paths are not replayed: see fixDraw
// and notReplayable).
var jittered = []struct {
	name string
	json string
}{
	{"down", `{"maxBackoffMs":8000,"jitter":{"mode":"down","ratio":0.25}}`},
	{"updown", `{"maxBackoffMs":8000,"jitter":{"mode":"updown","ratio":0.5},"retryAfter":{"use":"floor","maxWaitMs":12000}}`},
	{"full", `{"maxBackoffMs":8000,"jitter":{"mode":"full","ratio":1},"persistent":true}`},
	{"equal", `{"maxBackoffMs":3000,"jitter":{"mode":"equal","ratio":0.3},"retryAfter":{"use":"replace"},"fallback":["m1","m2","m3"]}`},
	{"fractional-waits", `{"baseDelayMs":333,"backoffFactor":1.5,"maxBackoffMs":700}`},
}

func settingsOf(t *testing.T, js string) *policy.Settings {
	t.Helper()
	set, err := policy.DefaultSettings().Apply([]byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return &set
}

// TestSettingsAxesHold: settings on every axis (fallback, fail-fast under
// floor and replace, maxHintMs, persistent mode, jitter in each mode,
// classification modes) hold every invariant for maxRetries 0..3 with
// nothing pruned, and reach what they add: the fallback and fail_fast
// rules, the last fallback model, persistent attempts beyond maxRetries.
func TestSettingsAxesHold(t *testing.T) {
	for _, ax := range append(slices.Clone(axes), jittered...) {
		set := settingsOf(t, ax.json)
		sum, err := CheckSettings(session.Sound, set, 0, 3)
		if err != nil {
			t.Errorf("%s: %v", ax.name, err)
			continue
		}
		if len(sum.Counterexamples) != 0 || sum.Pruned != 0 {
			t.Errorf("%s: %s pruned=%d, counterexamples %v", ax.name, sum.Line(), sum.Pruned, sum.Counterexamples)
		}
		n := set.Normalized()
		for mr, r := range sum.Results {
			if len(n.Fallback) > 0 {
				if !reached(r, session.Sound, "fallback") {
					t.Errorf("%s mr=%d: no fallback", ax.name, mr)
				}
				top := 0
				for i := 0; i < r.States; i++ {
					top = max(top, r.State(i).Session.Retry.Model)
				}
				if top != len(n.Fallback) {
					t.Errorf("%s mr=%d: the last model reached is %d, want %d", ax.name, mr, top, len(n.Fallback))
				}
			}
			// (maxRetries 0 ends every chain at its first error, step 1.)
			if n.RetryAfter.Use != policy.HintIgnore && n.RetryAfter.MaxWait > 0 && len(n.Fallback) == 0 && mr > 0 &&
				!reached(r, session.Sound, failFastEvent) {
				t.Errorf("%s mr=%d: no fail_fast", ax.name, mr)
			}
			if n.Persistent && !retriesBeyond(r, mr) {
				t.Errorf("%s mr=%d: no retry beyond maxRetries", ax.name, mr)
			}
		}
	}
}

// retriesBeyond reports whether some state of r whose retried run is in
// flight at attempt >= mr retries a retryable error: persistent mode.
func retriesBeyond(r *Result, mr int) bool {
	c, err := newConfig(session.Sound, &r.Settings, mr, false)
	if err != nil {
		panic(err)
	}
	sh := newConfigShell(session.Sound, c, false)
	for i := 0; i < r.States; i++ {
		s := r.State(i)
		if rs := s.Session.Retry; rs.State == policy.StateContinuing && rs.Attempt >= mr && sh.enabled(&s, ReplyRetryable) {
			sh.step(&s, ReplyRetryable)
			if s.Session.Retry.State == policy.StateBackoff {
				return true
			}
		}
	}
	return false
}

// TestPersistentSaturates: persistent mode's attempts saturate where
// neither the count nor the wait changes any more (SPEC.md §12.6): the
// state space is finite and does not grow with the cap's attempt beyond
// it; with a cap reached at attempt 3 (2 s, 4 s, 8 s) the counter is kept
// up to 2 (or maxRetries).
func TestPersistentSaturates(t *testing.T) {
	set := settingsOf(t, `{"maxBackoffMs":8000,"persistent":true}`)
	for mr, want := range []int{2, 2, 2, 3, 4} {
		c, err := newConfig(session.Sound, set, mr, false)
		if err != nil {
			t.Fatal(err)
		}
		if c.sat != want {
			t.Errorf("maxRetries %d: saturation at %d, want %d", mr, c.sat, want)
		}
	}
}

// TestSettingsRefused: settings the explorer cannot take are an error
// saying why, not a panic: opt-in settings on the original variant (the
// default settings are fine there), invalid settings, waits beyond the
// key's range.
func TestSettingsRefused(t *testing.T) {
	prof, err := policy.ProfileByName("omp-2026-06")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v    *session.Variant
		set  *policy.Settings
		mr   int
		want string
	}{
		{session.Original, &prof.Settings, 3, "variant original takes only the default settings"},
		{session.Sound, settingsOf(t, `{"maxBackoffMs":1000}`), 3, "maxBackoffMs"},
		{session.Sound, settingsOf(t, `{"baseDelayMs":86400000}`), 20, "exceeds the longest wait"},
		{session.Sound, settingsOf(t, `{"backoffFactor":1.0001,"maxBackoffMs":86400000,"persistent":true}`), 3, "persistent"},
		{session.Sound, &prof.Settings, 21, "out of range"},
	} {
		err := ValidateSettings(tc.v, tc.set, tc.mr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want an error containing %q", tc.v.Name, *tc.set, err, tc.want)
		}
		if r, err := Explore(Options{Variant: tc.v, Settings: tc.set, MaxRetries: tc.mr}); err == nil || r != nil {
			t.Errorf("Explore accepts %+v", *tc.set)
		}
		if s, err := CheckSettings(tc.v, tc.set, 0, tc.mr); err == nil || s != nil {
			t.Errorf("CheckSettings accepts %+v", *tc.set)
		}
	}
	def, _ := policy.ProfileByName(policy.DefaultProfile)
	base := settingsOf(t, `{"baseDelayMs":500}`)
	for _, set := range []*policy.Settings{&def.Settings, base} {
		if err := ValidateSettings(session.Original, set, 2); err != nil {
			t.Errorf("original with %+v: %v", *set, err)
		}
	}
}

// brokenVariant is sound with its rules changed by edit: a planted bug.
func brokenVariant(t *testing.T, name string, edit func(r *retry.Rule)) *session.Variant {
	t.Helper()
	rules := policy.Sound().Rules()
	for i := range rules {
		edit(&rules[i])
	}
	pv, err := retry.NewVariant(name, rules)
	if err != nil {
		t.Fatal(err)
	}
	return &session.Variant{Name: name, Retry: pv, Rules: session.Sound.Rules}
}

// TestPlantedViolations: the explorer finds bugs planted in the new
// features, so a profile's check can fail: a fail-fast end that leaves
// the counter at 1, a fallback whose retry does not count (attempt 0),
// and waits beyond a bound lowered below the cap.
func TestPlantedViolations(t *testing.T) {
	failFast := settingsOf(t, `{"maxBackoffMs":8000,"retryAfter":{"use":"floor","maxWaitMs":10000}}`)
	noReset := brokenVariant(t, "no-reset", func(r *retry.Rule) {
		if r.Event == failFastEvent {
			r.Steps = slices.DeleteFunc(slices.Clone(r.Steps), func(s retry.Step) bool { return s == retry.StepResetAttempt })
		}
	})
	fallback := settingsOf(t, `{"fallback":["m1"]}`)
	noCount := brokenVariant(t, "no-count", func(r *retry.Rule) {
		if r.Event == "fallback" {
			r.Steps = slices.DeleteFunc(slices.Clone(r.Steps), func(s retry.Step) bool { return s == retry.StepIncAttempt })
		}
	})
	for _, tc := range []struct {
		v    *session.Variant
		set  *policy.Settings
		mr   int
		want Invariant
		path []Input
	}{
		{noReset, failFast, 3, InvAttemptZero, []Input{ActPrompt, ReplyHintLong}},
		{noCount, fallback, 1, InvStartAttempts, []Input{ActPrompt, ReplyRetryable, FireTimer, ReplyRetryable}},
	} {
		// The sound table holds with the same settings.
		if sum, err := CheckSettings(session.Sound, tc.set, tc.mr, tc.mr); err != nil || len(sum.Counterexamples) != 0 {
			t.Fatalf("sound with %+v: %v %v", *tc.set, err, sum)
		}
		if _, err := Explore(Options{Variant: tc.v, Settings: tc.set, MaxRetries: tc.mr}); err == nil {
			t.Errorf("%s: opt-in settings accepted on a variant other than sound", tc.v.Name)
		}
		r, err := Explore(Options{Variant: tc.v, Settings: tc.set, MaxRetries: tc.mr, anyVariant: true})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, x := range r.Violations {
			if x.Invariant == tc.want {
				found = true
				if !slices.Equal(x.Path, tc.path) {
					t.Errorf("%s: %s at %v, want %v", tc.v.Name, tc.want, x.Path, tc.path)
				}
			}
		}
		if !found {
			t.Errorf("%s: %s not found (violations %v)", tc.v.Name, tc.want, r.Violations)
		}
	}
	// A counterexample scenario files cannot express (jitter draws) is
	// kept as its path, saying why; another is replayed.
	jit := settingsOf(t, `{"maxBackoffMs":8000,"jitter":{"mode":"updown","ratio":0.2},"retryAfter":{"use":"floor","maxWaitMs":10000}}`)
	for _, set := range []*policy.Settings{jit, failFast} {
		sum, err := check(Options{Variant: noReset, Settings: set, anyVariant: true}, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(sum.Counterexamples) == 0 {
			t.Fatalf("%+v: no counterexample", *set)
		}
		for _, cx := range sum.Counterexamples {
			if set.Jittered() != (cx.Replay == nil) || set.Jittered() != strings.Contains(cx.NotReplayed, "draw") {
				t.Errorf("%+v: %s: replay %v, not replayed %q", *set, cx.Invariant, cx.Replay != nil, cx.NotReplayed)
			}
		}
	}
	// The wait bound: omp-2026-06 waits up to its 8 s cap (down jitter,
	// the draw 0) and up to a hint under floor; a bound of 4 s is broken
	// by the fourth retry's 4 s * 2 = 8 s.
	prof, _ := policy.ProfileByName("omp-2026-06")
	c, err := newConfig(session.Sound, &prof.Settings, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	low := *c
	low.waitBound = 4000
	r := exploreConfig(Options{MaxRetries: 5}, &low)
	if len(r.Violations) != 1 || r.Violations[0].Invariant != InvWaitBound {
		t.Fatalf("violations %v, want wait-bound only", r.Violations)
	}
	if want := []Input{ActPrompt, ReplyRetryable, FireTimer, ReplyRetryable, FireTimer, ReplyRetryable, FireTimer, ReplyRetryable, FireTimer, ReplyRetryable}; !slices.Equal(r.Violations[0].Path, want) {
		t.Errorf("wait-bound at %v, want %v", r.Violations[0].Path, want)
	}
}

// settingsScenario is rp's scenario as sim runs it. The scenario files of
// this build do not read the opt-in settings keys, so the YAML is parsed
// with the original's three keys (which gives every default a parsed file
// has) and the replay's settings are put on the result.
func settingsScenario(t *testing.T, label string, rp *Replay) *scenario.Scenario {
	t.Helper()
	file := *rp.Scenario
	s := file.Settings
	file.Settings = policy.Settings{Enabled: s.Enabled, MaxRetries: s.MaxRetries, BaseDelay: s.BaseDelay}
	sc, err := scenario.Parse(label+".yaml", scenario.Format(&file))
	if err != nil {
		t.Fatalf("%s: %v\n%s", label, err, rp.YAML)
	}
	sc.Settings = s.Clone()
	return sc
}

// TestReplaySettings replays the shortest path to every reachable state
// (extended to quiescence) of the non-jittered profiles that use opt-in
// settings and of settings on every other axis through sim, as
// TestReplayEveryState does for the default settings: hinted replies,
// fail-fast ends, fallbacks (the model in the state key) and persistent
// attempts beyond maxRetries agree with the explorer's prediction.
// Jittered settings are refused with an error saying why.
func TestReplaySettings(t *testing.T) {
	type tc struct {
		name string
		set  *policy.Settings
		mrs  []int
	}
	var cases []tc
	for _, name := range []string{"pi", "opencode", "aider"} {
		p, err := policy.ProfileByName(name)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tc{name, &p.Settings, []int{min(p.Settings.MaxRetries, 3)}})
	}
	for _, ax := range axes {
		cases = append(cases, tc{ax.name, settingsOf(t, ax.json), []int{0, 2}})
	}
	for _, c := range cases {
		for _, mr := range c.mrs {
			r, err := Explore(Options{Settings: c.set, MaxRetries: mr})
			if err != nil {
				t.Fatal(err)
			}
			fails := 0
			for i := 0; i < r.States && fails < 3; i++ {
				label := fmt.Sprintf("%s-mr%d-state%d", c.name, mr, i)
				rp, err := NewReplay(session.Sound, mr, r.PathTo(i), ReplayOptions{Extend: true, Expect: true, Settings: c.set})
				if err != nil {
					t.Errorf("%s: path %v: %v", label, r.PathTo(i), err)
					fails++
					continue
				}
				if !replayScenarioCheck(t, label, rp, settingsScenario(t, label, rp)) {
					fails++
				}
			}
		}
	}
	set := settingsOf(t, jittered[0].json)
	if _, err := NewReplay(session.Sound, 1, []Input{ActPrompt, ReplyRetryable}, ReplayOptions{Settings: set}); err == nil || !strings.Contains(err.Error(), "draw") {
		t.Errorf("a jittered replay: %v, want an error about the draw", err)
	}
	// 333 ms, then 499.5 ms: the second wait is refused.
	set = settingsOf(t, `{"baseDelayMs":333,"backoffFactor":1.5}`)
	path := []Input{ActPrompt, ReplyRetryable, FireTimer, ReplyRetryable}
	if _, err := NewReplay(session.Sound, 2, path[:2], ReplayOptions{Settings: set}); err != nil {
		t.Errorf("a wait of 333 ms: %v", err)
	}
	if _, err := NewReplay(session.Sound, 2, path, ReplayOptions{Settings: set}); err == nil || !strings.Contains(err.Error(), "499.5ms is not a whole number of milliseconds") {
		t.Errorf("a wait of 499.5 ms: %v, want an error saying so", err)
	}
}

// TestKeyIsACongruenceSettings is TestKeyIsACongruence for settings on
// every axis: the state as the core reaches it and the canonical state of
// its key step alike, for every reachable state and input and along
// seeded random walks (in persistent mode up to the saturation: beyond
// it, attempts compare saturated).
func TestKeyIsACongruenceSettings(t *testing.T) {
	var x, y State // stepAlike's copies of a and cs
	for _, ax := range append(slices.Clone(axes), jittered...) {
		set := settingsOf(t, ax.json)
		for mr := 0; mr <= 2; mr++ {
			c, err := newConfig(session.Sound, set, mr, false)
			if err != nil {
				t.Fatal(err)
			}
			shells := func() (*shell, *shell) {
				sa, sc := newConfigShell(session.Sound, c, false), newConfigShell(session.Sound, c, false)
				sa.keep, sc.keep = true, true
				return sa, sc
			}
			r := exploreConfig(Options{MaxRetries: mr}, c)
			sa, sc := shells()
			fails := 0
			for i := 0; i < r.States && fails < 3; i++ {
				a := initial()
				for _, in := range r.PathTo(i) {
					sa.step(&a, in)
				}
				cs := r.State(i)
				if satKeyOf(c, a) != cs.key() {
					t.Fatalf("%s mr=%d: state %d: the path reaches %v, whose key is not the state's %v", ax.name, mr, i, a, cs)
				}
				for in := Input(0); in < numInputs; in++ {
					if x, y = a, cs; !stepAlike(t, ax.name, sa, sc, &x, &y, in) {
						fails++
					}
				}
				sa.records, sc.records = sa.records[:0], sc.records[:0]
			}
			rng := rand.New(rand.NewPCG(11, uint64(mr)))
			for range 50 {
				sa, sc := shells()
				a, cs := initial(), initial()
				for range 60 {
					var ins []Input
					for in := Input(0); in < numInputs; in++ {
						if sa.enabled(&a, in) {
							ins = append(ins, in)
						}
					}
					in := ins[rng.IntN(len(ins))]
					pa, pc := a, cs
					if !stepAlike(t, ax.name, sa, sc, &a, &cs, in) {
						return
					}
					if sa.pruned {
						a, cs = pa, pc
						continue
					}
					c.saturate(&cs)
					k := cs.key()
					cs = k.state()
					sa.records, sc.records = sa.records[:0], sc.records[:0]
				}
			}
		}
	}
}

// satKeyOf is s's key after c's saturation.
func satKeyOf(c *config, s State) key {
	c.saturate(&s)
	return s.key()
}

// TestJitterDraw: the explorer's draw gives each mode its longest wait.
func TestJitterDraw(t *testing.T) {
	for _, mode := range []string{policy.JitterDown, policy.JitterUpDown, policy.JitterFull, policy.JitterEqual} {
		set := policy.Settings{Enabled: true, MaxRetries: 3, BaseDelay: time.Second, Jitter: policy.Jitter{Mode: mode, Ratio: 0.5}}
		w := set.Backoff(1, JitterDraw(mode))
		for _, u := range []float64{0, 0.25, 0.5, 0.75, 0.999} {
			if o := set.Backoff(1, u); o > w {
				t.Errorf("%s: the draw %v waits %v, longer than the explorer's %v", mode, u, o, w)
			}
		}
	}
}

// satRecord is r with its attempts saturated as c saturates the state's
// (from sat on, an attempt number says nothing more).
func (c *config) satRecord(r trace.Record) trace.Record {
	if c.sat > 0 {
		r.Start.Attempt = min(r.Start.Attempt, c.sat)
		r.End.Attempt = min(r.End.Attempt, c.sat)
	}
	return r
}

// TestJitterBothEnds: a jitter range is explored at both ends. Full
// jitter on a 2 s backoff under a 1.5 s maxWaitMs: the longest draw's wait
// (2 s) fails fast, the shortest's (0) retries; the explorer reaches both
// (without reply:retryable:short-draw it saw only the fail-fast end), and
// the invariants hold.
func TestJitterBothEnds(t *testing.T) {
	set := policy.DefaultSettings()
	set.Jitter = policy.Jitter{Mode: policy.JitterFull, Ratio: 1}
	set.RetryAfter.MaxWait = 1500 * time.Millisecond
	c, err := newConfig(session.Sound, &set, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.off&(1<<ReplyRetryableShortDraw) != 0 || c.alpha.reply[ReplyRetryableShortDraw].Draw != 0 ||
		c.alpha.reply[ReplyRetryable].Draw != JitterDraw(policy.JitterFull) {
		t.Fatalf("draws: long %v, short %v (in the alphabet: %t)", c.alpha.reply[ReplyRetryable].Draw,
			c.alpha.reply[ReplyRetryableShortDraw].Draw, c.off&(1<<ReplyRetryableShortDraw) == 0)
	}
	// Usage limits left out: a switched one waits 0 and would retry anyway.
	opt := Options{MaxRetries: 2, without: 1<<ReplyUsageLimitSwitch | 1<<ReplyUsageLimitStay}
	r := exploreConfig(opt, c)
	if len(r.Violations) != 0 {
		t.Fatalf("violations: %v", r.Violations)
	}
	if !reached(r, session.Sound, failFastEvent) || !reached(r, session.Sound, "retry") {
		t.Errorf("fail_fast reached %t, retry reached %t: want both", reached(r, session.Sound, failFastEvent), reached(r, session.Sound, "retry"))
	}
	opt.without |= 1 << ReplyRetryableShortDraw
	if r := exploreConfig(opt, c); reached(r, session.Sound, "retry") {
		t.Error("without the short draw the retry is reached too: the test shows nothing")
	}
	// The default settings' alphabet does not have the input.
	if defaultConfig(3).off&(1<<ReplyRetryableShortDraw) == 0 {
		t.Error("reply:retryable:short-draw in the default alphabet")
	}
}

// specProfileCounts reads SPEC.md §12.6's table: each profile's states
// and transitions, explored at its own maxRetries. The table is where a
// profile's counts are written; the test checks the explorer against it.
func specProfileCounts(t *testing.T) map[string][2]int {
	t.Helper()
	data, err := os.ReadFile("../SPEC.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n### 12.6 ")
	if !ok {
		t.Fatal("SPEC.md has no §12.6")
	}
	sec, _, _ = strings.Cut(sec, "\n### ")
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\| \\d+ \\| (\\d+) \\| (\\d+) \\|")
	counts := map[string][2]int{}
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		states, _ := strconv.Atoi(m[2])
		transitions, _ := strconv.Atoi(m[3])
		counts[m[1]] = [2]int{states, transitions}
	}
	if len(counts) == 0 {
		t.Fatal("SPEC.md §12.6: no profile rows")
	}
	return counts
}
