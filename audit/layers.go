package audit

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
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
	// JitterMs is how much the wire waits' slack was widened by: the log's
	// own jitter, measured on the session layer's retries (their lateness
	// past the delayMs of their auto_retry_start, the 95th percentile, at
	// most MaxJitter; 0: none measured, or no slack asked for).
	JitterMs float64 `json:"jitterMs,omitempty"`
	// JitterRetries counts the session layer's retries it was measured on.
	JitterRetries int `json:"jitterRetries,omitempty"`
}

// MaxJitter bounds the log's measured jitter (LayersSummary.JitterMs): a
// session retry later than this is not a timer running late.
const MaxJitter = time.Second

// jitterQuantile is the quantile of the session retries' lateness taken
// as the log's jitter (nearest rank: the largest of fewer than 20).
const jitterQuantile = 0.95

// run is one run of the RPC log as AuditLayers keeps it.
type run struct {
	line, attempt int
	delay         float64 // the delayMs of its auto_retry_start (attempt above 0)
	start, end    stamp   // end: its agent_end's (noTime: none, or none given)
	ended         bool    // its agent_end was read
	replyLine     int     // its last assistant message_end (0: none)
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

func (l *runLog) start(line int, at stamp, attempt int, delay float64) {
	l.runs = append(l.runs, run{line: line, attempt: attempt, delay: delay, start: at})
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
// The wire waits' slack (opt) is widened by the log's own jitter, the
// session layer's retries' lateness past their delayMs
// (LayersSummary.JitterMs); the wire log's findings are held until it is
// known, at the end of the log. reportRPC and reportWire get the findings
// of each log (either may be nil); onAttempt (if not nil) gets every run with the requests it made,
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

	l := &layerCheck{c: c, runs: runs, timed: timed, sum: &sum, reportRPC: reportRPC, cur: -1, prevRun: -1, widen: opt.Slack >= 0}
	c.hold = true
	err = readWireLog(wireLog, &sum.Wire, func(line int, rule Rule, reason string) { c.find(line, rule, reason) }, l.onRequest)
	if err != nil {
		return sum, err
	}
	l.closeRun(l.cur)
	sum.JitterMs, sum.JitterRetries = l.jitter(), len(l.late)
	c.release(sum.JitterMs)
	sum.Wire.Findings = c.findings
	if onAttempt != nil {
		for _, r := range runs {
			onAttempt(Attempt{Line: r.line, Attempt: r.attempt, Requests: r.requests, WireFrom: r.from, WireTo: r.to})
		}
	}
	return sum, nil
}

// layerCheck places the requests of a wire log in the runs of an RPC log
// (AuditLayers) and checks the two layers against each other.
type layerCheck struct {
	c         *wireCheck
	runs      []run
	timed     bool // every run has an epoch-ms timestamp: place by time
	sum       *LayersSummary
	reportRPC func(Finding)
	cur       int // the run of the last request (-1: none yet)
	calls     int // the calls of run cur that have ended (by order)
	// the log's jitter: the lateness of each session retry (ms, from 0 to
	// MaxJitter), measured from the end of the previous run's last answer
	// (prevEnd, of run prevRun)
	widen   bool // the slack may be widened by it (WireOptions.Slack not negative)
	late    []float64
	prevEnd float64
	prevRun int
}

// jitter is the log's measured jitter in ms (0: none, or !widen).
func (l *layerCheck) jitter() float64 {
	if !l.widen || len(l.late) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(l.late))
	return s[int(math.Ceil(jitterQuantile*float64(len(s))))-1]
}

// findRPC reports a finding of the RPC log.
func (l *layerCheck) findRPC(line int, rule Rule, reason string) {
	l.sum.RPC.Findings++
	if l.reportRPC != nil {
		l.reportRPC(Finding{Line: line, Rule: rule, Reason: reason})
	}
}

// closeRun ends the provider layer's call at the end of run i.
func (l *layerCheck) closeRun(i int) {
	if i < 0 {
		return
	}
	c, r := l.c, &l.runs[i]
	ended := r.ended || i < len(l.runs)-1
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
		l.findRPC(r.replyLine, LayerMismatch, fmt.Sprintf("the session layer's reply is %s, but its provider layer's last answer in this run (wire line %d) was %s",
			got, r.to, want))
	}
}

// place finds the run of a request by order: a retry stays in its run; a
// new call goes to the next run once the current one has had all its
// calls. False when no run is left.
func (l *layerCheck) place(retry bool) bool {
	if retry && l.cur >= 0 {
		return true
	}
	if l.cur >= 0 && l.c.last != nil {
		l.calls++
	}
	// (a run has ended at its agent_end, or when the next one starts:
	// the agent writes no agent_end for a run its session retries)
	for l.cur < 0 || (l.runs[l.cur].ended || l.cur+1 < len(l.runs)) && l.calls >= l.runs[l.cur].replies {
		if l.cur+1 >= len(l.runs) {
			return false
		}
		l.closeRun(l.cur)
		l.cur, l.calls = l.cur+1, 0
	}
	return true
}

// placeByTime moves to the run during which a request at t was sent.
// False (with a wire-outside-run finding at line n) when none was going.
func (l *layerCheck) placeByTime(n int, t float64) bool {
	next := l.cur
	for next+1 < len(l.runs) && l.runs[next+1].start.ms <= t+hintToleranceMs {
		next++
	}
	if next != l.cur {
		l.closeRun(l.cur)
		l.cur = next
	}
	if l.cur < 0 || l.runs[l.cur].end.kind == epochTime && t > l.runs[l.cur].end.ms+hintToleranceMs {
		where := "before the first run"
		if l.cur >= 0 {
			where = fmt.Sprintf("after the run of RPC line %d ended (agent_end at %s)", l.runs[l.cur].line, fmtMs(l.runs[l.cur].end.ms))
		}
		l.c.findf(n, WireOutsideRun, func() string {
			return fmt.Sprintf("a request at %s ms while no run of the RPC log was going (%s)", fmtMs(t), where)
		})
		return false
	}
	return true
}

// onRequest places the wire log's request rec (line n) in a run and
// checks it against the provider layer's profile.
func (l *layerCheck) onRequest(n int, rec *wireRequest) {
	c := l.c
	var retry bool
	if !l.timed {
		retry = c.last != nil && c.last.failed && c.last.mayRetry
		if !l.place(retry) {
			where := "before the first run: the RPC log has none"
			if l.cur >= 0 {
				where = fmt.Sprintf("after the run of RPC line %d ended with all its model calls", l.runs[l.cur].line)
			}
			c.findf(n, WireOutsideRun, func() string {
				return fmt.Sprintf("a request while no run of the RPC log was going (by order: %s)", where)
			})
			return
		}
	} else if !l.placeByTime(n, rec.Timestamp) {
		return
	}
	r := &l.runs[l.cur]
	if l.timed {
		retry = r.requests > 0 && c.last != nil && c.last.failed
	}
	if r.requests == 0 && r.attempt > 0 && l.prevRun >= 0 && l.prevRun == l.cur-1 {
		// the session layer's retry: late by what its wait took past delayMs
		late := rec.Timestamp - l.prevEnd - r.delay
		l.late = append(l.late, min(max(0, late), msOf(MaxJitter)))
	}
	if retry {
		l.sum.Wire.Retries++
	} else {
		l.sum.Wire.Chains++
	}
	c.onRequest(n, rec, retry, -1)
	r.requests++
	if r.from == 0 {
		r.from = n
	}
	r.to = n
	r.lastFailed = c.last.failed
	l.prevEnd, l.prevRun = c.last.end, l.cur
	if len(c.held) >= maxHeld {
		c.release(l.jitter())
	}
}
