package cli

import (
	"fmt"
	"io"
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
	rpcName, wireName := logName(args[0]), logName(wirePath)
	w := newAuditOutput(stdout, stderr, o.json)
	rpcR, closeRPC, err := openLog(args[0], stdin)
	if err != nil {
		w.fail(rpcName, err)
		return exitUsage
	}
	defer closeRPC()
	wireR, closeWire, err := openLog(wirePath, stdin)
	if err != nil {
		w.fail(wireName, err)
		return exitUsage
	}
	defer closeWire()

	attempt := func(at audit.Attempt) {
		if w.asJSON {
			_ = w.enc.Encode(auditAttemptJSON{Type: "attempt", Log: rpcName, Attempt: at})
			return
		}
		lines := "none"
		if at.Requests > 0 {
			lines = fmt.Sprintf("%s lines %d-%d", termsafe.Text(wireName), at.WireFrom, at.WireTo)
		}
		fmt.Fprintf(w.out, "%s:%d: attempt %d: %s (%s)\n", termsafe.Text(rpcName), at.Line, at.Attempt, plural(at.Requests, "request"), lines)
	}
	sum, err := a.AuditLayers(rpcR, wireR, opt, w.findings(rpcName), w.findings(wireName), attempt)
	if err != nil {
		w.fail("", err)
		return exitUsage
	}
	if w.asJSON {
		_ = w.enc.Encode(auditLayersJSONSummary{Type: "summary", Profile: prof.Name, Logs: 1, Summary: sum.RPC,
			Layer: prof.Layer, Wire: sum.Wire, Attempts: sum.Attempts, JitterMs: sum.JitterMs, JitterRetries: sum.JitterRetries})
	} else {
		fmt.Fprintln(w.out, auditSummaryLine(prof.Name, settings, 1, sum.RPC))
		jitter := ""
		if sum.JitterMs > 0 {
			jitter = fmt.Sprintf("; slack widened by %s ms, the lateness of %s", strconv.FormatFloat(sum.JitterMs, 'f', 1, 64), plural(sum.JitterRetries, "session retry"))
		}
		fmt.Fprintf(w.out, "audit --wire: %s in %s (%s: %s, %d skipped, %d bad; %s, %s over %s; provider layer %s%s)\n",
			auditVerdict(sum.Wire.Findings), termsafe.Text(wireName), plural(sum.Wire.Lines, "line"), plural(sum.Wire.Events, "request"), sum.Wire.Skipped, sum.Wire.Bad,
			plural(sum.Wire.Chains, "call"), plural(sum.Wire.Retries, "retry"), plural(sum.Attempts, "session attempt"), prof.Layer, jitter)
	}
	return w.exit(false, sum.RPC.Findings+sum.Wire.Findings)
}
