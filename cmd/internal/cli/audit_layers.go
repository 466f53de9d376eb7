package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/ohmypi/retryfsm/audit"
	"github.com/ohmypi/retryfsm/internal/termsafe"
)

// auditAttemptJSON is an attempt line of "retrysim audit --wire=WIRELOG
// --json": a session attempt of the RPC log and the requests it made.
type auditAttemptJSON struct {
	Type string `json:"type"` // "attempt"
	Log  string `json:"log"`
	audit.Attempt
}

// auditLayersJSONSummary is the last line of "retrysim audit
// --wire=WIRELOG --json": the RPC log's summary, then the wire log's and
// the number of session attempts.
type auditLayersJSONSummary struct {
	Type    string `json:"type"` // "summary"
	Profile string `json:"profile"`
	Logs    int    `json:"logs"`
	audit.Summary
	Layer    string        `json:"layer"`
	Wire     audit.Summary `json:"wire"`
	Attempts int           `json:"attempts"`
	// the log's jitter the wire waits' slack was widened by
	// (audit.LayersSummary)
	JitterMs      float64 `json:"jitterMs,omitempty"`
	JitterRetries int     `json:"jitterRetries,omitempty"`
}

// runAuditLayers runs "retrysim audit --wire=WIRELOG LOG": the two retry
// layers of one run, checked together (audit.AuditLayers).
func (o *auditOptions) auditLayers(a *audit.Auditor, wirePath string, settings bool, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c := lookup("audit")
	prof := a.Profile()
	if len(args) != 1 {
		return usageError(c, stderr, "--wire=WIRELOG takes one RPC log, the run's (got %d logs)", len(args))
	}
	if prof.Layer == "" {
		return usageError(c, stderr, "--wire=WIRELOG: profile %s has no provider layer (allowed: a profile with one, such as omp-18; --wire alone audits wire logs)", prof.Name)
	}
	if wirePath == "-" && args[0] == "-" {
		return usageError(c, stderr, "--wire=- and LOG - cannot both be the standard input")
	}
	opt, ok := o.wireOptions.check(c, stderr)
	if !ok {
		return exitUsage
	}
	open := func(path string) (io.Reader, func(), error) {
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
	name := func(path string) string {
		if path == "-" {
			return "<stdin>"
		}
		return path
	}
	rpcName, wireName := name(args[0]), name(wirePath)
	rpcR, closeRPC, err := open(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "retrysim audit: %s: %s\n", termsafe.Text(rpcName), termsafe.Text(err.Error()))
		return exitUsage
	}
	defer closeRPC()
	wireR, closeWire, err := open(wirePath)
	if err != nil {
		fmt.Fprintf(stderr, "retrysim audit: %s: %s\n", termsafe.Text(wireName), termsafe.Text(err.Error()))
		return exitUsage
	}
	defer closeWire()

	asJSON := o.json
	out := bufio.NewWriter(stdout)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	report := func(log string) func(audit.Finding) { return findingPrinter(out, enc, asJSON, log) }
	attempt := func(at audit.Attempt) {
		if asJSON {
			_ = enc.Encode(auditAttemptJSON{Type: "attempt", Log: rpcName, Attempt: at})
			return
		}
		lines := "none"
		if at.Requests > 0 {
			lines = fmt.Sprintf("%s lines %d-%d", termsafe.Text(wireName), at.WireFrom, at.WireTo)
		}
		fmt.Fprintf(out, "%s:%d: attempt %d: %s (%s)\n", termsafe.Text(rpcName), at.Line, at.Attempt, plural(at.Requests, "request"), lines)
	}
	sum, err := a.AuditLayers(rpcR, wireR, opt, report(rpcName), report(wireName), attempt)
	if err != nil {
		_ = out.Flush()
		fmt.Fprintf(stderr, "retrysim audit: %s\n", termsafe.Text(err.Error()))
		return exitUsage
	}
	if asJSON {
		_ = enc.Encode(auditLayersJSONSummary{Type: "summary", Profile: prof.Name, Logs: 1, Summary: sum.RPC,
			Layer: prof.Layer, Wire: sum.Wire, Attempts: sum.Attempts, JitterMs: sum.JitterMs, JitterRetries: sum.JitterRetries})
	} else {
		fmt.Fprintln(out, auditSummaryLine(prof.Name, settings, 1, sum.RPC))
		verdict := "clean"
		if sum.Wire.Findings > 0 {
			verdict = plural(sum.Wire.Findings, "finding")
		}
		jitter := ""
		if sum.JitterMs > 0 {
			jitter = fmt.Sprintf("; slack widened by %s ms, the lateness of %s", strconv.FormatFloat(sum.JitterMs, 'f', 1, 64), plural(sum.JitterRetries, "session retry"))
		}
		fmt.Fprintf(out, "audit --wire: %s in %s (%s: %s, %d skipped, %d bad; %s, %s over %s; provider layer %s%s)\n",
			verdict, termsafe.Text(wireName), plural(sum.Wire.Lines, "line"), plural(sum.Wire.Events, "request"), sum.Wire.Skipped, sum.Wire.Bad,
			plural(sum.Wire.Chains, "call"), plural(sum.Wire.Retries, "retry"), plural(sum.Attempts, "session attempt"), prof.Layer, jitter)
	}
	return auditExit(out, stderr, false, sum.RPC.Findings+sum.Wire.Findings)
}
