package sim_test

// Property tests of the opt-in retry settings (issue 11; SPEC.md §1, §1.1,
// §2.1, §6, §8), with pgregory.net/rapid.
//
// Each check draws a whole scenario and runs it with sim.RunScenario:
//
//   - settings from every axis of SPEC §1 (enabled, maxRetries, baseDelayMs
//     with quarter milliseconds, backoffFactor, maxBackoffMs, jitter mode and
//     ratio, retryAfter use / maxHintMs / maxWaitMs, classify, both pattern
//     lists, persistent, fallback), as a JSON patch merged over one of
//     policy.Profiles() by Settings.Apply, as a scenario's settings are;
//   - a seed, or a fixed draw (random.fixed);
//   - scripted replies: retryable errors with and without a wait hint (in a
//     header: retry-after-ms, retry-after as seconds or an HTTP date,
//     x-ratelimit-reset-ms relative or an epoch, x-ratelimit-reset; or in the
//     text: the original's rules, "please retry in", "try again in",
//     "retryDelay") and with or without a status; replies decided by their
//     status and x-should-retry; usage limits that switch credentials or not;
//     quota and billing errors; overflows by text and by usage; fatal errors;
//     stop, length, toolUse and aborted replies; with or without durationMs;
//   - client actions at drawn times: get_state, abort_retry, abort,
//     set_auto_retry on and off, prompts.
//
// The trace is read back with trace.Parse (typed records) and poCheck
// reports each invariant broken, numbered as in poInvariants: (1) every chain that starts ends exactly once and every
// prompt is resolved or rejected exactly once; (2) an auto_retry_end outside
// a chain is only a fail-fast end (attempt 1, "Provider requested ...") or
// the maxRetries-0 end (attempt 0), at once after a retryable reply;
// (3) auto_retry_start attempts count 1, 2, ... and restart at 1 only right
// after retry_fallback (which names the model in use and the next of
// fallback, and is followed by attempt 1 with delayMs 0), maxAttempts is
// maxRetries (0 when persistent); (4) the counter is 0 at rest (get_state,
// final line), get_state's isRetrying, retryAttempt and nextRetryAt follow
// the chain; (5) nothing is retried after an overflow (a reply drawn as an
// overflow is classified one in every mode), only replies the settings
// classify retryable are; (6) no delayMs exceeds maxBackoffMs*(1+ratio) when
// maxBackoffMs > 0 unless a hint in use (retryAfter.use floor or replace,
// within maxHintMs) asks for it, and every delayMs is the one SPEC §1.1
// computes, the jitter draws replayed from the seed (one per retryable
// reply); (7) the same scenario gives a byte-identical trace twice; (8) no
// chain starts or falls back while retry is disabled. sim.CheckSoundTrace
// must accept the trace too.
//
// Each invariant can fail: TestOptInCheckerReportsBadTraces feeds the
// checker hand-made bad traces, one per invariant, and
// TestOptInPropertiesCanFail runs the property with a planted fault (a trace
// mutated, or a wrong belief given to the checker) and requires rapid to
// find a counterexample reported under that invariant.
//
// Budget: rapid's default 100 checks for TestOptInProperties and 20 per
// profile for TestOptInPropertiesPerProfile (-rapid.checks overrides
// both); a check runs a scenario of at most 20 turns and 8 actions twice.
// TestOptInPropertiesCanFail stops at each fault's first counterexample
// (at most 2000 checks; 300 ms of shrinking with -v, none without:
// pbShrinkTime). A longer run:
//
//	go test ./sim -run 'OptInProperties' -rapid.checks=20000

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

const (
	poEpochMs    = 1771200000000 // the scenario default
	poWindow     = 200_000       // the context window of every scenario
	poModel      = "claude-sonnet-4-5"
	poMaxTurns   = 20
	poMaxActions = 8
	// poEps is the tolerance on a wait in milliseconds: the engine works in
	// whole nanoseconds, the checker in float64 milliseconds.
	poEps = 1e-5
)

// poFallbackModels are the fallback models a draw takes a prefix of.
var poFallbackModels = []string{"model-b", "model-c", "model-d"}

// poInvariants names the invariants, by the number poCheck reports.
var poInvariants = [...]string{
	0: "the trace follows the scenario",
	1: "every chain that starts ends exactly once, and every prompt resolves",
	2: "an auto_retry_end without a chain is only a fail-fast or maxRetries-0 end",
	3: "attempts count 1, 2, ... and restart at 1 only right after retry_fallback",
	4: "the attempt counter is 0 at rest",
	5: "overflow never retries; only replies the settings classify retryable do",
	6: "no wait exceeds maxBackoffMs*(1+ratio) unless a hint in use asks for more; each wait is the computed one",
	7: "the same scenario gives a byte-identical trace",
	8: "no chain starts or falls back while retry is disabled",
}

// ---- drawn replies ----

// poTurn is a scripted reply and what the tests know of it by construction.
type poTurn struct {
	Turn     scenario.Turn
	Kind     string // what it was drawn as (poKinds)
	Overflow bool   // a context overflow (by text, or by usage over the window)
	// Hint is the wait hint the reply carries (ms), when HasHint; with
	// HintAbs it is an epoch time in ms, and the hint is Hint minus the
	// reply's time (whole ms), at least 0.
	Hint             float64
	HasHint, HintAbs bool
}

func (p poTurn) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s{%s", p.Kind, p.Turn.StopReason)
	if p.Turn.ErrorMessage != "" {
		fmt.Fprintf(&b, " %q", p.Turn.ErrorMessage)
	}
	if p.Turn.Status != 0 {
		fmt.Fprintf(&b, " status %d", p.Turn.Status)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Turn.Headers)) {
		fmt.Fprintf(&b, " %s: %q", k, p.Turn.Headers[k])
	}
	if p.Turn.Usage != (scenario.Usage{}) {
		fmt.Fprintf(&b, " usage %d+%d", p.Turn.Usage.Input, p.Turn.Usage.CacheRead)
	}
	if p.Turn.SwitchModel {
		b.WriteString(" switch")
	}
	if p.Turn.Duration > 0 {
		fmt.Fprintf(&b, " %dms", p.Turn.Duration.Milliseconds())
	}
	if p.HasHint {
		fmt.Fprintf(&b, " hint %v", p.Hint)
		if p.HintAbs {
			b.WriteString(" (epoch)")
		}
	}
	b.WriteString("}")
	return b.String()
}

// GoString keeps rapid's logs short.
func (p poTurn) GoString() string { return p.String() }

// hintAt is the wait hint of the reply delivered at t.
func (p *poTurn) hintAt(t time.Duration) (float64, bool) {
	if !p.HasHint {
		return 0, false
	}
	if !p.HintAbs {
		return p.Hint, true
	}
	return math.Max(0, p.Hint-float64(poEpochMs+t.Milliseconds())), true
}

// poHint is a wait hint: a header (Header, Value) or a text appended to the
// message, and its value.
type poHint struct {
	Header, Value, Text string
	Ms                  float64
	Abs                 bool
}

var poHintUnits = []struct {
	name string
	ms   float64
}{
	{"ms", 1}, {"milliseconds", 1}, {"s", 1000}, {"sec", 1000}, {"seconds", 1000},
	{"m", 60_000}, {"min", 60_000}, {"minutes", 60_000}, {"h", 3_600_000}, {"hours", 3_600_000},
}

func poNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// poHintGen draws a hint in each form SPEC §1.1 step 5 reads.
func poHintGen() *rapid.Generator[poHint] {
	return rapid.Custom(func(t *rapid.T) poHint {
		n := func(label string, hi int) float64 { return float64(rapid.IntRange(0, hi).Draw(t, label)) }
		switch rapid.IntRange(0, 9).Draw(t, "hintForm") {
		case 0:
			v := n("ms", 200_000)
			return poHint{Header: "retry-after-ms", Value: poNum(v), Ms: v}
		case 1:
			v := n("s", 400)
			return poHint{Header: "retry-after", Value: poNum(v), Ms: v * 1000}
		case 2: // an HTTP date, relative to the reply's virtual time
			at := time.UnixMilli(poEpochMs).Add(time.Duration(n("dateS", 600)) * time.Second).UTC()
			return poHint{Header: "retry-after", Value: at.Format(poHTTPDate), Ms: float64(at.UnixMilli()), Abs: true}
		case 3:
			v := n("ms", 200_000)
			return poHint{Header: "x-ratelimit-reset-ms", Value: poNum(v), Ms: v}
		case 4: // an epoch in ms
			v := poEpochMs + n("ms", 600_000)
			return poHint{Header: "x-ratelimit-reset-ms", Value: poNum(v), Ms: v, Abs: true}
		case 5:
			v := n("s", 400)
			return poHint{Header: "x-ratelimit-reset", Value: poNum(v), Ms: v * 1000}
		case 6: // the original's text rule
			v := n("ms", 200_000)
			return poHint{Text: ", retry-after-ms=" + poNum(v), Ms: v}
		case 7:
			v := n("n", 300)
			if rapid.Bool().Draw(t, "seconds") {
				return poHint{Text: ". Please retry in " + poNum(v) + "s", Ms: v * 1000}
			}
			return poHint{Text: ". Please retry in " + poNum(v) + "ms", Ms: v}
		case 8:
			v := n("n", 10) + 0.5
			u := rapid.SampledFrom(poHintUnits).Draw(t, "unit")
			return poHint{Text: ". Try again in " + poNum(v) + " " + u.name, Ms: v * u.ms}
		default:
			v := n("s", 100)
			return poHint{Text: ` {"retryDelay": "` + poNum(v) + `s"}`, Ms: v * 1000}
		}
	})
}

// Replies decided by their status (in status and strict modes).
var poStatusReplies = []struct {
	msg         string
	status      int
	shouldRetry string // x-should-retry ("": none)
}{
	{"rate limited", 429, ""}, {"conflict", 409, ""}, {"request timeout", 408, ""}, {"", 503, ""},
	{"bad request", 400, ""}, {"not found", 404, ""}, {"conflict", 409, "false"}, {"bad request", 400, "true"},
	{"Request timed out.", 0, ""}, {"upstream connect error", 502, "false"}, {"HTTP 500: oops", 500, ""},
}

// Quota and billing errors (not retried in strict mode).
var poQuotaMsgs = []string{
	"429 insufficient_quota: You exceeded your current quota",
	"billing hard limit reached",
	"Your credit balance is too low to access the API",
	"out of budget (503)",
}

// The kinds of reply, weighted by repetition.
var poKinds = []string{
	"retryable", "retryable", "retryable", "retryable", "status", "status", "usage", "usage", "quota",
	"overflowText", "overflowUsage", "fatal", "aborted", "stop", "stop", "stopOver", "toolUse",
}

func poTurnGen() *rapid.Generator[poTurn] {
	return rapid.Custom(func(t *rapid.T) poTurn {
		p := poTurn{Kind: rapid.SampledFrom(poKinds).Draw(t, "kind")}
		tu := &p.Turn
		tu.StopReason = policy.StopReasonError
		header := func(name, value string) {
			if tu.Headers == nil {
				tu.Headers = map[string]string{}
			}
			tu.Headers[name] = value
		}
		// hint adds a hint in a header, or (text true) in a header or the
		// text; a header hint wins over the text's.
		hint := func(text bool) {
			if !rapid.Bool().Draw(t, "hinted") {
				return
			}
			h := poHintGen().Draw(t, "hint")
			if h.Header == "" && !text {
				return
			}
			if h.Header != "" {
				header(h.Header, h.Value)
			} else {
				tu.ErrorMessage += h.Text
			}
			p.Hint, p.HasHint, p.HintAbs = h.Ms, true, h.Abs
		}
		status := func(statuses ...int) { tu.Status = rapid.SampledFrom(statuses).Draw(t, "status") }
		switch p.Kind {
		case "retryable":
			tu.ErrorMessage = rapid.SampledFrom(pbRetryableMsgs).Draw(t, "msg")
			status(0, 0, 429, 500, 503, 529, 400)
			hint(true)
		case "status":
			s := rapid.SampledFrom(poStatusReplies).Draw(t, "reply")
			tu.ErrorMessage, tu.Status = s.msg, s.status
			if s.shouldRetry != "" {
				header("x-should-retry", s.shouldRetry)
			}
			hint(true)
		case "usage":
			u := rapid.SampledFrom(pbUsageMsgs).Draw(t, "msg")
			tu.ErrorMessage, tu.SwitchModel = u.msg, rapid.Bool().Draw(t, "switchModel")
			p.Hint, p.HasHint = u.after, u.has
			status(0, 429)
			hint(false) // a header only: the text's own hint is known
		case "quota":
			tu.ErrorMessage = rapid.SampledFrom(poQuotaMsgs).Draw(t, "msg")
			status(0, 429, 400, 503)
			hint(false)
		case "overflowText":
			tu.ErrorMessage, p.Overflow = rapid.SampledFrom(pbOverflowMsgs).Draw(t, "msg"), true
			status(0, 400, 413)
			hint(false)
		case "overflowUsage":
			msgs := append(append([]string{}, pbRetryableMsgs...), pbFatalMsgs...)
			tu.ErrorMessage, tu.Usage, p.Overflow = rapid.SampledFrom(msgs).Draw(t, "msg"), pbOverUsage, true
			status(0, 429, 529)
			hint(true)
		case "fatal":
			tu.ErrorMessage = rapid.SampledFrom(pbFatalMsgs).Draw(t, "msg")
			status(0, 400, 401, 404)
		case "aborted":
			tu.StopReason = policy.StopReasonAborted
			tu.ErrorMessage = rapid.SampledFrom([]string{"", session.AbortedMessage}).Draw(t, "msg")
		case "stop":
			tu.StopReason = rapid.SampledFrom([]policy.StopReason{policy.StopReasonStop, policy.StopReasonLength}).Draw(t, "stop")
		case "stopOver":
			tu.StopReason, tu.Usage = policy.StopReasonStop, pbOverUsage
		case "toolUse":
			tu.StopReason = policy.StopReasonToolUse
		}
		if rapid.Bool().Draw(t, "timed") {
			tu.Duration = time.Duration(rapid.IntRange(1, 3000).Draw(t, "durationMs")) * time.Millisecond
		}
		return p
	})
}

// poTurnRun is a reply repeated N times.
type poTurnRun struct {
	Turn poTurn
	N    int
}

func (r poTurnRun) GoString() string { return fmt.Sprintf("%dx%v", r.N, r.Turn) }

func poRunGen() *rapid.Generator[poTurnRun] {
	return rapid.Custom(func(t *rapid.T) poTurnRun {
		return poTurnRun{Turn: poTurnGen().Draw(t, "turn"), N: rapid.IntRange(1, 4).Draw(t, "times")}
	})
}

// ---- drawn settings ----

// poSettings is drawn settings: the profile started from, the JSON patch
// merged over its settings, and the result.
type poSettings struct {
	Profile  string
	Patch    []byte
	Settings policy.Settings
}

func (s poSettings) String() string   { return fmt.Sprintf("%s + %s", s.Profile, s.Patch) }
func (s poSettings) GoString() string { return s.String() }

var (
	poRetryablePatterns    = []string{"overloaded", "ECONNRESET", "timed? out", ".", "quota", "(^|[^0-9])5[0-9][0-9]([^0-9]|$)", "rate.?limit", "bad request"}
	poNonRetryablePatterns = []string{"insufficient_quota", "usage.?limit", "(^|[^0-9])429([^0-9]|$)", "billing", "overloaded", "not found", "503"}
)

// poSettingsGen draws a profile among names and patches each axis of SPEC
// §1 with probability 1/2 (nested objects key by key). The patch keeps the
// settings valid: a cap below the base, or persistent without a cap, is
// lifted to base + 1..20000 ms (Validate's errors are tested elsewhere).
func poSettingsGen(names []string) *rapid.Generator[poSettings] {
	return rapid.Custom(func(t *rapid.T) poSettings {
		name := rapid.SampledFrom(names).Draw(t, "profile")
		prof, err := policy.ProfileByName(name)
		if err != nil {
			t.Fatalf("profile %q: %v", name, err)
		}
		axis := func(label string) bool { return rapid.Bool().Draw(t, label) }
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		patch := map[string]any{}
		if rapid.IntRange(0, 15).Draw(t, "disabledIf15") == 15 {
			patch["enabled"] = false
		}
		if axis("maxRetries?") {
			patch["maxRetries"] = rapid.IntRange(0, 6).Draw(t, "maxRetries")
		}
		base, capd, persistent := prof.Settings.BaseDelay, prof.Settings.MaxBackoff, prof.Settings.Persistent
		if axis("baseDelay?") {
			q := rapid.IntRange(0, 12_000).Draw(t, "baseDelayQuarterMs")
			base = time.Duration(q) * time.Millisecond / 4
			patch["baseDelayMs"] = ms(base)
		}
		if axis("backoffFactor?") {
			if axis("roundFactor") {
				patch["backoffFactor"] = rapid.SampledFrom([]float64{1, 1.5, 2, 3, 4}).Draw(t, "backoffFactor")
			} else {
				patch["backoffFactor"] = rapid.Float64Range(1, 4).Draw(t, "backoffFactor")
			}
		}
		if axis("maxBackoff?") {
			capd = 0
			if axis("capped") {
				capd = base + time.Duration(rapid.IntRange(0, 20_000).Draw(t, "capOverBaseMs"))*time.Millisecond
			}
			patch["maxBackoffMs"] = ms(capd)
		}
		if axis("jitter?") {
			j := map[string]any{}
			if axis("jitter.mode?") {
				j["mode"] = rapid.SampledFrom([]string{policy.JitterNone, policy.JitterDown, policy.JitterUpDown, policy.JitterFull, policy.JitterEqual}).Draw(t, "jitter.mode")
			}
			if axis("jitter.ratio?") {
				if axis("jitter.ratioEdge") {
					j["ratio"] = rapid.SampledFrom([]float64{0, 1}).Draw(t, "jitter.ratio")
				} else {
					j["ratio"] = rapid.Float64Range(0, 1).Draw(t, "jitter.ratio")
				}
			}
			patch["jitter"] = j
		}
		if axis("retryAfter?") {
			ra := map[string]any{}
			if axis("retryAfter.use?") {
				ra["use"] = rapid.SampledFrom([]string{policy.HintIgnore, policy.HintFloor, policy.HintReplace}).Draw(t, "retryAfter.use")
			}
			if axis("retryAfter.maxHint?") {
				ra["maxHintMs"] = rapid.SampledFrom([]int{0, rapid.IntRange(1, 120_000).Draw(t, "maxHintMs")}).Draw(t, "retryAfter.maxHintMs")
			}
			if axis("retryAfter.maxWait?") {
				switch rapid.IntRange(0, 2).Draw(t, "retryAfter.maxWaitKind") {
				case 0:
					ra["maxWaitMs"] = 0
				case 1:
					ra["maxWaitMs"] = rapid.IntRange(1, 30_000).Draw(t, "retryAfter.maxWaitMs")
				default: // a few backoffs long: chains reach it
					ra["maxWaitMs"] = ms(base) * float64(rapid.IntRange(1, 8).Draw(t, "retryAfter.maxWaitOverBase"))
				}
			}
			patch["retryAfter"] = ra
		}
		if axis("classify?") {
			patch["classify"] = rapid.SampledFrom([]string{policy.ClassifyMessage, policy.ClassifyStatus, policy.ClassifyStrict}).Draw(t, "classify")
		}
		if axis("retryablePatterns?") {
			patch["retryablePatterns"] = rapid.SliceOfNDistinct(rapid.SampledFrom(poRetryablePatterns), 0, 3, rapid.ID[string]).Draw(t, "retryablePatterns")
		}
		if axis("nonRetryablePatterns?") {
			patch["nonRetryablePatterns"] = rapid.SliceOfNDistinct(rapid.SampledFrom(poNonRetryablePatterns), 0, 3, rapid.ID[string]).Draw(t, "nonRetryablePatterns")
		}
		if axis("persistent?") {
			persistent = rapid.Bool().Draw(t, "persistent")
			patch["persistent"] = persistent
		}
		if axis("fallback?") {
			patch["fallback"] = poFallbackModels[:rapid.IntRange(0, len(poFallbackModels)).Draw(t, "fallbacks")]
		}
		if (capd > 0 && capd < base) || (persistent && capd == 0) {
			capd = base + time.Duration(rapid.IntRange(1, 20_000).Draw(t, "liftedCapOverBaseMs"))*time.Millisecond
			patch["maxBackoffMs"] = ms(capd)
		}
		b, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		set, err := prof.Settings.Apply(b)
		if err != nil {
			t.Fatalf("%s.Apply(%s): %v", name, b, err)
		}
		if err := set.Validate(); err != nil {
			t.Fatalf("%s + %s: %v", name, b, err)
		}
		return poSettings{Profile: name, Patch: b, Settings: set}
	})
}

// ---- drawn scenarios ----

// poPlan is a drawn scenario.
type poPlan struct {
	Set           poSettings
	Seed          int64
	Fixed         float64
	HasFixed      bool
	Compaction    scenario.Compaction
	Turns         []poTurn
	Actions       []scenario.Action
	PromptsIssued int // the initial prompt and the prompt actions
}

var poActionKinds = []string{"get_state", "get_state", "abort_retry", "abort", "set_auto_retry", "prompt", "prompt"}

func poDrawPlan(t *rapid.T, profiles []string) *poPlan {
	p := &poPlan{Set: poSettingsGen(profiles).Draw(t, "settings")}
	if rapid.IntRange(0, 3).Draw(t, "fixedIf0") == 0 {
		p.HasFixed = true
		p.Fixed = rapid.SampledFrom([]float64{0, 0.5, math.Nextafter(1, 0), rapid.Float64Range(0, 0.999999).Draw(t, "u")}).Draw(t, "random.fixed")
	} else {
		p.Seed = int64(rapid.IntRange(1, 1<<30).Draw(t, "seed"))
	}
	p.Compaction = scenario.Compaction{Enabled: rapid.IntRange(0, 3).Draw(t, "compactionOffIf0") > 0,
		Succeed: rapid.IntRange(0, 3).Draw(t, "compactionFailsIf0") > 0}
	// Runs of the same reply, so that chains grow long (to their count,
	// their ceiling or their fallbacks).
	for _, run := range rapid.SliceOfN(poRunGen(), 1, poMaxTurns/2).Draw(t, "turns") {
		for range run.N {
			if len(p.Turns) < poMaxTurns {
				p.Turns = append(p.Turns, run.Turn)
			}
		}
	}
	n := rapid.IntRange(0, poMaxActions).Draw(t, "actions")
	p.PromptsIssued = 1
	for i := range n {
		scale := rapid.SampledFrom([]int{300, 5000, 60_000}).Draw(t, "timeScale")
		a := scenario.Action{At: time.Duration(rapid.IntRange(0, scale).Draw(t, "at")) * time.Millisecond,
			Do: rapid.SampledFrom(poActionKinds).Draw(t, "do"), ID: "a" + strconv.Itoa(i)}
		switch a.Do {
		case "set_auto_retry":
			en := rapid.Bool().Draw(t, "enabled")
			a.Enabled = &en
		case "prompt":
			a.Message = "p" + strconv.Itoa(i)
			p.PromptsIssued++
		}
		p.Actions = append(p.Actions, a)
	}
	return p
}

// scenario builds the plan's scenario (a new one at each call).
func (p *poPlan) scenario() *scenario.Scenario {
	sc, err := scenario.Parse("property-optin.yaml", []byte("{}"))
	if err != nil {
		panic(err)
	}
	sc.Profile = p.Set.Profile
	sc.SettingsPatch = slices.Clone(p.Set.Patch)
	sc.Settings = p.Set.Settings.Clone()
	sc.Seed, sc.RandomFixed, sc.HasRandomFixed = p.Seed, p.Fixed, p.HasFixed
	sc.Compaction = p.Compaction
	sc.ContextWindow = poWindow
	for _, pt := range p.Turns {
		tu := pt.Turn
		tu.Headers = maps.Clone(tu.Headers)
		sc.Turns = append(sc.Turns, tu)
	}
	for _, a := range p.Actions {
		if a.Enabled != nil {
			en := *a.Enabled
			a.Enabled = &en
		}
		sc.Actions = append(sc.Actions, a)
	}
	return sc
}

// checkCase is what the checker is told of the plan.
func (p *poPlan) checkCase() *poCase {
	return &poCase{Settings: p.Set.Settings.Clone(), Turns: slices.Clone(p.Turns), Actions: p.Actions,
		Seed: p.Seed, Fixed: p.Fixed, HasFixed: p.HasFixed, Prompts: p.PromptsIssued}
}

// poRun runs sc to quiescence; a scenario that cannot run or does not end
// fails t.
func poRun(t interface{ Fatalf(string, ...any) }, sc *scenario.Scenario) *sim.Result {
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Fatalf("RunScenario: %v\n%s", err, scenario.Format(sc))
	}
	if res.RunErr != nil {
		t.Fatalf("RunScenario: %v\n%s", res.RunErr, scenario.Format(sc))
	}
	return res
}

// ---- the checker ----

// poCase is what the checker knows besides the trace.
type poCase struct {
	Settings policy.Settings
	Turns    []poTurn
	Actions  []scenario.Action
	Seed     int64
	Fixed    float64
	HasFixed bool
	Prompts  int // prompts issued (numbered 1..Prompts)
}

// poViolation is a broken invariant.
type poViolation struct {
	Inv  int    // its number in poInvariants
	Line int    // the 1-based trace line (0: the trace as a whole)
	What string // what was seen
}

func (v poViolation) String() string {
	return fmt.Sprintf("invariant %d (%s): line %d: %s", v.Inv, poInvariants[v.Inv], v.Line, v.What)
}

// poReply is a reply the trace shows (a message_end) and what is known of it.
type poReply struct {
	T          time.Duration
	Msg        string
	Class      classify.Class
	UsageLimit bool
	Turn       *poTurn // nil: an abort's reply, or a reply after the turns ran out
	U          float64 // its jitter draw
}

func (r *poReply) hint() (float64, bool) {
	if r.Turn == nil {
		return 0, false
	}
	return r.Turn.hintAt(r.T)
}

type poChecker struct {
	c    *poCase
	vs   []poViolation
	line int
}

// poMaxViolations bounds the violations a check reports.
const poMaxViolations = 20

// fail records a violation of invariant inv.
func (k *poChecker) fail(inv int, format string, args ...any) {
	if len(k.vs) < poMaxViolations {
		k.vs = append(k.vs, poViolation{Inv: inv, Line: k.line, What: fmt.Sprintf(format, args...)})
	}
}

func poMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func poNear(got, want float64) bool { return math.Abs(got-want) <= poEps+1e-12*math.Abs(want) }

// poBackoff is SPEC §1.1 steps 2 and 3 in float64 milliseconds, written
// out here (not policy's): b = base * factor^(k-1), capped, jittered with u.
func poBackoff(set *policy.Settings, k int, u float64) float64 {
	f := set.BackoffFactor
	if f == 0 {
		f = 2
	}
	b := poMs(set.BaseDelay) * math.Pow(f, float64(k-1))
	if set.MaxBackoff > 0 {
		b = math.Min(b, poMs(set.MaxBackoff))
	}
	r := set.Jitter.Ratio
	switch set.Jitter.Mode {
	case policy.JitterDown:
		b *= 1 - r*u
	case policy.JitterUpDown:
		b *= 1 + r*(2*u-1)
	case policy.JitterFull:
		b *= u
	case policy.JitterEqual:
		b = b/2 + b/2*u
	}
	return b
}

// poCheck checks the invariants on a trace of c's scenario (sound
// variant) and returns the violations (at most poMaxViolations), in trace
// order.
func poCheck(c *poCase, records []trace.Record) []poViolation {
	k := &poChecker{c: c}
	set := &c.Settings
	cls, err := classify.NewClassifier(set.Classify, set.RetryablePatterns, set.NonRetryablePatterns)
	if err != nil {
		k.fail(0, "settings: %v", err)
		return k.vs
	}
	// The jitter draws, replayed: one per retryable reply while a mode is on.
	draw := rand.New(rand.NewPCG(uint64(max(c.Seed, 1)), 0)).Float64
	if c.HasFixed {
		draw = func() float64 { return c.Fixed }
	}
	enabledByID := map[string]bool{}
	for _, a := range c.Actions {
		if a.Enabled != nil {
			enabledByID[a.ID] = *a.Enabled
		}
	}
	var (
		enabled       = set.Enabled
		open          bool // a chain is open
		attempt       int  // the chain's last attempt
		afterFallback bool // a retry_fallback awaits its auto_retry_start
		model         = poModel
		nextModel     int // the index in fallback of the next model
		nME           int // message_end lines so far
		last          *poReply
		switched      bool // auth storage switched credentials for the last reply
		startT        time.Duration
		startDelay    float64
		answered      = map[int]int{} // prompt -> prompt_resolved and prompt_rejected lines
		final         bool
	)
	// triggered checks that what (a start or a fallback) at t follows a
	// retryable reply of the same instant.
	triggered := func(what string, t time.Duration) {
		switch {
		case last == nil:
			k.fail(5, "%s with no reply before it", what)
		case last.Turn != nil && last.Turn.Overflow:
			k.fail(5, "%s after an overflow reply %v", what, *last.Turn)
		case last.Class == classify.ClassOverflow:
			k.fail(5, "%s after a reply classified overflow (%q)", what, last.Msg)
		case last.Class != classify.ClassRetryable:
			k.fail(5, "%s after a reply the settings classify %v (%q)", what, last.Class, last.Msg)
		case last.T != t:
			k.fail(5, "%s at %v, its reply at %v", what, t, last.T)
		}
	}
	for i := range records {
		r := &records[i]
		k.line = i + 1
		switch r.Type {
		case trace.AgentRun:
			if r.Model != model {
				k.fail(3, "agent_run model %q, the model in use is %q", r.Model, model)
			}
		case trace.MessageEnd:
			n := nME
			nME++
			rep := &poReply{T: r.T, Msg: r.Message.ErrorMessage}
			switch {
			case n < len(c.Turns) && r.Message.StopReason == c.Turns[n].Turn.StopReason && r.Message.ErrorMessage == c.Turns[n].Turn.ErrorMessage:
				rep.Turn = &c.Turns[n]
				o := cls.Reply(rep.Turn.Turn.Reply(), poWindow, time.UnixMilli(poEpochMs).Add(r.T))
				rep.Class, rep.UsageLimit = o.Class, o.UsageLimit
				if rep.Turn.Overflow && r.Message.StopReason == policy.StopReasonError && o.Class != classify.ClassOverflow {
					k.fail(5, "reply %v, drawn as an overflow, is classified %v", *rep.Turn, o.Class)
				}
				if o.Class == classify.ClassRetryable && set.Jittered() {
					rep.U = draw()
				}
			case r.Message.StopReason == policy.StopReasonAborted && r.Message.ErrorMessage == session.AbortedMessage:
				rep.Class = classify.ClassAborted
			case n >= len(c.Turns) && r.Message.StopReason == policy.StopReasonStop && r.Message.ErrorMessage == "":
				rep.Class = classify.ClassSuccess
			default:
				k.fail(0, "message_end #%d {%s %q} is neither turn %d nor an abort", n+1, r.Message.StopReason, r.Message.ErrorMessage, n)
			}
			if r.Model != model {
				k.fail(3, "message_end model %q, the model in use is %q", r.Model, model)
			}
			last, switched = rep, false
		case trace.MarkUsageLimitReached:
			switched = r.UsageLimit.Returns
		case trace.RetryFallback:
			if !enabled {
				k.fail(8, "retry_fallback while retry is disabled")
			}
			triggered("retry_fallback", r.T)
			if nextModel >= len(set.Fallback) {
				k.fail(3, "retry_fallback %+v with no fallback model left (fallback %q)", r.Fallback, set.Fallback)
			} else if r.Fallback.From != model || r.Fallback.To != set.Fallback[nextModel] {
				k.fail(3, "retry_fallback %+v, want from %q to %q", r.Fallback, model, set.Fallback[nextModel])
			}
			model = r.Fallback.To
			nextModel++
			open, attempt, afterFallback = true, 0, true
		case trace.AutoRetryStart:
			s := &r.Start
			if !enabled {
				k.fail(8, "auto_retry_start attempt %d while retry is disabled", s.Attempt)
			}
			triggered("auto_retry_start", r.T)
			if last != nil && s.ErrorMessage != last.Msg {
				k.fail(5, "auto_retry_start errorMessage %q, the reply's is %q", s.ErrorMessage, last.Msg)
			}
			switch {
			case afterFallback:
				if s.Attempt != 1 || s.DelayMs != 0 {
					k.fail(3, "after retry_fallback: auto_retry_start attempt %d delayMs %v, want attempt 1, delayMs 0", s.Attempt, s.DelayMs)
				}
			case open && s.Attempt != attempt+1:
				k.fail(3, "auto_retry_start attempt %d in a chain at attempt %d (a restart at 1 only right after retry_fallback)", s.Attempt, attempt)
			case !open && s.Attempt != 1:
				k.fail(3, "a chain starts at attempt %d", s.Attempt)
			}
			wantMax := set.MaxRetries
			if set.Persistent {
				wantMax = 0
			}
			if s.MaxAttempts != wantMax {
				k.fail(3, "maxAttempts %d, want %d (maxRetries %d, persistent %v)", s.MaxAttempts, wantMax, set.MaxRetries, set.Persistent)
			}
			unbounded := set.Persistent && (last == nil || !last.UsageLimit)
			if !afterFallback && !unbounded && s.Attempt > set.MaxRetries {
				k.fail(3, "attempt %d beyond maxRetries %d", s.Attempt, set.MaxRetries)
			}
			if !afterFallback && last != nil {
				k.checkWait(s, last, switched)
			}
			open, attempt, afterFallback = true, s.Attempt, false
			startT, startDelay, switched = r.T, s.DelayMs, false
		case trace.AutoRetryEnd:
			e := &r.End
			failFast := !e.Success && strings.HasPrefix(e.FinalError, "Provider requested ")
			switch {
			case afterFallback:
				k.fail(3, "auto_retry_end right after retry_fallback, with no auto_retry_start")
			case open:
				if e.Attempt != attempt && !(failFast && e.Attempt == attempt+1) {
					k.fail(3, "auto_retry_end attempt %d (%q) in a chain at attempt %d", e.Attempt, e.FinalError, attempt)
				}
			default:
				k.checkEndOutside(e, r.T, last, enabled, nextModel)
			}
			open, attempt, afterFallback = false, 0, false
		case trace.PromptResolved, trace.PromptRejected:
			if r.Prompt < 1 || r.Prompt > c.Prompts {
				k.fail(1, "%s of prompt %d; prompts issued: %d", r.Type, r.Prompt, c.Prompts)
			}
			answered[r.Prompt]++
		case trace.Response:
			p := &r.Response
			if p.Command == "set_auto_retry" && p.Success {
				enabled = enabledByID[p.ID]
			}
			if !p.HasState {
				break
			}
			st := &p.State
			rest := st.RetryState == policy.StateIdle || st.RetryState == policy.StateExhausted || st.RetryState == policy.StateCancelled
			switch {
			case st.IsRetrying != open:
				k.fail(4, "get_state isRetrying %v, the trace's chain is open: %v", st.IsRetrying, open)
			case (!st.IsRetrying || rest) && st.RetryAttempt != 0:
				k.fail(4, "get_state at rest (state %s, isRetrying %v) with retryAttempt %d", st.RetryState, st.IsRetrying, st.RetryAttempt)
			case st.IsRetrying && st.RetryAttempt != attempt:
				k.fail(4, "get_state retryAttempt %d in a chain at attempt %d", st.RetryAttempt, attempt)
			case st.HasNextRetryAt != (st.RetryState == policy.StateBackoff):
				k.fail(4, "get_state in state %s with nextRetryAt present: %v", st.RetryState, st.HasNextRetryAt)
			case st.HasNextRetryAt && !poNear(st.NextRetryAt, poMs(startT)+startDelay):
				k.fail(4, "get_state nextRetryAt %v, the wait started at %v for %v ms", st.NextRetryAt, startT, startDelay)
			}
			if st.AutoRetryEnabled != enabled {
				k.fail(8, "get_state autoRetryEnabled %v, want %v", st.AutoRetryEnabled, enabled)
			}
		case trace.Final:
			final = true
			f := &r.Final
			if open || f.IsRetrying {
				k.fail(1, "a chain is still open at the end (trace %v, isRetrying %v)", open, f.IsRetrying)
			}
			if len(f.UnresolvedPrompts) > 0 {
				k.fail(1, "prompts %v unresolved at the end", f.UnresolvedPrompts)
			}
			for n := 1; n <= c.Prompts; n++ {
				if answered[n] != 1 {
					k.fail(1, "prompt %d resolved or rejected %d times, want once", n, answered[n])
				}
			}
			if f.Attempt != 0 {
				k.fail(4, "final attempt %d", f.Attempt)
			}
			if i != len(records)-1 {
				k.fail(0, "the final line is not the last")
			}
		}
	}
	if !final {
		k.line = 0
		k.fail(1, "no final line: the session did not end")
	}
	return k.vs
}

// checkWait checks a start's delayMs (invariant 6) against SPEC §1.1's
// computation for the reply rep.
func (k *poChecker) checkWait(s *policy.AutoRetryStart, rep *poReply, switched bool) {
	set := &k.c.Settings
	d := s.DelayMs
	if switched {
		if d != 0 {
			k.fail(6, "attempt %d delayMs %v after a credential switch, want 0", s.Attempt, d)
		}
		return
	}
	h, hasHint := rep.hint()
	ra := &set.RetryAfter
	used := hasHint && (ra.Use == policy.HintFloor || ra.Use == policy.HintReplace) && (ra.MaxHint <= 0 || h <= poMs(ra.MaxHint))
	if set.MaxBackoff > 0 {
		if bound := poMs(set.MaxBackoff) * (1 + set.Jitter.Ratio); d > bound+poEps && !(used && poNear(d, h)) {
			k.fail(6, "attempt %d delayMs %v exceeds maxBackoffMs*(1+ratio) = %v, and no hint in use asks for it (hint %v %v, use %q, maxHintMs %v)",
				s.Attempt, d, bound, h, hasHint, ra.Use, poMs(ra.MaxHint))
			return
		}
	}
	b := poBackoff(set, s.Attempt, rep.U)
	want := b
	if used {
		if ra.Use == policy.HintReplace {
			want = h
		} else {
			want = math.Max(b, h)
		}
	}
	if !poNear(d, want) {
		k.fail(6, "attempt %d delayMs %v, want %v (backoff %v with draw %v; hint %v %v used %v)", s.Attempt, d, want, b, rep.U, h, hasHint, used)
	}
}

// checkEndOutside checks an auto_retry_end outside a chain (invariant 2):
// only at once after a retryable reply, and only the maxRetries-0 end or
// a fail-fast, with no fallback model left.
func (k *poChecker) checkEndOutside(e *policy.AutoRetryEnd, t time.Duration, rep *poReply, enabled bool, nextModel int) {
	set := &k.c.Settings
	bad := func(why string) {
		k.fail(2, "auto_retry_end {success %v, attempt %d, %q} without a chain: %s", e.Success, e.Attempt, e.FinalError, why)
	}
	switch {
	case e.Success:
		bad("a success")
		return
	case rep == nil || rep.T != t || rep.Class != classify.ClassRetryable || (rep.Turn != nil && rep.Turn.Overflow):
		bad("not at once after a retryable reply")
		return
	case !enabled:
		bad("retry is disabled")
		return
	case nextModel < len(set.Fallback):
		bad("a fallback model is left")
		return
	}
	msg := rep.Msg
	if msg == "" {
		msg = policy.UnknownError
	}
	switch e.Attempt {
	case 0: // maxRetries 0
		if set.MaxRetries != 0 || (set.Persistent && !rep.UsageLimit) {
			bad(fmt.Sprintf("attempt 0 with maxRetries %d, persistent %v", set.MaxRetries, set.Persistent))
		} else if e.FinalError != msg {
			bad(fmt.Sprintf("finalError is not the reply's %q", msg))
		}
	case 1: // fail-fast
		if set.RetryAfter.MaxWait <= 0 {
			bad("a fail-fast end with no maxWaitMs")
		} else if !strings.HasPrefix(e.FinalError, "Provider requested ") ||
			!strings.HasSuffix(e.FinalError, fmt.Sprintf("exceeds retry.maxDelayMs (%sms). Original error: %s", poNum(poMs(set.RetryAfter.MaxWait)), rep.Msg)) {
			bad("attempt 1 without the fail-fast text")
		}
	default:
		bad("attempt above 1")
	}
}

// poSame checks invariant 7 on two traces of the same scenario.
func poSame(a, b []byte) []poViolation {
	if bytes.Equal(a, b) {
		return nil
	}
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return []poViolation{{Inv: 7, Line: i + 1, What: fmt.Sprintf("the two runs differ:\n  %s\n  %s", x, y)}}
		}
	}
	return []poViolation{{Inv: 7, What: "the two runs differ"}}
}

// ---- the property ----

// poFault is a planted fault: it mutates the trace, or the checker's
// case, or the second run's scenario; the property then fails only on a
// violation of invariant Inv.
type poFault struct {
	Inv  int
	What string
	// Want, when set, is a text the violation must contain.
	Want   string
	Trace  func(c *poCase, rs []trace.Record) []trace.Record
	Case   func(c *poCase, rs []trace.Record)
	Second func(sc *scenario.Scenario)
}

// poProperty draws a scenario (its profile among profiles), runs it twice
// and checks every invariant; with a fault, only violations of the fault's
// invariant count.
func poProperty(profiles []string, fault *poFault) func(*rapid.T) {
	return func(t *rapid.T) {
		plan := poDrawPlan(t, profiles)
		sc := plan.scenario()
		a := poRun(t, sc)
		sc2 := plan.scenario()
		if fault != nil && fault.Second != nil {
			fault.Second(sc2)
		}
		b := poRun(t, sc2)
		records, err := trace.Parse(a.Trace)
		if err != nil {
			t.Fatalf("trace.Parse: %v", err)
		}
		c := plan.checkCase()
		if fault != nil && fault.Trace != nil {
			records = fault.Trace(c, records)
		}
		if fault != nil && fault.Case != nil {
			fault.Case(c, records)
		}
		vs := append(poCheck(c, records), poSame(a.Trace, b.Trace)...)
		if fault == nil {
			if err := sim.CheckSoundTrace(records); err != nil {
				vs = append(vs, poViolation{Inv: 0, What: "sim.CheckSoundTrace: " + err.Error()})
			}
		} else {
			vs = slices.DeleteFunc(vs, func(v poViolation) bool { return v.Inv != fault.Inv || !strings.Contains(v.What, fault.Want) })
		}
		if len(vs) == 0 {
			return
		}
		var msg strings.Builder
		for _, v := range vs {
			fmt.Fprintf(&msg, "%v\n", v)
		}
		t.Fatalf("%s--- scenario\n%s--- trace\n%s", msg.String(), scenario.Format(sc), a.Trace)
	}
}

func poProfileNames() []string {
	var names []string
	for _, p := range policy.Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// poWithChecks runs f with rapid's number of checks set to n, unless the
// run gives -rapid.checks or RAPID_CHECKS.
func poWithChecks(t *testing.T, n int, f func()) {
	user := os.Getenv("RAPID_CHECKS") != ""
	flag.Visit(func(fl *flag.Flag) { user = user || fl.Name == "rapid.checks" })
	if user {
		f()
		return
	}
	pbWithFlags(t, map[string]string{"rapid.checks": strconv.Itoa(n)}, f)
}

// TestOptInProperties: settings drawn from every axis, over any profile,
// with random replies and actions, hold invariants 1 to 8 (poInvariants)
// and sim.CheckSoundTrace.
func TestOptInProperties(t *testing.T) {
	rapid.Check(t, poProperty(poProfileNames(), nil))
}

// TestOptInPropertiesPerProfile: the same property starting from each of
// the profiles in turn, so that each is patched and checked.
func TestOptInPropertiesPerProfile(t *testing.T) {
	names := poProfileNames()
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			poWithChecks(t, 20, func() { rapid.Check(t, poProperty([]string{name}, nil)) })
		})
	}
}

// TestCheckSoundTraceFailFastInAChain: a fail-fast inside a chain ends it
// with attempt k, one above the chain's last auto_retry_start (SPEC §1.1
// step 6); CheckSoundTrace accepts it, and still rejects an end two above,
// or one above that is not a fail-fast. (Found by TestOptInProperties.)
func TestCheckSoundTraceFailFastInAChain(t *testing.T) {
	src := "turns:\n" + strings.Repeat("  - {stopReason: error, errorMessage: \"503 service unavailable\"}\n", 3)
	got, _ := optRun(t, src, func(s *policy.Settings) {
		s.BaseDelay = time.Second
		s.RetryAfter = policy.RetryAfter{MaxWait: 3 * time.Second} // the third wait, 4 s, is too long
	}, trace.AutoRetryStart, trace.AutoRetryEnd)
	optWant(t, got,
		`"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":1000,"errorMessage":"503 service unavailable"}`,
		`"type":"auto_retry_start","attempt":2,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 service unavailable"}`,
		`"type":"auto_retry_end","success":false,"attempt":3,"finalError":"Provider requested 4000ms wait, exceeds retry.maxDelayMs (3000ms). Original error: 503 service unavailable"}`)
	start := trace.Record{Type: trace.AutoRetryStart, Start: policy.AutoRetryStart{Attempt: 1}}
	end := func(a int, final string) trace.Record {
		return trace.Record{Type: trace.AutoRetryEnd, End: policy.AutoRetryEnd{Attempt: a, FinalError: final}}
	}
	ff := "Provider requested 4000ms wait, exceeds retry.maxDelayMs (3000ms). Original error: x"
	for _, tt := range []struct {
		rs []trace.Record
		ok bool
	}{
		{[]trace.Record{start, end(2, ff)}, true},
		{[]trace.Record{start, end(3, ff)}, false},
		{[]trace.Record{start, end(2, "x")}, false},
	} {
		if err := sim.CheckSoundTrace(tt.rs); (err == nil) != tt.ok {
			t.Errorf("%q: %v, want ok %v", optLines(tt.rs), err, tt.ok)
		}
	}
}

// ---- the checker can fail ----

// Hand-made trace records for the checker tests.
func poRec(ms int, ty trace.Type) trace.Record {
	return trace.Record{T: time.Duration(ms) * time.Millisecond, Type: ty}
}

func poRunRec(ms int, kind trace.RunKind, model string) trace.Record {
	r := poRec(ms, trace.AgentRun)
	r.Run, r.Model = kind, model
	return r
}

func poME(ms int, stop policy.StopReason, msg, model string) trace.Record {
	r := poRec(ms, trace.MessageEnd)
	r.Message, r.Model = trace.Message{StopReason: stop, ErrorMessage: msg}, model
	return r
}

func poStart(ms, attempt, maxAttempts int, delay float64, msg string) trace.Record {
	r := poRec(ms, trace.AutoRetryStart)
	r.Start = policy.AutoRetryStart{Attempt: attempt, MaxAttempts: maxAttempts, DelayMs: delay, ErrorMessage: msg}
	return r
}

func poEnd(ms int, success bool, attempt int, final string) trace.Record {
	r := poRec(ms, trace.AutoRetryEnd)
	r.End = policy.AutoRetryEnd{Success: success, Attempt: attempt, FinalError: final}
	return r
}

// poGetState is a get_state response; nextRetryAt < 0 is null.
func poGetState(ms int, id string, retrying bool, attempt int, state policy.State, nextRetryAt float64) trace.Record {
	r := poRec(ms, trace.Response)
	r.Response = trace.ResponseRecord{ID: id, Command: "get_state", Success: true, HasState: true, State: trace.SessionState{
		AutoCompactionEnabled: true, SessionID: "session-1", AutoRetryEnabled: true, IsRetrying: retrying,
		RetryAttempt: attempt, RetryState: state, NextRetryAt: max(nextRetryAt, 0), HasNextRetryAt: nextRetryAt >= 0, Profile: policy.DefaultProfile,
		Model:         trace.ModelInfo{ID: "claude-sonnet-4-5", Provider: "anthropic", API: "anthropic-messages"},
		ThinkingLevel: "off", SteeringMode: "one-at-a-time", FollowUpMode: "one-at-a-time", InterruptMode: "immediate"}}
	return r
}

func poPromptResolved(ms, n int) trace.Record {
	r := poRec(ms, trace.PromptResolved)
	r.Prompt = n
	return r
}

func poFinal(ms int, state policy.State) trace.Record {
	r := poRec(ms, trace.Final)
	r.Final = trace.FinalRecord{State: state, UnresolvedPrompts: []int{}}
	return r
}

// poInvs lists the invariants of vs.
func poInvs(vs []poViolation) []int {
	var out []int
	for _, v := range vs {
		out = append(out, v.Inv)
	}
	return out
}

// TestOptInCheckerReportsBadTraces: the checker accepts a hand-made good
// trace and real traces of the opt-in ways out (fallback, fail-fast at rest
// and in a chain, maxRetries 0, persistent, a hint above the cap), and
// reports each hand-made bad trace under its invariant, one or more per
// invariant.
func TestOptInCheckerReportsBadTraces(t *testing.T) {
	const msg = "503 service unavailable"
	retry := poTurn{Kind: "retryable", Turn: scenario.Turn{StopReason: policy.StopReasonError, ErrorMessage: msg}}
	stop := poTurn{Kind: "stop", Turn: scenario.Turn{StopReason: policy.StopReasonStop}}
	getStates := []scenario.Action{{At: 1000 * time.Millisecond, Do: "get_state", ID: "g1"}, {At: 3000 * time.Millisecond, Do: "get_state", ID: "g2"}}
	baseCase := func() *poCase {
		return &poCase{Settings: policy.DefaultSettings(), Turns: []poTurn{retry, stop}, Actions: getStates, Seed: 1, Prompts: 1}
	}
	// One retry that succeeds, observed in its wait and at rest.
	good := []trace.Record{
		poRunRec(0, trace.RunPrompt, poModel), poME(0, policy.StopReasonError, msg, poModel), poRec(0, trace.AgentRunEnd),
		poStart(0, 1, 3, 2000, msg),
		poGetState(1000, "g1", true, 1, policy.StateBackoff, 2000),
		poRunRec(2000, trace.RunContinue, poModel), poME(2000, policy.StopReasonStop, "", poModel),
		poEnd(2000, true, 1, ""), poRec(2000, trace.AgentRunEnd), poPromptResolved(2000, 1),
		poGetState(3000, "g2", false, 0, policy.StateIdle, -1),
		poFinal(3000, policy.StateIdle),
	}
	good[4].Response.State.IsStreaming, good[4].Response.State.MessageCount = true, 1
	good[10].Response.State.MessageCount = 2
	good[11].Final.TurnsConsumed = 2
	if vs := poCheck(baseCase(), good); len(vs) > 0 {
		t.Fatalf("the good trace: %v", vs)
	}
	// The real run agrees with the hand-made trace on every line the
	// checker reads.
	plan := &poPlan{Set: poSettings{Profile: policy.DefaultProfile, Settings: policy.DefaultSettings()}, Seed: 1,
		Turns: []poTurn{retry, stop}, Actions: getStates, PromptsIssued: 1, Compaction: scenario.Compaction{Enabled: true, Succeed: true}}
	real, err := trace.Parse(poRun(t, plan.scenario()).Trace)
	if err != nil {
		t.Fatal(err)
	}
	real = slices.DeleteFunc(real, func(r trace.Record) bool { return r.Type == trace.Transition })
	if a, b := optLines(real), optLines(good); !slices.Equal(a, b) {
		t.Errorf("real trace\n  %s\nhand-made\n  %s", strings.Join(a, "\n  "), strings.Join(b, "\n  "))
	}

	edit := func(f func(rs []trace.Record) []trace.Record) []trace.Record { return f(slices.Clone(good)) }
	without := func(ty trace.Type) []trace.Record {
		return edit(func(rs []trace.Record) []trace.Record {
			return slices.DeleteFunc(rs, func(r trace.Record) bool { return r.Type == ty })
		})
	}
	insertAt := func(i int, r trace.Record) []trace.Record {
		return edit(func(rs []trace.Record) []trace.Record { return slices.Insert(rs, i, r) })
	}
	withCase := func(f func(*poCase)) *poCase { c := baseCase(); f(c); return c }
	overflow := "prompt is too long: 213462 tokens > 200000 maximum"
	twoErrors := []trace.Record{
		poRunRec(0, trace.RunPrompt, poModel), poME(0, policy.StopReasonError, msg, poModel), poRec(0, trace.AgentRunEnd),
		poStart(0, 1, 3, 2000, msg),
		poRunRec(2000, trace.RunContinue, poModel), poME(2000, policy.StopReasonError, msg, poModel), poRec(2000, trace.AgentRunEnd),
		poStart(2000, 1, 3, 2000, msg), // a restart with no retry_fallback
		poRunRec(4000, trace.RunContinue, poModel), poME(4000, policy.StopReasonStop, "", poModel), poRec(4000, trace.AgentRunEnd),
		poEnd(4000, true, 1, ""), poPromptResolved(4000, 1), poFinal(4000, policy.StateIdle),
	}
	bads := []struct {
		inv  int
		what string
		c    *poCase
		rs   []trace.Record
	}{
		{1, "the chain never ends", baseCase(), without(trace.AutoRetryEnd)},
		{1, "the prompt never resolves", baseCase(), without(trace.PromptResolved)},
		{1, "no final line", baseCase(), without(trace.Final)},
		{2, "a second auto_retry_end, at rest", baseCase(), insertAt(11, poEnd(3000, false, 1, msg))},
		{2, "an end at once with attempt 0 under maxRetries 3", withCase(func(c *poCase) { c.Turns = []poTurn{retry} }), []trace.Record{
			poRunRec(0, trace.RunPrompt, poModel), poME(0, policy.StopReasonError, msg, poModel), poRec(0, trace.AgentRunEnd),
			poEnd(0, false, 0, msg), poPromptResolved(0, 1), poFinal(0, policy.StateExhausted)}},
		{3, "attempt 1 again without retry_fallback", withCase(func(c *poCase) { c.Turns = []poTurn{retry, retry, stop}; c.Actions = nil }), twoErrors},
		{3, "a chain starting at attempt 2", baseCase(), edit(func(rs []trace.Record) []trace.Record {
			rs[3].Start.Attempt = 2
			return rs
		})},
		{4, "retryAttempt 1 at rest", baseCase(), edit(func(rs []trace.Record) []trace.Record {
			rs[10].Response.State.RetryAttempt = 1
			return rs
		})},
		{4, "attempt 1 on the final line", baseCase(), edit(func(rs []trace.Record) []trace.Record {
			rs[11].Final.Attempt = 1
			return rs
		})},
		{5, "an overflow retried", withCase(func(c *poCase) {
			c.Turns[0] = poTurn{Kind: "overflowText", Overflow: true, Turn: scenario.Turn{StopReason: policy.StopReasonError, ErrorMessage: overflow}}
		}), edit(func(rs []trace.Record) []trace.Record {
			rs[1].Message.ErrorMessage, rs[3].Start.ErrorMessage = overflow, overflow
			return rs
		})},
		{6, "a wait above maxBackoffMs with no hint", withCase(func(c *poCase) {
			c.Settings.BaseDelay, c.Settings.MaxBackoff = time.Second, 1500*time.Millisecond
		}), good},
		{6, "a wait above maxBackoffMs by a hint that is ignored", withCase(func(c *poCase) {
			c.Settings.BaseDelay, c.Settings.MaxBackoff = time.Second, 1500*time.Millisecond
			c.Turns[0].Hint, c.Turns[0].HasHint = 2000, true
		}), good},
		{6, "a wait above maxBackoffMs by a hint above maxHintMs", withCase(func(c *poCase) {
			c.Settings.BaseDelay, c.Settings.MaxBackoff = time.Second, 1500*time.Millisecond
			c.Settings.RetryAfter = policy.RetryAfter{Use: policy.HintFloor, MaxHint: 1999 * time.Millisecond}
			c.Turns[0].Hint, c.Turns[0].HasHint = 2000, true
		}), good},
		{6, "a wait that is not the backoff", withCase(func(c *poCase) { c.Settings.BaseDelay = time.Second }), good},
		{8, "a chain starts while retry is disabled", withCase(func(c *poCase) { c.Settings.Enabled = false }), good},
	}
	for _, b := range bads {
		vs := poCheck(b.c, b.rs)
		if !slices.Contains(poInvs(vs), b.inv) {
			t.Errorf("%s: invariant %d not reported; got %v", b.what, b.inv, vs)
			continue
		}
		t.Logf("%s: %v", b.what, vs[slices.Index(poInvs(vs), b.inv)])
	}
	// The hint exemption: a hint in use may ask for more than the cap.
	floor := withCase(func(c *poCase) {
		c.Settings.BaseDelay, c.Settings.MaxBackoff = time.Second, 1500*time.Millisecond
		c.Settings.RetryAfter = policy.RetryAfter{Use: policy.HintFloor}
		c.Turns[0].Hint, c.Turns[0].HasHint = 2000, true
	})
	if vs := poCheck(floor, good); len(vs) > 0 {
		t.Errorf("a wait above the cap asked by a hint in use: %v", vs)
	}
	// 7: two traces that differ.
	a := []byte("{\"t\":0,\"type\":\"agent_run\"}\n{\"t\":0,\"type\":\"final\"}\n")
	if vs := poSame(a, bytes.Replace(a, []byte(`"t":0,"type":"final"`), []byte(`"t":1,"type":"final"`), 1)); len(vs) != 1 || vs[0].Inv != 7 || vs[0].Line != 2 {
		t.Errorf("two different traces: %v", vs)
	}
	if vs := poSame(a, slices.Clone(a)); len(vs) > 0 {
		t.Errorf("two equal traces: %v", vs)
	}

	// Real traces of the opt-in ways out pass.
	realCases := []struct {
		what string
		set  func(*policy.Settings)
		n    int // retryable errors before a stop
	}{
		{"fallback through two models", func(s *policy.Settings) { s.MaxRetries, s.Fallback = 1, []string{"model-b", "model-c"} }, 5},
		{"fallback at the first error (maxRetries 0)", func(s *policy.Settings) { s.MaxRetries, s.Fallback = 0, []string{"model-b"} }, 3},
		{"maxRetries 0", func(s *policy.Settings) { s.MaxRetries = 0 }, 1},
		{"fail-fast at the first error", func(s *policy.Settings) { s.RetryAfter.MaxWait = time.Second }, 2},
		{"fail-fast in a chain", func(s *policy.Settings) { s.BaseDelay, s.RetryAfter.MaxWait = time.Second, 3*time.Second }, 4},
		{"persistent", func(s *policy.Settings) { s.MaxRetries, s.Persistent, s.MaxBackoff = 1, true, 5*time.Second }, 6},
		{"jittered with a seed", func(s *policy.Settings) { s.Jitter = policy.Jitter{Mode: policy.JitterUpDown, Ratio: 0.3} }, 3},
	}
	for _, rc := range realCases {
		p := &poPlan{Set: poSettings{Profile: policy.DefaultProfile, Settings: policy.DefaultSettings()}, Seed: 7, PromptsIssued: 1,
			Compaction: scenario.Compaction{Enabled: true, Succeed: true}}
		rc.set(&p.Set.Settings)
		for range rc.n {
			p.Turns = append(p.Turns, retry)
		}
		p.Turns = append(p.Turns, stop)
		res := poRun(t, p.scenario())
		rs, err := trace.Parse(res.Trace)
		if err != nil {
			t.Fatal(err)
		}
		if vs := poCheck(p.checkCase(), rs); len(vs) > 0 {
			t.Errorf("%s: %v\n%s", rc.what, vs, res.Trace)
		}
		if err := sim.CheckSoundTrace(rs); err != nil {
			t.Errorf("%s: CheckSoundTrace: %v", rc.what, err)
		}
	}
}

// poFaults are the planted faults of TestOptInPropertiesCanFail, one per
// invariant.
var poFaults = []poFault{
	{Inv: 1, What: "the last auto_retry_end of a chain dropped", Trace: func(_ *poCase, rs []trace.Record) []trace.Record {
		open, at := false, -1
		for i, r := range rs {
			switch r.Type {
			case trace.AutoRetryStart, trace.RetryFallback:
				open = true
			case trace.AutoRetryEnd:
				if open {
					at = i
				}
				open = false
			}
		}
		if at < 0 {
			return rs
		}
		return slices.Delete(rs, at, at+1)
	}},
	{Inv: 2, What: "a chain's auto_retry_end written twice", Trace: func(_ *poCase, rs []trace.Record) []trace.Record {
		open := false
		for i, r := range rs {
			switch r.Type {
			case trace.AutoRetryStart, trace.RetryFallback:
				open = true
			case trace.AutoRetryEnd:
				if open {
					return slices.Insert(rs, i+1, r)
				}
			}
		}
		return rs
	}},
	{Inv: 3, What: "a chain's count restarted without retry_fallback", Trace: func(_ *poCase, rs []trace.Record) []trace.Record {
		for i := range rs {
			if rs[i].Type == trace.AutoRetryStart && rs[i].Start.Attempt >= 2 {
				rs[i].Start.Attempt = 1
				break
			}
		}
		return rs
	}},
	{Inv: 4, What: "get_state at rest reporting attempt 1", Trace: func(_ *poCase, rs []trace.Record) []trace.Record {
		for i := range rs {
			if r := &rs[i]; r.Type == trace.Response && r.Response.HasState && !r.Response.State.IsRetrying {
				r.Response.State.RetryAttempt = 1
				break
			}
		}
		return rs
	}},
	{Inv: 5, What: "the checker told that the first retried reply was an overflow", Want: "after an overflow reply", Case: func(c *poCase, rs []trace.Record) {
		n := 0
		for _, r := range rs {
			switch r.Type {
			case trace.MessageEnd:
				n++
			case trace.AutoRetryStart, trace.RetryFallback:
				if n > 0 && n <= len(c.Turns) {
					c.Turns[n-1].Overflow = true
				}
				return
			}
		}
	}},
	{Inv: 6, What: "a wait stretched to twice maxBackoffMs*(1+ratio)", Want: "exceeds maxBackoffMs*(1+ratio)", Trace: func(c *poCase, rs []trace.Record) []trace.Record {
		set := &c.Settings
		if set.MaxBackoff <= 0 {
			return rs
		}
		for i := range rs {
			if rs[i].Type == trace.AutoRetryStart && (i == 0 || rs[i-1].Type != trace.RetryFallback) {
				rs[i].Start.DelayMs = 2*poMs(set.MaxBackoff)*(1+set.Jitter.Ratio) + 1
				break
			}
		}
		return rs
	}},
	{Inv: 7, What: "the second run with another seed", Second: func(sc *scenario.Scenario) {
		sc.Seed, sc.HasRandomFixed = max(sc.Seed, 1)+1, false
	}},
	{Inv: 8, What: "the checker told that retry was disabled from the start", Case: func(c *poCase, _ []trace.Record) {
		c.Settings.Enabled = false
	}},
}

// TestOptInPropertiesCanFail: each invariant of TestOptInProperties can
// fail. For each planted fault (poFaults: a trace mutated, a wrong belief
// given to the checker, or the second run's seed changed) the property,
// counting only that fault's invariant, is run by rapid.Check against a
// recording rapid.TB, which must report a counterexample under that
// invariant (shrinking bounded, and only with -v; no fail file).
func TestOptInPropertiesCanFail(t *testing.T) {
	covered := map[int]bool{}
	for _, f := range poFaults {
		covered[f.Inv] = true
		t.Run(fmt.Sprintf("invariant-%d", f.Inv), func(t *testing.T) {
			rec := &pbRecorder{name: t.Name()}
			pbWithFlags(t, map[string]string{"rapid.checks": "2000", "rapid.nofailfile": "true", "rapid.shrinktime": pbShrinkTime("300ms"), "rapid.failfile": ""}, func() {
				rapid.Check(rec, poProperty(poProfileNames(), &f))
			})
			out := rec.out.String()
			want := fmt.Sprintf("invariant %d (", f.Inv)
			if !rec.failed || !strings.Contains(out, want) || !strings.Contains(out, f.Want) {
				t.Fatalf("planted fault %q: rapid found no violation of invariant %d (%q)\n%s", f.What, f.Inv, f.Want, out)
			}
			if i := strings.Index(out, want); i >= 0 {
				out = out[i:]
			}
			if len(out) > 3000 {
				out = out[:3000] + "\n... (cut)"
			}
			t.Logf("planted fault %q: %s", f.What, out)
		})
	}
	for inv := 1; inv < len(poInvariants); inv++ {
		if !covered[inv] {
			t.Errorf("no planted fault for invariant %d", inv)
		}
	}
}

// poHTTPDate is net/http's TimeFormat (an IMF-fixdate, for a time in UTC),
// written here so that sim's test binary does not link net/http for it.
const poHTTPDate = "Mon, 02 Jan 2006 15:04:05 GMT"
