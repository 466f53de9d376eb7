package audit

import (
	"fmt"
	"io"
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
	start, end    stamp // end: its agent_end's (noTime: none, or none given)
	ended         bool  // its agent_end was read
	replyLine     int   // its last assistant message_end (0: none)
	replyErr      bool
	aborted       bool // its last reply was aborted (stopReason aborted)
	replies       int  // its assistant message_ends: the model calls it made
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
	if r := l.last(); r != nil && !r.ended {
		r.end, r.ended = at, true
	}
}

func (l *runLog) reply(line int, failed, aborted bool) {
	if r := l.last(); r != nil {
		r.replyLine, r.replyErr, r.aborted = line, failed && !aborted, aborted
		r.replies++
	}
}

// AuditLayers checks the two retry layers of an agent whose profile has a
// provider layer (policy.Profile.Layer) together: rpcLog, the agent's RPC
// log, is audited as Audit does against the profile (its session layer),
// and wireLog, the wire log "retrysim proxy" wrote of the same run, against
// the provider layer's profile, each request placed in a run of the RPC
// log. When every run's agent_start has a "timestamp" (epoch ms, as a
// harness that logs a live agent adds), a request goes to the run during
// which it was sent; without (the agent's own log has none), by order:
// each assistant message_end of a run is one model call, and a call ends
// at an answer the provider layer does not retry. Within a run, a request
// after an error answer (or none) retries it and a request after a
// success is the next model call; a run's end ends its call, so a
// provider layer that still had retries to make when the session layer
// went on (not when the run was aborted) is a wire-not-retried finding.
// reportRPC and reportWire get the findings of each log (either may be
// nil); onAttempt (if not nil) gets every run with the requests it made,
// in order, after both logs are read.
func (a *Auditor) AuditLayers(rpcLog, wireLog io.Reader, opt WireOptions, reportRPC, reportWire func(Finding), onAttempt func(Attempt)) (LayersSummary, error) {
	var sum LayersSummary
	if a.profile.Layer == "" {
		return sum, fmt.Errorf("audit: profile %s has no provider layer to check with a wire log (allowed: a profile with one, such as omp-18; a wire log alone is audited with AuditWire)", a.profile.Name)
	}
	slack, ratio, err := wireSlack(opt)
	if err != nil {
		return sum, err
	}
	lp, err := wireProfile(a.profile)
	if err != nil {
		return sum, err
	}
	pol, err := lp.Policy()
	if err != nil {
		return sum, fmt.Errorf("audit: profile %s: %w", lp.Name, err)
	}
	c := newWireCheck(lp.Name, pol, slack, ratio, reportWire)

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
	timed := len(runs) > 0
	for i := range runs {
		if runs[i].start.kind != epochTime {
			timed = false
		}
	}

	findRPC := func(line int, rule Rule, reason string) {
		sum.RPC.Findings++
		if reportRPC != nil {
			reportRPC(Finding{Line: line, Rule: rule, Reason: reason})
		}
	}
	// closeRun ends the provider layer's call at the end of run i.
	closeRun := func(i int) {
		if i < 0 {
			return
		}
		r := &runs[i]
		ended := r.ended || i < len(runs)-1
		if prev := c.last; prev != nil && prev.mustRetry && ended && !r.aborted {
			c.findf(prev.line, WireNotRetried, func() string {
				return fmt.Sprintf("%s: provider layer %s retries it (%s); the session's run (RPC line %d) went on without it",
					prev.what(), c.name, prev.reason(&c.set), r.line)
			})
		}
		c.last = nil
		if r.replyLine != 0 && r.requests > 0 && !r.aborted && r.replyErr != r.lastFailed {
			got, want := "a success", "an error"
			if r.replyErr {
				got, want = "an error", "a success"
			}
			findRPC(r.replyLine, LayerMismatch, fmt.Sprintf("the session layer's reply is %s, but its provider layer's last answer in this run (wire line %d) was %s",
				got, r.to, want))
		}
	}
	cur := -1
	calls := 0 // the calls of run cur that have ended (by order)
	// place finds the run of a request by order: a retry stays in its
	// run; a new call goes to the next run once the current one has had
	// all its calls. False when no run is left.
	place := func(retry bool) bool {
		if retry && cur >= 0 {
			return true
		}
		if cur >= 0 && c.last != nil {
			calls++
		}
		// (a run has ended at its agent_end, or when the next one starts:
		// the agent writes no agent_end for a run its session retries)
		for cur < 0 || (runs[cur].ended || cur+1 < len(runs)) && calls >= runs[cur].replies {
			if cur+1 >= len(runs) {
				return false
			}
			closeRun(cur)
			cur, calls = cur+1, 0
		}
		return true
	}
	err = readWireLog(wireLog, &sum.Wire, func(line int, rule Rule, reason string) { c.find(line, rule, reason) }, func(n int, rec *wireRequest) {
		var retry bool
		if !timed {
			retry = c.last != nil && c.last.failed && c.last.mayRetry
			if !place(retry) {
				where := "before the first run: the RPC log has none"
				if cur >= 0 {
					where = fmt.Sprintf("after the run of RPC line %d ended with all its model calls", runs[cur].line)
				}
				c.findf(n, WireOutsideRun, func() string {
					return fmt.Sprintf("a request while no run of the RPC log was going (by order: %s)", where)
				})
				return
			}
		} else {
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
				c.findf(n, WireOutsideRun, func() string {
					return fmt.Sprintf("a request at %s ms while no run of the RPC log was going (%s)", fmtMs(t), where)
				})
				return
			}
		}
		r := &runs[cur]
		if timed {
			retry = r.requests > 0 && c.last != nil && c.last.failed
		}
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
		r.lastFailed = c.last.failed
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
