package audit_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
)

// The scenario files the logs are written from: the project's scenarios
// (the profiles' vectors included) and the public conformance set.
const (
	scenariosDir   = "../scenarios"
	conformanceDir = "../testdata/conformance/public"
)

// optionsFor audits a log of sc against what sc runs: its profile, with its
// own settings merged over the profile's, and its context window.
func optionsFor(sc *scenario.Scenario) audit.Options {
	return audit.Options{Profile: sc.Profile, Policy: policy.MustCompile(sc.Settings), ContextWindow: sc.ContextWindow}
}

func allScenarioFiles(t *testing.T) []string {
	t.Helper()
	files, err := scenario.Files(scenariosDir, conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("only %d scenario files found", len(files))
	}
	return files
}

// TestSoundLogsAreClean: the log the sound variant writes for every scenario
// file (each under its profile and settings, jitter, hints, fallbacks and
// fail-fast included) has no finding.
func TestSoundLogsAreClean(t *testing.T) {
	var total audit.Summary
	for _, f := range allScenarioFiles(t) {
		sc := loadScenario(t, f)
		log := rpcLog(t, sc, "sound")
		fs, sum := auditLog(t, log, optionsFor(sc))
		total.Add(sum)
		if len(fs) > 0 {
			t.Errorf("%s (profile %s): findings %v\n%s", f, sc.Profile, fs, numbered(log))
		}
	}
	if total.Chains < 100 || total.Retries < 200 || total.Skipped != 0 || total.Bad != 0 {
		t.Errorf("summary %+v: the logs should have many chains, and no line the audit does not read", total)
	}
}

// at places an expected finding: its rule, at the n-th line (1-based) of
// type typ.
type at struct {
	rule audit.Rule
	typ  string
	n    int
}

// originalFindings are the findings in the logs of the original variant,
// by file; every other file the original runs gives a clean log. The
// hazards (SPEC §9) are in each file's description, or the conformance
// manifest's flags.
var originalFindings = map[string][]at{
	// H1: a fatal error, an aborted reply or an error without text mid-chain.
	"10-non-retryable-mid-chain.json":               {{audit.ChainNotEnded, "auto_retry_start", 1}},
	"20-aborted-turn-mid-chain.json":                {{audit.ChainNotEnded, "auto_retry_start", 1}},
	"35-fatal-error-mid-chain.yaml":                 {{audit.ChainNotEnded, "auto_retry_start", 1}},
	"36-aborted-reply-mid-chain.yaml":               {{audit.ChainNotEnded, "auto_retry_start", 1}},
	"48-error-without-text-ends-unknown-error.yaml": {{audit.ChainNotEnded, "auto_retry_start", 1}},
	// H3: retry switched off mid-chain.
	"13-disable-during-backoff-then-error.json": {{audit.ChainNotEnded, "auto_retry_start", 1}},
	"08-disable-during-backoff-then-error.yaml": {{audit.ChainNotEnded, "auto_retry_start", 1}},
	// H1, H2, H13: the dangling chain is still open when the next prompt is
	// accepted, and its stale counter starts the next chain at attempt 2.
	"10b-non-retryable-mid-chain-then-abort-and-new-chain.json": {
		{audit.ChainNotEnded, "auto_retry_start", 1}, {audit.StaleCounter, "auto_retry_start", 2}},
	// H2, H8, H13: an abort during the retried run leaves the chain open and
	// the counter stale; the next prompt's success ends a chain that is not.
	"14-abort-during-retried-run-stale-counter.json": {
		{audit.ChainNotEnded, "auto_retry_start", 1}, {audit.StrayEnd, "auto_retry_end", 1}},
	"37-abort-during-retried-run.yaml": {
		{audit.ChainNotEnded, "auto_retry_start", 1}, {audit.StrayEnd, "auto_retry_end", 1}},
	// H19: the compaction rebuilt the context from the session history and
	// its continue was rejected. After a retried error (H1 too: the chain
	// stays open, the prompt waits):
	"21-overflow-after-retried-error-continue-rejected.json": {
		{audit.CompactionContinueMissing, "auto_compaction_end", 1}, {audit.ChainNotEnded, "auto_retry_start", 1}},
	"39-overflow-mid-chain.yaml": {
		{audit.CompactionContinueMissing, "auto_compaction_end", 1}, {audit.ChainNotEnded, "auto_retry_start", 1}},
	"46-retry-after-compaction-from-exhausted.yaml": {
		{audit.CompactionContinueMissing, "auto_compaction_end", 1}, {audit.ChainNotEnded, "auto_retry_start", 1}},
	// ... and of a successful reply over the window.
	"17-overflow-by-usage-on-success.yaml":          {{audit.CompactionContinueMissing, "auto_compaction_end", 1}},
	"22-success-over-window-continue-rejected.json": {{audit.CompactionContinueMissing, "auto_compaction_end", 1}},
}

// hazardNotInLog are the files whose flag leaves no trace the rules read,
// though the flag's rules find it elsewhere.
var hazardNotInLog = map[string]string{
	// The next prompt's run starts at the compaction's own time: without
	// the continue_rejected of the trace the log is the sound variant's,
	// whose prompt cancels the continue.
	"23-aborted-over-window-before-prompt.json": "H19_compaction_continue_rejected",
}

// hazardRules are the rules that find each hazard class of the conformance
// manifest in a log. H4, H5 and H18 leave no trace the rules read: the
// chains themselves start and end as a policy's do (a prompt resolved
// early, a second response, a chain nobody waits for).
var hazardRules = map[string][]audit.Rule{
	"H1_nonretryable_midchain":         {audit.ChainNotEnded},
	"H3_disabled_midchain":             {audit.ChainNotEnded},
	"H7_unresolved_prompt":             {audit.ChainNotEnded},
	"H13_prompt_during_open_chain":     {audit.ChainNotEnded},
	"H2_abort_outside_sleep":           {audit.StaleCounter, audit.StrayEnd},
	"H8_stale_counter_end":             {audit.StaleCounter, audit.StrayEnd},
	"H4_success_reset_mid_run":         nil,
	"H5_prompt_rejected":               nil,
	"H18_retry_without_waiting_prompt": nil,
	"H19_compaction_continue_rejected": {audit.CompactionContinueMissing},
}

// lineOf returns the line number of the n-th line of type typ in log.
func lineOf(t *testing.T, log []byte, typ string, n int) int {
	t.Helper()
	for i, l := range strings.Split(string(log), "\n") {
		var head struct{ Type string }
		if json.Unmarshal([]byte(l), &head) == nil && head.Type == typ {
			if n--; n == 0 {
				return i + 1
			}
		}
	}
	t.Fatalf("the log has no %s line number %d:\n%s", typ, n, numbered(log))
	return 0
}

// TestOriginalHazardsFoundAtTheirLines: the original variant's log of every
// scenario it runs has exactly the findings of originalFindings, at their
// lines: the hazards are found, and nothing else is (the waits of the
// original are its profile's).
func TestOriginalHazardsFoundAtTheirLines(t *testing.T) {
	seen := map[string]bool{}
	ran := 0
	for _, f := range allScenarioFiles(t) {
		sc := loadScenario(t, f)
		if sc.SetVariant("original") != nil {
			continue // opt-in settings: the original has no rule for them
		}
		ran++
		base := filepath.Base(f)
		log := rpcLog(t, sc, "original")
		fs, _ := auditLog(t, log, optionsFor(sc))
		var want []finding
		for _, w := range originalFindings[base] {
			want = append(want, finding{lineOf(t, log, w.typ, w.n), w.rule})
		}
		if got := short(fs); !slices.Equal(got, want) {
			t.Errorf("%s: findings %v, want %v\nreasons: %v\n%s", f, got, want, fs, numbered(log))
		}
		if _, ok := originalFindings[base]; ok {
			seen[base] = true
		}
	}
	if ran < 60 {
		t.Errorf("only %d files ran under the original variant", ran)
	}
	for base := range originalFindings {
		if !seen[base] {
			t.Errorf("%s: no such scenario file ran", base)
		}
	}
}

// TestEachHazardClassIsFound: for every hazard flag of the conformance
// manifest, the original's log of each file with that flag has a finding of
// one of the flag's rules (hazardRules).
func TestEachHazardClassIsFound(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(conformanceDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest []struct {
		File  string   `json:"file"`
		Clean bool     `json:"clean"`
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, m := range manifest {
		sc := loadScenario(t, filepath.Join(conformanceDir, m.File))
		log := rpcLog(t, sc, "original")
		fs, _ := auditLog(t, log, optionsFor(sc))
		if m.Clean && len(fs) > 0 {
			t.Errorf("%s: clean in the manifest, findings %v\n%s", m.File, fs, numbered(log))
		}
		for _, flag := range m.Flags {
			rules, known := hazardRules[flag]
			if !known {
				t.Errorf("%s: hazard %s has no entry in hazardRules", m.File, flag)
				continue
			}
			if rules == nil || hazardNotInLog[m.File] == flag {
				continue
			}
			if !slices.ContainsFunc(fs, func(f audit.Finding) bool { return slices.Contains(rules, f.Rule) }) {
				t.Errorf("%s: hazard %s not found (want one of %v), findings %v\n%s", m.File, flag, rules, fs, numbered(log))
				continue
			}
			found[flag] = true
		}
	}
	for flag, rules := range hazardRules {
		if rules != nil && !found[flag] {
			t.Errorf("hazard %s is in no file of the manifest", flag)
		}
	}
}

// jitteredScenario retries four times under omp-2026-06, whose backoff is
// jittered down by up to 25%.
const jitteredScenario = `
name: jittered
profile: omp-2026-06
seed: 7
turns:
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: error, errorMessage: 529 overloaded_error}
  - {stopReason: stop}
`

// TestJitteredProfileLog: a log with jittered delays is clean under the
// profile that wrote it and flagged at every retry under the default one.
func TestJitteredProfileLog(t *testing.T) {
	sc, err := scenario.Parse("jittered.yaml", []byte(jitteredScenario))
	if err != nil {
		t.Fatal(err)
	}
	log := rpcLog(t, sc, "sound")
	if bytes.Count(log, []byte(`"type":"auto_retry_start"`)) != 4 {
		t.Fatalf("not the log this test is about:\n%s", numbered(log))
	}
	// The delays are jittered: none is the plain backoff.
	p, err := policy.ProfileByName("omp-2026-06")
	if err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= 4; k++ {
		plain := strconv.FormatFloat(float64(p.Settings.Backoff(k, 0))/float64(time.Millisecond), 'f', -1, 64)
		if bytes.Contains(log, []byte(`"delayMs":`+plain+`,`)) {
			t.Errorf("attempt %d waits the unjittered backoff %s ms", k, plain)
		}
	}
	checkFindings(t, log, audit.Options{Profile: "omp-2026-06"})
	var want []finding
	for n := 1; n <= 4; n++ {
		want = append(want, finding{lineOf(t, log, "auto_retry_start", n), audit.Delay})
	}
	fs := checkFindings(t, log, audit.Options{}, want...)
	if len(fs) > 0 && !strings.Contains(fs[0].Reason, "profile omp-2026-02 waits 2000") {
		t.Errorf("reason %q does not say what the default waits", fs[0].Reason)
	}
}

// TestHintWindowInSimulatedLog: the default profile ignores a retry-after
// hint, so its log (scenario 26) retries 2 s after an error asking for 60 s:
// clean under the default, a hint-window finding under a profile that
// honours hints, at the retried run's agent_start; that profile's own log
// of the scenario waits the 60 s and is clean.
func TestHintWindowInSimulatedLog(t *testing.T) {
	path := filepath.Join(scenariosDir, "26-retry-after-ignored-outside-usage-limit.yaml")
	log := rpcLog(t, loadScenario(t, path), "sound")
	checkFindings(t, log, audit.Options{})
	fs := checkFindings(t, log, audit.Options{Profile: "anthropic-sdk"}, finding{lineOf(t, log, "agent_start", 2), audit.HintWindow})
	if len(fs) == 1 && !strings.Contains(fs[0].Reason, "started 2000 ms after the error") {
		t.Errorf("reason %q", fs[0].Reason)
	}

	sc := loadScenario(t, path)
	if err := sc.SetProfile("anthropic-sdk"); err != nil {
		t.Fatal(err)
	}
	honouring := rpcLog(t, sc, "sound")
	if !bytes.Contains(honouring, []byte(`"delayMs":60000`)) {
		t.Fatalf("anthropic-sdk does not wait the hint:\n%s", numbered(honouring))
	}
	checkFindings(t, honouring, audit.Options{Profile: "anthropic-sdk"})
}
