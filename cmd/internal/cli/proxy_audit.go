package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/policy"
)

// wireOptions are audit's flags for wire logs.
type wireOptions struct {
	wire  wireValue
	slack slackValue
}

// slackValue is --slack: milliseconds, kept as written for the messages.
type slackValue struct {
	ms   float64
	text string // as given ("" when not given)
	err  error
}

func (v *slackValue) setError() error { return v.err }

func (v *slackValue) String() string {
	if v == nil || v.text == "" {
		return strconv.FormatFloat(float64(audit.DefaultWireSlack/time.Millisecond), 'g', -1, 64)
	}
	return v.text
}

// Set keeps the text; check says what is wrong with it.
func (v *slackValue) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		v.err = fmt.Errorf("--slack: %q is not a number", s)
		return v.err
	}
	v.ms, v.text = f, s
	return nil
}

// define defines the wire flags on fs, bound to o.
func (o *wireOptions) define(fs *flag.FlagSet) {
	fs.Var(&o.wire, "wire", "the logs are wire logs of \"retrysim proxy\": check the client's HTTP retries; as --wire=`WIRELOG`, the wire log of the run whose RPC log is the one LOG: check both retry layers together")
	o.slack.ms = float64(audit.DefaultWireSlack / time.Millisecond)
	fs.Var(&o.slack, "slack", "with --wire, a retry may come up to `MS` later than the profile's longest wait, plus 0.5 % of that wait (default 50)")
}

// check validates --slack and returns the options of a wire audit; false
// after a usage error of c.
func (o *wireOptions) check(c *command, stderr io.Writer) (audit.WireOptions, bool) {
	slack := o.slack.ms
	if !(slack >= 0 && slack <= 3_600_000) { // NaN too
		usageError(c, stderr, "--slack: %q is not a number of milliseconds from 0 to 3600000", o.slack.text)
		return audit.WireOptions{}, false
	}
	opt := audit.WireOptions{Slack: time.Duration(slack * float64(time.Millisecond))}
	if slack == 0 {
		opt.Slack = -1 // none
	}
	return opt, true
}

// wireValue is --wire: a switch (every LOG is a wire log), or, as
// --wire=WIRELOG, the wire log read beside the one RPC log (a value that
// reads as a boolean is the switch: name a file "true" as ./true).
type wireValue struct {
	on   bool
	path string
}

func (w *wireValue) String() string {
	if w == nil {
		return "false"
	}
	if w.path != "" {
		return w.path
	}
	return strconv.FormatBool(w.on)
}

func (w *wireValue) Set(s string) error {
	if b, err := strconv.ParseBool(s); err == nil {
		w.on, w.path = b, ""
		return nil
	}
	if s == "" {
		return fmt.Errorf("an empty path (allowed: --wire alone, or --wire=WIRELOG)")
	}
	w.on, w.path = false, s
	return nil
}

func (w *wireValue) IsBoolFlag() bool { return true }

// auditWireJSONSummary is the last line of "retrysim audit --wire --json".
type auditWireJSONSummary struct {
	Type    string `json:"type"` // "summary"
	Profile string `json:"profile"`
	Logs    int    `json:"logs"`
	audit.WireSummary
}

// runAuditWire runs "retrysim audit --wire": findings and exit status as
// audit's, the summary naming the best-fitting profiles.
func (o *auditOptions) auditWire(a *audit.Auditor, profile string, settings bool, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := lookup("audit")
	opt, ok := o.wireOptions.check(c, stderr)
	if !ok {
		return exitUsage
	}
	w := newAuditOutput(stdout, stderr, o.json)
	var total audit.WireSummary
	logs, readFailed := w.each(args, stdin, func(r io.Reader, report func(audit.Finding)) error {
		sum, err := a.AuditWire(r, opt, report)
		total.Add(sum)
		return err
	})
	w.summary(logs, auditWireJSONSummary{Type: "summary", Profile: profile, Logs: logs, WireSummary: total},
		func() string { return auditWireSummaryLine(profile, settings, logs, total) })
	return w.exit(readFailed, total.Findings)
}

// auditWireSummaryLine is the text output's last line, e.g. "audit --wire:
// clean in 1 log (3 lines: 3 requests, 0 skipped, 0 bad; 1 call, 2 retries;
// profile anthropic-sdk-go); best fit: anthropic-sdk, anthropic-sdk-go (0
// findings)".
func auditWireSummaryLine(profile string, settings bool, logs int, s audit.WireSummary) string {
	policyName := auditPolicyName(profile, settings)
	if p, err := policy.ProfileByName(profile); err == nil && p.Layer != "" && !settings {
		policyName += ", its provider layer " + p.Layer + " on the wire"
	}
	best := "none"
	if len(s.Best) > 0 {
		least := 0
		for _, f := range s.Fits {
			if f.Profile == s.Best[0] {
				least = f.Findings
			}
		}
		best = strings.Join(s.Best, ", ") + " (" + plural(least, "finding")
		if len(s.Best) > 1 {
			best += "; the log cannot tell them apart"
		}
		best += ")"
	}
	line := fmt.Sprintf("audit --wire: %s in %s (%s: %s, %d skipped, %d bad; %s, %s; %s); best fit: %s",
		auditVerdict(s.Findings), plural(logs, "log"), plural(s.Lines, "line"), plural(s.Events, "request"), s.Skipped, s.Bad,
		plural(s.Chains, "call"), plural(s.Retries, "retry"), policyName, best)
	if s.Ambiguous > 0 {
		// no retry count: after an answer the profile does not retry, a
		// request may be a retry or a new call (SPEC.md §16.1)
		line += fmt.Sprintf("; %s after an answer the profile does not retry taken as new calls (a retry or a new call: the client sends no retry count)",
			plural(s.Ambiguous, "request"))
	}
	return line
}
