package audit

import (
	"fmt"
	"io"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/wire"
)

// The rules of an RPC log and a wire log of the same run, read together
// (AuditLayers, SPEC.md §16.2), beyond those of each log.
const (
	// WireOutsideRun: a request of the wire log made while no run of the
	// RPC log was going (before the first agent_start, or after a run's
	// agent_end and before the next agent_start). Reported at the request.
	WireOutsideRun Rule = "wire-outside-run"
	// LayerMismatch: a run whose reply (its last assistant message_end)
	// is an error while the provider layer's last answer in the run was a
	// success, or a success after an error answer. Reported at the
	// message_end.
	LayerMismatch Rule = "layer-mismatch"
)

// LayerRules lists the rules AuditLayers adds to Rules and WireRules.
func LayerRules() []Rule { return []Rule{WireOutsideRun, LayerMismatch} }

// Attempt is one session attempt of an RPC log (a run, from its
// agent_start) and the requests its provider layer sent during it.
type Attempt struct {
	// Line is the run's agent_start line in the RPC log.
	Line int `json:"line"`
	// Attempt is 0 for a prompt's first run, k for the run after the
	// session layer's auto_retry_start with attempt k.
	Attempt int `json:"attempt"`
	// Requests counts the wire log's requests sent during the run.
	Requests int `json:"requests"`
	// WireFrom and WireTo are the first and the last of them, as lines of
	// the wire log (0: none).
	WireFrom int `json:"wireFrom"`
	WireTo   int `json:"wireTo"`
}

// LayersSummary counts what AuditLayers read and found in each log.
type LayersSummary struct {
	// RPC is the RPC log's summary (ProviderLayer: ProviderLayerChecked);
	// its findings include the layer-mismatch ones.
	RPC Summary `json:"rpc"`
	// Wire is the wire log's: Events the requests, Chains the model calls
	// of the provider layer, Retries its retries; its findings include
	// the wire-outside-run ones.
	Wire Summary `json:"wire"`
	// Attempts counts the runs of the RPC log.
	Attempts int `json:"attempts"`
}

// run is one run of the RPC log as AuditLayers keeps it.
type run struct {
	line, attempt int
	start, end    stamp // end: its agent_end's (noTime: none yet)
	replyLine     int   // its last assistant message_end (0: none)
	replyErr      bool
	requests      int
	from, to      int  // its first and last request's wire lines
	lastFailed    bool // its last request was answered with an error or not at all
}

// runLog collects the runs of an RPC log while it is audited. It grows
// with the runs of the log (a few dozen bytes each): the one part of an
// audit that is not bounded, and only for AuditLayers.
type runLog struct{ runs []run }

func (l *runLog) start(line int, at stamp, attempt int) {
	l.runs = append(l.runs, run{line: line, attempt: attempt, start: at})
}

func (l *runLog) last() *run {
	if len(l.runs) == 0 {
		return nil
	}
	return &l.runs[len(l.runs)-1]
}

func (l *runLog) end(at stamp) {
	if r := l.last(); r != nil && r.end.kind == noTime {
		r.end = at
	}
}

func (l *runLog) reply(line int, failed bool) {
	if r := l.last(); r != nil {
		r.replyLine, r.replyErr = line, failed
	}
}

// AuditLayers checks the two retry layers of an agent whose profile has a
// provider layer (policy.Profile.Layer) together: rpcLog, the agent's RPC
// log, is audited as Audit does against the profile (its session layer),
// and wireLog, the wire log "retrysim proxy" wrote of the same run, against
// the provider layer's profile, each request placed in the run of the RPC
// log during which it was sent (by time: the RPC log's lines must carry
// "timestamp", epoch ms, as the wire log's do). Within a run, a request
// after an error answer (or none) retries it and a request after a success
// is the next model call; a run's end ends its call, so a provider layer
// that still had retries to make when the session layer acted is a
// wire-not-retried finding. reportRPC and reportWire get the findings of
// each log (either may be nil); onAttempt (if not nil) gets every run
// with the requests it made, in order, after both logs are read.
func (a *Auditor) AuditLayers(rpcLog, wireLog io.Reader, opt WireOptions, reportRPC, reportWire func(Finding), onAttempt func(Attempt)) (LayersSummary, error) {
	var sum LayersSummary
	if a.profile.Layer == "" {
		return sum, fmt.Errorf("audit: profile %s has no provider layer to check with a wire log (allowed: a profile with one, such as omp-18; a wire log alone is audited with AuditWire)", a.profile.Name)
	}
	lp, err := policy.ProfileByName(a.profile.Layer)
	if err != nil {
		return sum, fmt.Errorf("audit: profile %s: provider layer: %w", a.profile.Name, err)
	}
	pol, err := lp.Policy()
	if err != nil {
		return sum, fmt.Errorf("audit: profile %s: %w", lp.Name, err)
	}
	set, cls := pol.Settings().Normalized(), pol.Classifier()

	log := &runLog{}
	a.runs = log
	sum.RPC, err = a.Audit(rpcLog, reportRPC)
	a.runs = nil
	if err != nil {
		return sum, err
	}
	sum.RPC.ProviderLayer = ProviderLayerChecked
	runs := log.runs
	sum.Attempts = len(runs)
	for i := range runs {
		if runs[i].start.kind != epochTime {
			return sum, fmt.Errorf("audit: RPC log line %d: agent_start has no \"timestamp\" (epoch ms): its run cannot be placed among the wire log's requests", runs[i].line)
		}
	}

	findRPC := func(line int, rule Rule, reason string) {
		sum.RPC.Findings++
		if reportRPC != nil {
			reportRPC(Finding{Line: line, Rule: rule, Reason: reason})
		}
	}
	c := &wireCheck{name: lp.Name, set: set, cls: cls, slack: wireSlack(opt), report: reportWire}
	// closeRun ends the provider layer's call at the end of run i.
	closeRun := func(i int) {
		if i < 0 {
			return
		}
		r := &runs[i]
		if prev := c.last; prev != nil && prev.mustRetry {
			c.find(prev.line, WireNotRetried, fmt.Sprintf("%s: provider layer %s retries it (%s); the session's run (RPC line %d) went on without it",
				prev.what, c.name, prev.why, r.line))
		}
		c.last = nil
		if r.replyLine != 0 && r.requests > 0 && r.replyErr != r.lastFailed {
			got, want := "a success", "an error"
			if r.replyErr {
				got, want = "an error", "a success"
			}
			findRPC(r.replyLine, LayerMismatch, fmt.Sprintf("the session layer's reply is %s, but its provider layer's last answer in this run (wire line %d) was %s",
				got, r.to, want))
		}
	}
	cur := -1
	err = readWireLog(wireLog, &sum.Wire, func(line int, rule Rule, reason string) { c.find(line, rule, reason) }, func(n int, rec *wire.Record) {
		t := rec.Timestamp
		next := cur
		for next+1 < len(runs) && runs[next+1].start.ms <= t+hintToleranceMs {
			next++
		}
		if next != cur {
			closeRun(cur)
			cur = next
		}
		if cur < 0 || runs[cur].end.kind == epochTime && t > runs[cur].end.ms+hintToleranceMs {
			where := "before the first run"
			if cur >= 0 {
				where = fmt.Sprintf("after the run of RPC line %d ended (agent_end at %s)", runs[cur].line, fmtMs(runs[cur].end.ms))
			}
			c.find(n, WireOutsideRun, fmt.Sprintf("a request at %s ms while no run of the RPC log was going (%s)", fmtMs(t), where))
			return
		}
		r := &runs[cur]
		retry := r.requests > 0 && c.last != nil && c.last.failed()
		if retry {
			sum.Wire.Retries++
		} else {
			sum.Wire.Chains++
		}
		c.onRequest(n, rec, retry, -1)
		r.requests++
		if r.from == 0 {
			r.from = n
		}
		r.to = n
		r.lastFailed = c.last.failed()
	})
	if err != nil {
		return sum, err
	}
	closeRun(cur)
	sum.Wire.Findings = c.findings
	if onAttempt != nil {
		for _, r := range runs {
			onAttempt(Attempt{Line: r.line, Attempt: r.attempt, Requests: r.requests, WireFrom: r.from, WireTo: r.to})
		}
	}
	return sum, nil
}
