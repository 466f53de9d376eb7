package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/policy"
)

// logOf joins lines into a log, one per line.
func logOf(lines ...string) []byte {
	return []byte(strings.Join(lines, "\n") + "\n")
}

// Lines of the protocol, as `retrysim rpc` writes them (without "t").
const (
	promptOK    = `{"id":"p1","type":"response","command":"prompt","success":true,"data":{"prompt":1}}`
	agentStart  = `{"type":"agent_start"}`
	agentEnd    = `{"type":"agent_end"}`
	error529    = `{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error"},"model":"m"}`
	errorFatal  = `{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"invalid api key"},"model":"m"}`
	replyStop   = `{"type":"message_end","message":{"role":"assistant","stopReason":"stop"},"model":"m"}`
	endSuccess1 = `{"type":"auto_retry_end","success":true,"attempt":1}`

	overflowError   = `{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"prompt is too long"},"model":"m"}`
	compactionStart = `{"type":"auto_compaction_start","reason":"overflow"}`
	compactionEnd   = `{"type":"auto_compaction_end","result":{"summary":"s"},"aborted":false,"willRetry":true}`
)

func start(attempt int, delayMs float64) string {
	return fmt.Sprintf(`{"type":"auto_retry_start","attempt":%d,"maxAttempts":3,"delayMs":%v,"errorMessage":"529 overloaded_error"}`, attempt, delayMs)
}

func endSuccess(attempt int) string {
	return fmt.Sprintf(`{"type":"auto_retry_end","success":true,"attempt":%d}`, attempt)
}

// finding is a finding without its reason, for comparisons.
type finding struct {
	Line int
	Rule audit.Rule
}

func short(fs []audit.Finding) []finding {
	out := make([]finding, len(fs))
	for i, f := range fs {
		out[i] = finding{f.Line, f.Rule}
	}
	return out
}

// checkFindings audits log under opt and compares its findings (line and
// rule, in the order reported) with want.
func checkFindings(t *testing.T, log []byte, opt audit.Options, want ...finding) []audit.Finding {
	t.Helper()
	fs, sum := auditLog(t, log, opt)
	if got := short(fs); !slices.Equal(got, want) {
		t.Errorf("findings = %v, want %v\nreasons: %v\nlog:\n%s", got, want, fs, numbered(log))
	}
	if sum.Findings != len(fs) {
		t.Errorf("summary counts %d findings, %d reported", sum.Findings, len(fs))
	}
	return fs
}

func TestChainNotEnded(t *testing.T) {
	tests := []struct {
		name string
		log  []byte
		want []finding
	}{
		{"left open by a fatal error, at the end of the log", logOf(
			promptOK, agentStart, error529, agentEnd, start(1, 2000), // 5
			agentStart, errorFatal, agentEnd,
		), []finding{{5, audit.ChainNotEnded}}},
		{"open when the next prompt's run starts", logOf(
			promptOK, agentStart, error529, agentEnd, start(1, 2000), // 5
			agentStart, errorFatal, agentEnd,
			`{"id":"p2","type":"response","command":"prompt","success":true}`, // 9
			agentStart, error529, agentEnd, start(1, 2000), agentStart, replyStop, endSuccess1, agentEnd,
		), []finding{{5, audit.ChainNotEnded}}},
		{"ended", logOf(
			promptOK, agentStart, error529, agentEnd, start(1, 2000), agentStart, replyStop, endSuccess1, agentEnd,
		), nil},
		{"a prompt accepted during the backoff may be queued: the chain goes on", logOf(
			promptOK, agentStart, error529, agentEnd, start(1, 2000),
			`{"id":"p2","type":"response","command":"prompt","success":true}`,
			agentStart, replyStop, endSuccess1, agentEnd,
		), nil},
		{"the original's second response to a rejected prompt is no prompt", logOf(
			promptOK, agentStart, error529, agentEnd, start(1, 2000),
			agentStart, overflowError, agentEnd, compactionStart, compactionEnd,
			`{"id":"p2","type":"response","command":"prompt","success":false,"error":"Agent is already processing."}`,
			`{"id":"p2","type":"response","command":"prompt","success":true}`,
			agentStart, replyStop, endSuccess1, agentEnd, // the compaction's continue ends the chain
		), nil},
		{"a prompt accepted after another line than its rejection is a prompt", logOf(
			promptOK, agentStart, error529, agentEnd, start(1, 2000), // 5
			agentStart, overflowError, agentEnd, compactionStart, compactionEnd,
			`{"id":"p2","type":"response","command":"prompt","success":false,"error":"Agent is already processing."}`,
			`{"id":"s1","type":"response","command":"get_state","success":true,"data":{}}`,
			`{"id":"p2","type":"response","command":"prompt","success":true}`,
			agentStart, replyStop, endSuccess1, agentEnd, // 16: stray
		), []finding{{5, audit.ChainNotEnded}, {16, audit.StrayEnd}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := checkFindings(t, tt.log, audit.Options{}, tt.want...)
			for _, f := range fs {
				if f.Rule == audit.ChainNotEnded && !strings.Contains(f.Reason, "no auto_retry_end") {
					t.Errorf("reason %q does not say what is missing", f.Reason)
				}
			}
		})
	}
}

func TestAttemptSequence(t *testing.T) {
	fallback := `{"type":"retry_fallback","from":"a","to":"b"}`
	tests := []struct {
		name string
		log  []byte
		want []finding
	}{
		{"1 2 3", logOf(start(1, 2000), start(2, 4000), start(3, 8000), endSuccess(3)), nil},
		{"1 2 4", logOf(start(1, 2000), start(2, 4000), start(4, 16000), endSuccess(4)), []finding{{3, audit.AttemptSequence}}},
		{"1 1", logOf(start(1, 2000), start(1, 2000), endSuccess(1)), []finding{{2, audit.AttemptSequence}}},
		{"1 2, fallback, 1", logOf(start(1, 2000), start(2, 4000), fallback, start(1, 0), endSuccess(1)), nil},
		{"1, fallback, 2", logOf(start(1, 2000), fallback, start(2, 0), endSuccess(2)), []finding{{3, audit.AttemptSequence}}},
		{"fallback at rest, 1", logOf(fallback, start(1, 0), endSuccess(1)), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFindings(t, tt.log, audit.Options{}, tt.want...)
		})
	}
}

func TestStaleCounter(t *testing.T) {
	checkFindings(t, logOf(start(2, 4000), endSuccess(2)), audit.Options{}, finding{1, audit.StaleCounter})
	checkFindings(t, logOf(start(1, 2000), endSuccess(1), start(2, 4000), endSuccess(2)), audit.Options{}, finding{3, audit.StaleCounter})
	checkFindings(t, logOf(start(1, 2000), endSuccess(1), start(1, 2000), endSuccess(1)), audit.Options{})
}

func TestStrayEnd(t *testing.T) {
	tests := []struct {
		name string
		end  string
		want []finding
	}{
		{"a success", `{"type":"auto_retry_end","success":true,"attempt":1}`, []finding{{2, audit.StrayEnd}}},
		{"a failure after attempts", `{"type":"auto_retry_end","success":false,"attempt":3,"finalError":"529 overloaded_error"}`, []finding{{2, audit.StrayEnd}}},
		{"maxRetries 0", `{"type":"auto_retry_end","success":false,"attempt":0,"finalError":"529 overloaded_error"}`, nil},
		{"a fail-fast", `{"type":"auto_retry_end","success":false,"attempt":1,"finalError":"Provider requested 400000ms wait, exceeds retry.maxDelayMs (300000ms). Original error: 429"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFindings(t, logOf(agentEnd, tt.end), audit.Options{}, tt.want...)
		})
	}
}

func TestDelay(t *testing.T) {
	set := policy.DefaultSettings()
	set.BaseDelay = 100e6 // 100 ms
	custom := policy.MustCompile(set)
	tests := []struct {
		profile  string
		settings *policy.Policy
		attempt  int
		delayMs  float64
		ok       bool
	}{
		// omp-2026-02: 2000 * 2^(k-1), exactly.
		{"", nil, 1, 2000, true},
		{"", nil, 3, 8000, true},
		{"", nil, 1, 0, true},
		{"", nil, 1, 1999, false},
		{"", nil, 2, 2000, false},
		{"", nil, 1, -1, false},
		{"", nil, 1, 2000.0005, true}, // rounding
		{"", custom, 2, 200, true},
		{"", custom, 2, 4000, false},
		// omp-2026-06: min(500 * 2^(k-1), 8000) * (1 - 0.25u), raised by a
		// hint (floor), at most 300000.
		{"omp-2026-06", nil, 1, 375, true},
		{"omp-2026-06", nil, 1, 433.3, true},
		{"omp-2026-06", nil, 1, 374, false},
		{"omp-2026-06", nil, 1, 45000, true}, // a hint
		{"omp-2026-06", nil, 1, 300001, false},
		{"omp-2026-06", nil, 10, 6000, true},
		{"omp-2026-06", nil, 10, 5999, false},
		// codex: 200 * 2^(k-1) * (1 ± 0.1), or the hint (replace).
		{"codex", nil, 1, 180, true},
		{"codex", nil, 1, 20000, true},
		// openai-sdk: the backoff, or any hint (replace, no bound);
		// openai-sdk-go: up to maxWaitMs 120000.
		{"openai-sdk", nil, 1, 60000, true},
		{"openai-sdk", nil, 1, 60001, true},
		{"openai-sdk-go", nil, 1, 120000, true},
		{"openai-sdk-go", nil, 1, 120001, false},
		{"openai-sdk", nil, 1, 450, true},
		// pi: 2000 * 2^(k-1), no cap.
		{"pi", nil, 5, 32000, true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s settings=%v attempt %d delay %v", tt.profile, tt.settings != nil, tt.attempt, tt.delayMs)
		t.Run(name, func(t *testing.T) {
			var want []finding
			if !tt.ok {
				want = []finding{{tt.attempt, audit.Delay}}
			}
			// The earlier attempts at delay 0 (always allowed), then the
			// one checked, at line tt.attempt.
			var lines []string
			for k := 1; k < tt.attempt; k++ {
				lines = append(lines, fmt.Sprintf(`{"type":"auto_retry_start","attempt":%d,"delayMs":0}`, k))
			}
			lines = append(lines,
				fmt.Sprintf(`{"type":"auto_retry_start","attempt":%d,"maxAttempts":10,"delayMs":%v,"errorMessage":"529"}`, tt.attempt, tt.delayMs),
				endSuccess(tt.attempt))
			fs := checkFindings(t, logOf(lines...), audit.Options{Profile: tt.profile, Policy: tt.settings}, want...)
			for _, f := range fs {
				if !strings.Contains(f.Reason, "or 0") {
					t.Errorf("reason %q does not say what the rule gives", f.Reason)
				}
			}
		})
	}
}

func TestOverflowRetried(t *testing.T) {
	overflowText := `{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"prompt is too long: 213462 tokens > 200000 maximum"}}`
	overflowStart := `{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"prompt is too long: 213462 tokens > 200000 maxixmum"}`
	usage529 := `{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":"529 overloaded_error","usage":{"input":190000,"output":0,"cacheRead":20000,"cacheWrite":0}}}`
	tests := []struct {
		name   string
		log    []byte
		window int64
		want   []finding
	}{
		{"by its message", logOf(agentStart, overflowText, agentEnd, overflowStart, agentStart, replyStop, endSuccess1), 0,
			[]finding{{4, audit.OverflowRetried}}},
		{"by its usage", logOf(agentStart, usage529, agentEnd, start(1, 2000), agentStart, replyStop, endSuccess1), 200000,
			[]finding{{4, audit.OverflowRetried}}},
		{"usage under the window", logOf(agentStart, usage529, agentEnd, start(1, 2000), agentStart, replyStop, endSuccess1), 300000, nil},
		{"usage without a window", logOf(agentStart, usage529, agentEnd, start(1, 2000), agentStart, replyStop, endSuccess1), 0, nil},
		{"usage of an earlier run", logOf(agentStart, usage529, agentEnd, agentStart, error529, agentEnd, start(1, 2000), agentStart, replyStop, endSuccess1), 200000, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := checkFindings(t, tt.log, audit.Options{ContextWindow: tt.window}, tt.want...)
			for _, f := range fs {
				if !strings.Contains(f.Reason, "context overflow") {
					t.Errorf("reason %q", f.Reason)
				}
			}
		})
	}
}

func TestHintWindow(t *testing.T) {
	// at writes a line at time ms: "timestamp" (epoch) or "t" (virtual).
	at := func(field string, ms int64, rest string) string {
		return fmt.Sprintf(`{"%s":%d,%s`, field, ms, strings.TrimPrefix(rest, "{"))
	}
	const epoch = 1771200000000 // 2026-02-16T00:00:00Z
	errLine := func(text string) string {
		return fmt.Sprintf(`{"type":"message_end","message":{"role":"assistant","stopReason":"error","errorMessage":%q}}`, text)
	}
	startLine := func(delay int, text string) string {
		return fmt.Sprintf(`{"type":"auto_retry_start","attempt":1,"maxAttempts":2,"delayMs":%d,"errorMessage":%q}`, delay, text)
	}
	chain := func(field string, t0 int64, text string, delay int, sentAfter int64) []byte {
		return logOf(
			at(field, t0, agentStart),
			at(field, t0, errLine(text)),
			at(field, t0, agentEnd),
			at(field, t0, startLine(delay, text)),
			at(field, t0+sentAfter, agentStart), // 5
			at(field, t0+sentAfter, replyStop),
			at(field, t0+sentAfter, endSuccess1),
		)
	}
	const retryAfter30 = "429 rate_limit_error, retry-after: 30"
	const isoDate = "429 rate_limit_error, retry-after: 2026-02-16T00:00:30Z"
	const usageLimit = "usage limit reached, retry-after: 30"
	early := []finding{{5, audit.HintWindow}}
	tests := []struct {
		name    string
		profile string
		log     []byte
		want    []finding
	}{
		{"sent early (timestamp)", "anthropic-sdk", chain("timestamp", epoch, retryAfter30, 500, 2000), early},
		{"sent early (t)", "anthropic-sdk", chain("t", 0, retryAfter30, 500, 2000), early},
		{"sent after the window", "anthropic-sdk", chain("timestamp", epoch, retryAfter30, 30000, 30000), nil},
		{"within the tolerance", "anthropic-sdk", chain("t", 0, retryAfter30, 30000, 29999), nil},
		{"a profile that ignores hints", "", chain("t", 0, retryAfter30, 2000, 2000), nil},
		{"a date hint with epoch times", "gemini-cli", chain("timestamp", epoch, isoDate, 30000, 4000), early},
		{"a date hint, after it", "gemini-cli", chain("timestamp", epoch, isoDate, 30000, 30000), nil},
		{"a date hint on virtual time is not placed", "gemini-cli", chain("t", 0, isoDate, 4000, 4000), nil},
		{"a credential switch (delay 0) is exempt", "anthropic-sdk", chain("t", 0, usageLimit, 0, 0), nil},
		{"delay 0 without a switch is not", "anthropic-sdk", chain("t", 0, retryAfter30, 0, 0), early},
		{"without times", "anthropic-sdk", logOf(agentStart, errLine(retryAfter30), agentEnd, startLine(500, retryAfter30), agentStart, replyStop, endSuccess1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := checkFindings(t, tt.log, audit.Options{Profile: tt.profile}, tt.want...)
			for _, f := range fs {
				if !strings.Contains(f.Reason, "line 2") || !strings.Contains(f.Reason, "30000 ms") {
					t.Errorf("reason %q does not name the error's line and the hint", f.Reason)
				}
			}
		})
	}
	// A hint over maxHintMs is not used (no profile bounds its hints since
	// openai-sdk follows openai@6.49.0: settings with a bound).
	t.Run("a hint over maxHintMs is not used", func(t *testing.T) {
		p, err := policy.ProfileByName("openai-sdk")
		if err != nil {
			t.Fatal(err)
		}
		set := p.Settings
		set.RetryAfter.MaxHint = 60 * time.Second
		checkFindings(t, chain("t", 0, "429, retry-after: 120", 500, 500), audit.Options{Profile: "openai-sdk", Policy: policy.MustCompile(set)})
	})
}

func TestBadAndSkippedLines(t *testing.T) {
	log := logOf(
		promptOK,             // 1
		`{"type":"agent_sta`, // 2: bad JSON
		`{"type":"auto_retry_start","attempt":"one","delayMs":1}`, // 3: bad event
		`{"type":"auto_retry_start","delayMs":1}`,                 // 4: attempt missing
		`{"type":"auto_retry_start","attempt":1.5,"delayMs":1}`,   // 5: not whole
		`{"type":"auto_retry_start","attempt":1}`,                 // 6: delayMs missing
		`{"type":"auto_retry_end","attempt":1}`,                   // 7: success missing
		`{"type":"agent_start","type":"agent_end"}`,               // 8: duplicate name
		`[1,2]`,                          // 9: skipped
		`{"type":"turn_start"}`,          // 10: skipped
		``,                               // 11: skipped
		`{"no":"type"}`,                  // 12: skipped
		`{"type":42}`,                    // 13: skipped
		"{\"type\":\"agent_start\"}\r",   // 14: CRLF
		`{"type":"agent_start","t":"x"}`, // 15: bad event
		`not json at all`,                // 16: bad JSON
	)
	fs := checkFindings(t, log, audit.Options{},
		finding{2, audit.BadJSON}, finding{3, audit.BadEvent}, finding{4, audit.BadEvent}, finding{5, audit.BadEvent},
		finding{6, audit.BadEvent}, finding{7, audit.BadEvent}, finding{8, audit.BadJSON}, finding{15, audit.BadEvent},
		finding{16, audit.BadJSON})
	_, sum := auditLog(t, log, audit.Options{})
	want := audit.Summary{Lines: 16, Events: 2, Skipped: 5, Bad: 9, Findings: 9}
	if sum != want {
		t.Errorf("summary = %+v, want %+v", sum, want)
	}
	for _, f := range fs {
		if f.Rule == audit.BadEvent && !strings.Contains(f.Reason, "auto_retry_") && !strings.Contains(f.Reason, "agent_start") {
			t.Errorf("bad-event reason %q does not name the event", f.Reason)
		}
		if !strings.Contains(f.Reason, "skipped") {
			t.Errorf("reason %q does not say the line was skipped", f.Reason)
		}
	}
	if r := fs[0].Reason; !strings.Contains(r, "invalid JSON") {
		t.Errorf("bad-json reason %q", r)
	}
	if r := fs[1].Reason; r != "auto_retry_start: attempt is a JSON string (allowed: a number), skipped" {
		t.Errorf("bad-event reason %q", r)
	}
	if r := fs[7].Reason; r != "agent_start: t is a JSON string (allowed: a number), skipped" {
		t.Errorf("bad-event reason %q", r)
	}
	if r := fs[6].Reason; !strings.Contains(r, `duplicate object member name "type"`) {
		t.Errorf("duplicate name reason %q", r)
	}
}

func TestLongLine(t *testing.T) {
	long := `{"type":"agent_start","pad":"` + strings.Repeat("x", audit.MaxLineSize) + `"}`
	log := logOf(start(1, 2000), long, agentStart, replyStop, endSuccess1)
	fs := checkFindings(t, log, audit.Options{}, finding{2, audit.LongLine})
	if !strings.Contains(fs[0].Reason, "longer than") {
		t.Errorf("reason %q", fs[0].Reason)
	}
}

func TestLastLineWithoutNewline(t *testing.T) {
	checkFindings(t, []byte(start(1, 2000)+"\n"+endSuccess1), audit.Options{})
	checkFindings(t, []byte(start(1, 2000)), audit.Options{}, finding{1, audit.ChainNotEnded})
}

func TestReadError(t *testing.T) {
	a, err := audit.New(audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(logOf(start(1, 2000), agentStart)), iotest.ErrReader(boom))
	var fs []audit.Finding
	sum, err := a.Audit(r, func(f audit.Finding) { fs = append(fs, f) })
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("err = %v, want boom at line 3", err)
	}
	if sum.Lines != 2 || len(fs) != 0 {
		t.Errorf("summary %+v, findings %v: want 2 lines and no finding (the log was not read to its end)", sum, fs)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	tests := []struct {
		opt  audit.Options
		want string
	}{
		{audit.Options{Profile: "nope"}, `"nope"`},
		{audit.Options{ContextWindow: -1}, "context window -1"},
	}
	for _, tt := range tests {
		_, err := audit.New(tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error with %q", tt.opt, err, tt.want)
		}
	}
}

func TestAuditorIsReusable(t *testing.T) {
	a, err := audit.New(audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if _, err := a.Audit(bytes.NewReader(logOf(start(1, 2000))), func(audit.Finding) { n++ }); err != nil {
		t.Fatal(err)
	}
	sum, err := a.Audit(bytes.NewReader(logOf(start(1, 2000), endSuccess1)), func(audit.Finding) { n++ })
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || sum.Lines != 2 || sum.Chains != 1 {
		t.Errorf("%d findings, summary %+v: the second log is audited afresh", n, sum)
	}
}

func TestRulesAreDistinct(t *testing.T) {
	seen := map[audit.Rule]bool{}
	for _, r := range audit.Rules() {
		if seen[r] || r == "" || strings.ContainsAny(string(r), " :") {
			t.Errorf("rule %q repeated, empty or not an identifier", r)
		}
		seen[r] = true
	}
}

// TestCompactionContinueMissing: an auto_compaction_end with willRetry
// whose continue run never starts (H19) is found at its line, by the end
// of the log or when the next prompt's run starts past the continue's
// time; a continue run, a prompt's run inside the 100 ms (the sound
// variant's prompt cancels the continue), an abort, or a log without times
// leave nothing to find.
func TestCompactionContinueMissing(t *testing.T) {
	stamped := func(ms int, line string) string {
		return fmt.Sprintf(`{"t":%d,%s`, ms, strings.TrimPrefix(line, "{"))
	}
	compacted := []string{promptOK, stamped(0, agentStart), stamped(0, overflowError), stamped(0, agentEnd),
		stamped(0, compactionStart), stamped(0, compactionEnd)} // 6
	log := func(more ...string) []byte { return logOf(append(slices.Clone(compacted), more...)...) }
	prompt2 := `{"id":"p2","type":"response","command":"prompt","success":true,"data":{"prompt":2}}`
	tests := []struct {
		name string
		log  []byte
		want []finding
	}{
		{"no run by the end of the log", log(), []finding{{6, audit.CompactionContinueMissing}}},
		{"the continue runs", log(stamped(100, agentStart), stamped(100, replyStop), stamped(100, agentEnd)), nil},
		{"the next prompt's run starts seconds later", log(prompt2, stamped(5000, agentStart), stamped(5000, replyStop)),
			[]finding{{6, audit.CompactionContinueMissing}}},
		{"the next prompt's run starts within the 100 ms", log(prompt2, stamped(10, agentStart), stamped(10, replyStop)), nil},
		{"an abort", log(`{"id":"a","type":"response","command":"abort","success":true}`), nil},
		{"willRetry false", logOf(promptOK, agentStart, overflowError, agentEnd, compactionStart,
			`{"type":"auto_compaction_end","aborted":false,"willRetry":false}`), nil},
		{"no times, the next prompt's run", logOf(promptOK, agentStart, overflowError, agentEnd, compactionStart, compactionEnd,
			prompt2, agentStart, replyStop), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkFindings(t, tc.log, audit.Options{}, tc.want...)
		})
	}
}
