package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
)

func init() {
	register(&command{
		name:  "audit",
		args:  "LOG.jsonl...",
		short: "check an agent's RPC log against a retry profile: unended chains, stale counters, waits",
		long: `Reads each LOG, JSON Lines as "retrysim rpc" or the original agent's RPC mode
writes them (events and responses; "t" virtual ms or "timestamp" epoch ms
per line, optional), and checks every retry chain against the settings of
--profile (default ` + policy.DefaultProfile + `), or --settings merged over them.
"-" reads the standard input.

Rules (SPEC.md §16):
    chain-not-ended   a chain with no auto_retry_end before the next prompt's
                      run starts or by the end of the log (at its first start)
    attempt-sequence  an attempt that is not the previous one + 1
    stale-counter     a chain whose first attempt is not 1
    stray-end         an auto_retry_end with no chain open that no policy gives
    delay             a delayMs the profile cannot give for that attempt
                      (0 is always allowed)
    overflow-retried  a retried error the profile classifies as a context
                      overflow (the usage rule needs --context-window)
    hint-window       with times, under a profile that honours hints, a retry
                      started before the wait asked for in the error message
    bad-json, bad-event, long-line
                      a line that could not be read (skipped)

With --wire=WIRELOG and one LOG, under a profile with a provider layer
(omp-18), LOG is the agent's RPC log and WIRELOG the wire log "retrysim proxy"
wrote of the same run (SPEC.md §16.2): the session layer is checked in LOG,
the provider layer in WIRELOG (the rules of --wire below, each request within
the run it was sent in), and
    wire-outside-run  a request sent while no run was going
    layer-mismatch    a run's reply that its last request's answer contradicts
and each session attempt's requests are counted ("LOG:LINE: attempt K: N
requests (WIRELOG lines A-B)"). LOG's lines need "timestamp" (epoch ms).
Under such a profile an RPC log alone says "provider layer not visible in
this log": that layer's retries leave no RPC event.

With --wire, each LOG is a wire log of "retrysim proxy" (SPEC.md §16.1):
    wire-not-retried  an answer the profile retries, not retried
    wire-retried      a retry of an answer the profile does not retry
    wire-wait         a retry sent sooner or later than the profile waits
                      (later by more than --slack)
    wire-retry-count  an x-stainless-retry-count out of sequence
and the summary names the profiles that fit best.

Prints one line per finding, "LOG:LINE: rule: reason", in the order they are
found (a chain-not-ended finding when the chain is known not to have ended),
then a summary line. With --json, prints JSON Lines instead:
{"type":"finding","log","line","rule","reason"} per finding, then
{"type":"summary","profile","logs",...}.

Exit status: 0 when every log is clean, 1 when there are findings, 2 on
invalid flags or arguments or when a log cannot be read.`,
		options: func(fs *flag.FlagSet) runner {
			o := &auditOptions{}
			profileFlag(fs, &o.profile, "check against the retry settings of profile `NAME` (default "+policy.DefaultProfile+")")
			fs.StringVar(&o.settings, "settings", "", "merge the settings object `JSON` (SPEC.md §1's keys) over the profile's: the agent's own settings")
			fs.Int64Var(&o.contextWindow, "context-window", 0, "the model's context window in `TOKENS`, for the overflow usage rule (0: message patterns only)")
			fs.BoolVar(&o.json, "json", false, "print the findings and the summary as JSON Lines")
			o.wireOptions.define(fs)
			return o
		},
	})
}

// auditOptions are audit's flags.
type auditOptions struct {
	profile       string
	settings      string
	contextWindow int64
	json          bool
	wireOptions
}

func (o *auditOptions) run(args []string, stdout, stderr io.Writer) int {
	return o.audit(args, os.Stdin, stdout, stderr)
}

// auditJSONFinding is a finding line of "retrysim audit --json".
type auditJSONFinding struct {
	Type   string     `json:"type"` // "finding"
	Log    string     `json:"log"`
	Line   int        `json:"line"`
	Rule   audit.Rule `json:"rule"`
	Reason string     `json:"reason"`
}

// auditJSONSummary is the last line of "retrysim audit --json".
type auditJSONSummary struct {
	Type    string `json:"type"` // "summary"
	Profile string `json:"profile"`
	Logs    int    `json:"logs"`
	audit.Summary
}

// runAudit runs "retrysim audit" with the flags fs (audit's) parsed; the
// log "-" is read from stdin.
func runAudit(fs *commandFlags, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return fs.opts.(*auditOptions).audit(args, stdin, stdout, stderr)
}

// audit runs "retrysim audit"; the log "-" is read from stdin.
func (o *auditOptions) audit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := lookup("audit")
	if len(args) == 0 {
		return usageError(c, stderr, "no log given (give one or more LOG.jsonl files, or - for the standard input)")
	}
	opt := audit.Options{Profile: o.profile}
	prof, err := policy.ProfileByName(opt.Profile)
	if err != nil {
		return usageError(c, stderr, "--profile: %v", err)
	}
	if s := o.settings; s != "" {
		set, err := prof.Settings.Apply([]byte(s))
		var pol *policy.Policy
		if err == nil {
			pol, err = policy.Compile(set)
		}
		if err != nil {
			return usageError(c, stderr, "--settings: %v", err)
		}
		opt.Policy = pol
	}
	window := o.contextWindow
	if window < 0 {
		return usageError(c, stderr, "--context-window: %q is not a number of tokens (allowed: 0 for none, or a positive integer)", strconv.FormatInt(window, 10))
	}
	opt.ContextWindow = window
	a, err := audit.New(opt)
	if err != nil {
		return usageError(c, stderr, "%v", err)
	}
	asJSON := o.json
	if o.slack.text != "" && !o.wire.on && o.wire.path == "" {
		return usageError(c, stderr, "--slack %s: the slack is a wire log's (allowed with --wire or --wire=WIRELOG)", o.slack.text)
	}
	if o.wire.on {
		return o.auditWire(a, prof.Name, opt.Policy != nil, args, stdin, stdout, stderr)
	}
	if path := o.wire.path; path != "" {
		return o.auditLayers(a, path, opt.Policy != nil, args, stdin, stdout, stderr)
	}

	w := newAuditOutput(stdout, stderr, asJSON)
	var total audit.Summary
	logs, readFailed := w.each(args, stdin, func(r io.Reader, report func(audit.Finding)) error {
		sum, err := a.Audit(r, report)
		total.Add(sum)
		return err
	})
	w.summary(logs, auditJSONSummary{Type: "summary", Profile: prof.Name, Logs: logs, Summary: total},
		func() string { return auditSummaryLine(prof.Name, opt.Policy != nil, logs, total) })
	return w.exit(readFailed, total.Findings)
}

// auditOutput is an audit's standard output (buffered; JSON Lines with
// --json) and its standard error.
type auditOutput struct {
	out    *bufio.Writer
	enc    *json.Encoder
	asJSON bool
	stderr io.Writer
}

func newAuditOutput(stdout, stderr io.Writer, asJSON bool) *auditOutput {
	w := &auditOutput{out: bufio.NewWriter(stdout), asJSON: asJSON, stderr: stderr}
	w.enc = json.NewEncoder(w.out)
	w.enc.SetEscapeHTML(false)
	return w
}

// each reads the logs at paths in turn ("-": stdin) with read, which
// reports each finding of the log to the printer it is given; logs counts
// the logs opened and read (in part, after a read error), and readFailed
// says whether one could not be read (said on stderr).
func (w *auditOutput) each(paths []string, stdin io.Reader, read func(r io.Reader, report func(audit.Finding)) error) (logs int, readFailed bool) {
	for _, path := range paths {
		name := logName(path)
		r, closeLog, err := openLog(path, stdin)
		if err == nil {
			logs++
			err = read(r, w.findings(name))
			closeLog()
		}
		if err != nil {
			w.fail(name, err)
			readFailed = true
		}
	}
	return logs, readFailed
}

// fail says on stderr that the log named name (or, name "", the audit)
// failed with err, after the output so far.
func (w *auditOutput) fail(name string, err error) {
	_ = w.out.Flush()
	if name != "" {
		fmt.Fprintf(w.stderr, "retrysim audit: %s: %s\n", termsafe.Text(name), termsafe.Text(err.Error()))
		return
	}
	fmt.Fprintf(w.stderr, "retrysim audit: %s\n", termsafe.Text(err.Error()))
}

// summary writes the last line: v with --json, else line's text. It
// counts the logs read: with none read there is nothing to sum up (a
// missing log is not "clean"), and nothing is written.
func (w *auditOutput) summary(logs int, v any, line func() string) {
	switch {
	case logs == 0:
	case w.asJSON:
		_ = w.enc.Encode(v)
	default:
		fmt.Fprintln(w.out, line())
	}
}

// exit flushes the output and returns the exit code: 1 when writing it
// failed (said on stderr) or there are findings, 2 when a log could not
// be read.
func (w *auditOutput) exit(readFailed bool, findings int) int {
	if err := w.out.Flush(); err != nil {
		fmt.Fprintf(w.stderr, "retrysim audit: writing the output: %v\n", err)
		return exitFail
	}
	switch {
	case readFailed:
		return exitUsage
	case findings > 0:
		return exitFail
	}
	return exitOK
}

// openLog opens the log at path for reading ("-": stdin, whose close does
// nothing); a folder is refused.
func openLog(path string, stdin io.Reader) (r io.Reader, close func(), err error) {
	if path == "-" {
		return stdin, func() {}, nil
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, nil, fmt.Errorf("is a directory (give log files)")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// auditVerdict is a summary's verdict: "clean", or its findings counted.
func auditVerdict(findings int) string {
	if findings > 0 {
		return plural(findings, "finding")
	}
	return "clean"
}

// auditPolicyName names the policy a summary checked against: "profile
// NAME", "with --settings" when given.
func auditPolicyName(profile string, settings bool) string {
	if settings {
		return "profile " + profile + " with --settings"
	}
	return "profile " + profile
}

// auditSummaryLine is the text output's last line, e.g. "audit: 2 findings
// in 1 log (40 lines: 38 events, 2 skipped, 0 bad; 3 chains, 5 retries;
// profile omp-2026-02)".
func auditSummaryLine(profile string, settings bool, logs int, s audit.Summary) string {
	line := fmt.Sprintf("audit: %s in %s (%s: %d events, %d skipped, %d bad; %s, %s; %s)",
		auditVerdict(s.Findings), plural(logs, "log"), plural(s.Lines, "line"), s.Events, s.Skipped, s.Bad,
		plural(s.Chains, "chain"), plural(s.Retries, "retry"), auditPolicyName(profile, settings))
	if s.Protocol > 0 {
		line += fmt.Sprintf("; protocol %d", s.Protocol)
	}
	switch s.ProviderLayer {
	case audit.ProviderLayerNotVisible:
		// the session layer's events only: the provider layer's retries
		// leave none (SPEC.md §16.2)
		line += "; provider layer not visible in this log"
	case audit.ProviderLayerChecked:
		line += "; provider layer checked with the wire log"
	}
	return line
}

// plural is "1 thing" or "n things" (a "y" after a consonant becomes "ies").
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	if strings.HasSuffix(thing, "ry") {
		return strconv.Itoa(n) + " " + strings.TrimSuffix(thing, "y") + "ies"
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// logName is the name a finding gives the log at path ("-": standard input).
func logName(path string) string {
	if path == "-" {
		return "<stdin>"
	}
	return path
}

// findings prints each finding of the log named name: a JSON line with
// --json, else "LOG:LINE: RULE: REASON".
func (w *auditOutput) findings(name string) func(audit.Finding) {
	return func(f audit.Finding) {
		if w.asJSON {
			_ = w.enc.Encode(auditJSONFinding{Type: "finding", Log: name, Line: f.Line, Rule: f.Rule, Reason: f.Reason})
			return
		}
		fmt.Fprintf(w.out, "%s:%d: %s: %s\n", termsafe.Text(name), f.Line, f.Rule, termsafe.Text(f.Reason))
	}
}
