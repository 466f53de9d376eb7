package audit

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/wire"
)

// The rules of a wire log (AuditWire, SPEC.md §16.1).
const (
	// WireNotRetried: an answer the profile retries (a retryable error
	// with attempts left and a wait within maxWaitMs) followed by a new
	// call, or by the end of the log. Reported at the answer.
	WireNotRetried Rule = "wire-not-retried"
	// WireRetried: a retry after an answer the profile does not retry: a
	// success, an error it does not retry, an exhausted count, or a wait
	// over maxWaitMs. Reported at the retry.
	WireRetried Rule = "wire-retried"
	// WireWait: a retry sent sooner or later after the previous answer's
	// end than the profile waits (backoff and jitter, hints, caps).
	WireWait Rule = "wire-wait"
	// WireRetryCount: an x-stainless-retry-count that is not the
	// previous request's + 1 within a call.
	WireRetryCount Rule = "wire-retry-count"
)

// WireRules lists the rules of a wire log, the bad-line rules included.
func WireRules() []Rule {
	return []Rule{WireNotRetried, WireRetried, WireWait, WireRetryCount, BadJSON, BadEvent, LongLine}
}

// DefaultWireSlack is the fixed part of how much later than the
// profile's longest wait a retry may arrive (WireOptions.Slack 0): the
// client's own work between reading an answer and sending the next
// request, on the real clock.
const DefaultWireSlack = 50 * time.Millisecond

// DefaultWireSlackRatio is the part of the longest wait a retry may
// arrive later by besides the fixed slack (WireOptions.SlackRatio 0): a
// timer runs late in proportion to its wait (the four real SDKs waited a
// 65 s retry-after 63-74 ms late, as time.Sleep(65s) did on that machine).
const DefaultWireSlackRatio = 0.005

// maxWireSlack bounds WireOptions.Slack: an hour.
const maxWireSlack = time.Hour

// WireOptions configure AuditWire and AuditLayers.
type WireOptions struct {
	// Slack is how much later than the profile's longest wait a retry may
	// arrive (0: DefaultWireSlack; negative: none; at most an hour), plus
	// SlackRatio of that wait. A retry may come 1 ms sooner than the
	// shortest wait (the clocks' rounding).
	Slack time.Duration
	// SlackRatio is the part of the longest wait a retry may arrive later
	// by, besides Slack (0: DefaultWireSlackRatio; negative: none; at most
	// 1).
	SlackRatio float64
}

// wireSlack is opt's slack: its fixed part in ms and its ratio, or an
// error for a value out of range.
func wireSlack(opt WireOptions) (slack, ratio float64, err error) {
	switch {
	case opt.Slack > maxWireSlack:
		return 0, 0, fmt.Errorf("audit: slack %s is over an hour (allowed: 0 for the default, a negative duration for none, or up to 1h)", opt.Slack)
	case opt.Slack == 0:
		slack = msOf(DefaultWireSlack)
	case opt.Slack > 0:
		slack = msOf(opt.Slack)
	}
	switch r := opt.SlackRatio; {
	case r != r || r > 1:
		return 0, 0, fmt.Errorf("audit: slack ratio %v is not a number from 0 to 1 (0: the default %v; negative: none)", r, DefaultWireSlackRatio)
	case r == 0:
		ratio = DefaultWireSlackRatio
	case r > 0:
		ratio = r
	}
	return slack, ratio, nil
}

// WireSummary is Summary for a wire log (Events: requests, Chains: calls,
// Retries: retries), with how every profile fits it.
type WireSummary struct {
	Summary
	// Fits are the fits of every profile (policy.Profiles order).
	Fits []Fit `json:"fits"`
	// Best names the profiles that fit best: the fewest findings, then
	// the least distance, then the least spread; more than one when the
	// log cannot tell them apart.
	Best []string `json:"best"`
	// Ambiguous counts the requests that came after an answer the profile
	// does not retry from a client that sends no retry count
	// (x-stainless-retry-count): a retry or a new call, the log cannot
	// tell; each is taken as a new call, without a finding.
	Ambiguous int `json:"ambiguous,omitempty"`
}

// Add adds o's counts and fits to s (the total of several logs).
func (s *WireSummary) Add(o WireSummary) {
	s.Summary.Add(o.Summary)
	s.Ambiguous += o.Ambiguous
	if s.Fits == nil {
		s.Fits = make([]Fit, len(o.Fits))
		copy(s.Fits, o.Fits)
	} else {
		for i := range s.Fits {
			if i < len(o.Fits) {
				s.Fits[i].Findings += o.Fits[i].Findings
				s.Fits[i].DistanceMs += o.Fits[i].DistanceMs
				s.Fits[i].SpreadMs += o.Fits[i].SpreadMs
			}
		}
	}
	s.Best = bestFits(s.Fits)
}

// wireCheck follows one profile through a wire log.
type wireCheck struct {
	name         string
	set          policy.Settings
	cls          *classify.Classifier
	edge         clientEdge
	slack, ratio float64
	findings     int
	distance     float64
	spread       float64
	report       func(Finding)
	last         *wireAnswer
	scratch      [2]wireAnswer // last points into it: no allocation per request
	// replies caches the classified replies without headers
	replies map[replyKey]cachedReply
	// counts is set once the client has sent an x-stainless-retry-count
	// above 0: from then on its 0 starts a call (before, a client that
	// sends 0 on every request, as retryfsm.Do over an SDK with its own
	// retries off, cannot be told from one that starts calls)
	counts bool
	// hold keeps the findings in held instead of reporting them, until
	// release (AuditLayers: a late wait may be excused by the log's
	// measured jitter, known only at its end)
	hold bool
	held []heldFinding
}

// heldFinding is a finding a wireCheck holds: excess is how much later
// than the slack allows its retry came (0: not a late wait).
type heldFinding struct {
	Finding
	excess float64
}

// maxHeld bounds a wireCheck's held findings: past it they are released
// with the jitter measured so far.
const maxHeld = 4096

// newWireCheck returns the check of profile p (its provider layer's, when
// it has one: the wire shows that layer) with policy pol.
func newWireCheck(name string, pol *policy.Policy, slack, ratio float64, report func(Finding)) *wireCheck {
	return &wireCheck{name: name, set: pol.Settings().Normalized(), cls: pol.Classifier(), edge: edgeOf(name), slack: slack, ratio: ratio, report: report}
}

// fitChecks are the checks of every profile for the fits, their
// classifiers compiled once.
var fitChecks = sync.OnceValues(func() ([]*wireCheck, error) {
	var checks []*wireCheck
	for _, p := range policy.Profiles() {
		lp, err := wireProfile(p)
		if err != nil {
			return nil, err
		}
		pol, err := lp.Policy()
		if err != nil {
			return nil, fmt.Errorf("audit: profile %s: %w", lp.Name, err)
		}
		c := newWireCheck(lp.Name, pol, 0, 0, nil)
		c.name = p.Name
		checks = append(checks, c)
	}
	return checks, nil
})

// wireProfile is the profile whose retries a wire log shows under p: its
// provider layer's when it has one.
func wireProfile(p policy.Profile) (policy.Profile, error) {
	if p.Layer == "" {
		return p, nil
	}
	lp, err := policy.ProfileByName(p.Layer)
	if err != nil {
		return p, fmt.Errorf("audit: profile %s: provider layer: %w", p.Name, err)
	}
	return lp, nil
}

// answerKind is what a request got, as its client reads it.
type answerKind uint8

const (
	answerSuccess     answerKind = iota // a status under 400, whole
	answerError                         // an error status
	answerNone                          // no answer: a dropped connection, the client gone
	answerCutJSON                       // a 200 whose JSON body was cut
	answerCutStream                     // a 200 stream cut before its end
	answerStreamError                   // a 200 stream that ends in an error event
)

// clientEdge is what a client does with the answers no setting describes:
// a 200 whose body does not end as it should. Each is retried as a
// connection error (true) or handed to the caller as an error, not
// retried (false).
type clientEdge struct {
	cutJSON, cutStream, streamError bool
}

// clientEdges are the clients measured (SPEC.md §16.1, docs/proxy.md's table of
// the SDKs; pi-ai-anthropic: the real agent's logs, audit/testdata/
// realagent); any other profile has defaultEdge.
var clientEdges = map[string]clientEdge{
	"anthropic-sdk":    {},                               // @anthropic-ai/sdk: a cut JSON body is returned
	"openai-sdk":       {},                               // openai (JS): the same
	"anthropic-sdk-go": {cutJSON: true},                  // retried as a connection error
	"openai-sdk-go":    {},                               // returned, not retried
	"pi-ai-anthropic":  {cutJSON: true, cutStream: true}, // a stream cut before its text is retried; an error event goes to the session layer
}

// defaultEdge: a cut JSON body is a connection error, retried; a stream's
// failure reaches the caller.
var defaultEdge = clientEdge{cutJSON: true}

func edgeOf(profile string) clientEdge {
	if e, ok := clientEdges[profile]; ok {
		return e
	}
	return defaultEdge
}

// wireAnswer is what a check keeps of the last answer: what the profile
// does after it. Its texts are made only for a finding.
type wireAnswer struct {
	line       int
	end        float64
	retries    int // retries of its call before it
	retryCount int // its x-stainless-retry-count, -1 when not sent
	kind       answerKind
	status     int
	timeout    bool    // no answer because the client went away
	failed     bool    // the call fails with it unless it is retried
	mayRetry   bool    // the profile may retry it
	mustRetry  bool    // the profile retries it whatever its draw
	lo, hi     float64 // the wait's range, ms
	k          int     // the attempt the retry would be
	why        whyKind // why it is not retried, or the wait's rule
	hint       float64 // the hint, ms (whyHintOverMax, whyFloor, whyReplace)
	maxWait    float64 // maxWaitMs
	class      classify.Class
	capped     bool // the range was cut at maxWaitMs
}

// whyKind says why an answer is not retried, or what rule its wait
// follows.
type whyKind uint8

const (
	whySuccess whyKind = iota
	whyDisabled
	whyNotRetryable
	whySpent
	whyEdge // a 200 whose body did not end, which the client returns
	whyBackoff
	whyHintOverMax
	whyFloor
	whyReplace
)

// what names the answer, e.g. "error 529 at line 3".
func (w *wireAnswer) what() string {
	switch w.kind {
	case answerSuccess:
		return fmt.Sprintf("the success at line %d", w.line)
	case answerError:
		return fmt.Sprintf("error %d at line %d", w.status, w.line)
	case answerCutJSON:
		return fmt.Sprintf("the 200 at line %d whose JSON body was cut", w.line)
	case answerCutStream:
		return fmt.Sprintf("the 200 stream at line %d that was cut", w.line)
	case answerStreamError:
		return fmt.Sprintf("the 200 stream at line %d that ended in an error event", w.line)
	}
	msg := connectionError
	if w.timeout {
		msg = timeoutError
	}
	return fmt.Sprintf("no answer at line %d (%s)", w.line, strings.TrimSuffix(msg, "."))
}

// reason says why the profile does not retry the answer, or how long it
// waits.
func (w *wireAnswer) reason(set *policy.Settings) string {
	rule := "its backoff"
	switch w.why {
	case whySuccess:
		return "a success"
	case whyDisabled:
		return "retries are disabled"
	case whyNotRetryable:
		return "not retryable (" + w.class.String() + ")"
	case whySpent:
		return fmt.Sprintf("its %d retries are spent", set.MaxRetries)
	case whyEdge:
		return "the client hands it to its caller without retrying (SPEC §16.1)"
	case whyHintOverMax:
		rule = fmt.Sprintf("its backoff (a hint of %s ms over maxHintMs)", fmtMs(w.hint))
	case whyFloor:
		rule = fmt.Sprintf("its backoff raised to the hint of %s ms", fmtMs(w.hint))
	case whyReplace:
		rule = fmt.Sprintf("the hint of %s ms", fmtMs(w.hint))
	}
	switch {
	case !w.mayRetry:
		return fmt.Sprintf("the wait (%s) is over maxWaitMs %s", rule, fmtMs(w.maxWait))
	case w.capped:
		return fmt.Sprintf("%s to %s ms (%s, at most maxWaitMs)", fmtWait(w.lo), fmtWait(w.hi), rule)
	case w.hi-w.lo > delayToleranceMs:
		return fmt.Sprintf("%s to %s ms (%s, attempt %d)", fmtWait(w.lo), fmtWait(w.hi), rule, w.k)
	}
	return fmt.Sprintf("%s ms (%s, attempt %d)", fmtWait(w.lo), rule, w.k)
}

// AuditWire reads a wire log (wire.Record lines, as "retrysim proxy"
// writes them) and checks that its client retried as the Auditor's
// profile says (its provider layer's, when it has one: the wire shows
// that layer): which answers it retried, how many times, and each wait
// (from an answer's end to the retry's arrival) within the profile's
// range, hints included. Calls are told apart by x-stainless-retry-count
// (above 0 retries; 0 starts a call once the client has shown it counts);
// without it, a request after an answer the profile may retry is taken as
// its retry, and one after an answer it does not retry as a new call
// (WireSummary.Ambiguous counts those). Every profile of policy.Profiles
// is checked too, for WireSummary.Fits; findings are reported for the
// Auditor's settings only. The error is r's, or opt's out of range.
func (a *Auditor) AuditWire(r io.Reader, opt WireOptions, report func(Finding)) (WireSummary, error) {
	slack, ratio, err := wireSlack(opt)
	if err != nil {
		return WireSummary{}, err
	}
	wp, err := wireProfile(a.profile)
	if err != nil {
		return WireSummary{}, err
	}
	pol := a.opt.Policy
	if pol == nil {
		if pol, err = wp.Policy(); err != nil {
			return WireSummary{}, fmt.Errorf("audit: profile %s: %w", wp.Name, err)
		}
	}
	main := newWireCheck(wp.Name, pol, slack, ratio, report)
	fits, err := fitChecks()
	if err != nil {
		return WireSummary{}, err
	}
	checks := []*wireCheck{main}
	for _, f := range fits {
		c := *f
		c.slack, c.ratio = slack, ratio
		checks = append(checks, &c)
	}
	var sum WireSummary
	badLine := func(line int, rule Rule, reason string) {
		for _, c := range checks {
			c.find(line, rule, reason)
		}
	}
	err = readWireLog(r, &sum.Summary, badLine, func(n int, rec *wireRequest) {
		for i, c := range checks {
			retry, rc, ambiguous := c.isRetry(rec)
			if i == 0 {
				switch {
				case retry:
					sum.Retries++
				default:
					sum.Chains++
				}
				if ambiguous {
					sum.Ambiguous++
				}
			}
			c.onRequest(n, rec, retry, rc)
		}
	})
	if err != nil {
		return sum, err
	}
	for _, c := range checks {
		c.endOfLog()
	}
	sum.Findings = main.findings
	for _, c := range checks[1:] {
		sum.Fits = append(sum.Fits, Fit{Profile: c.name, Findings: c.findings, DistanceMs: c.distance, SpreadMs: c.spread})
	}
	sum.Best = bestFits(sum.Fits)
	return sum, nil
}

// retryCountHeader is the Stainless SDKs' count of the retries made.
const retryCountHeader = "x-stainless-retry-count"

// isRetry tells whether rec retries the last answer (rc: its retry count,
// -1 when not sent or not counted). With a count above 0 it does; with 0
// from a client that has shown it counts it does not; otherwise it does
// when the last answer failed and the profile may retry it, and when the
// profile would not, the request is taken as a new call (ambiguous: the
// log cannot tell).
func (c *wireCheck) isRetry(rec *wireRequest) (retry bool, rc int, ambiguous bool) {
	rc = -1
	if v, ok := rec.Client[retryCountHeader]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			rc = n
			if n > 0 {
				c.counts = true
				return true, n, false
			}
			if c.counts {
				return false, 0, false
			}
		}
	}
	last := c.last
	if last == nil || !last.failed {
		return false, rc, false
	}
	if last.mayRetry {
		return true, rc, false
	}
	return false, rc, true
}

func (c *wireCheck) find(line int, rule Rule, reason string) {
	c.findings++
	if c.hold {
		c.held = append(c.held, heldFinding{Finding: Finding{Line: line, Rule: rule, Reason: reason}})
		return
	}
	if c.report != nil {
		c.report(Finding{Line: line, Rule: rule, Reason: reason})
	}
}

// findf is find with the reason made only when it is reported (the
// profiles checked for the fits report none).
func (c *wireCheck) findf(line int, rule Rule, reason func() string) {
	c.findLate(line, rule, 0, reason)
}

// findLate is findf for a retry excess ms later than the slack allows (0:
// any other finding).
func (c *wireCheck) findLate(line int, rule Rule, excess float64, reason func() string) {
	c.findings++
	if c.hold {
		c.held = append(c.held, heldFinding{Finding{Line: line, Rule: rule, Reason: reason()}, excess})
		return
	}
	if c.report != nil {
		c.report(Finding{Line: line, Rule: rule, Reason: reason()})
	}
}

// release reports the held findings, in order, but for the late waits
// jitter ms (the log's measured lateness) excuses: those are no findings.
func (c *wireCheck) release(jitter float64) {
	for _, h := range c.held {
		if h.excess > 0 && h.excess <= jitter {
			c.findings--
			continue
		}
		if c.report != nil {
			c.report(h.Finding)
		}
	}
	c.held = c.held[:0]
}

func (c *wireCheck) onRequest(line int, rec *wireRequest, retry bool, rc int) {
	prev := c.last
	retries := 0
	if prev != nil && prev.mustRetry && !retry {
		c.findf(prev.line, WireNotRetried, func() string {
			return fmt.Sprintf("%s: profile %s retries it (%s); the client's next request (line %d) starts a new call",
				prev.what(), c.name, prev.reason(&c.set), line)
		})
	}
	if retry && prev != nil {
		retries = prev.retries + 1
		wait := rec.Timestamp - prev.end
		switch {
		case !prev.mayRetry:
			c.findf(line, WireRetried, func() string {
				return fmt.Sprintf("a retry of %s, which profile %s does not retry: %s", prev.what(), c.name, prev.reason(&c.set))
			})
		default:
			late := prev.hi + c.slack + c.ratio*prev.hi
			c.spread += prev.hi - prev.lo
			c.distance += max(0, prev.lo-wait, wait-prev.hi)
			if wait < prev.lo-hintToleranceMs || wait > late {
				c.findLate(line, WireWait, max(0, wait-late), func() string {
					return fmt.Sprintf("retry %d waited %s ms after %s; profile %s waits %s", retries, fmtWait(wait), prev.what(), c.name, prev.reason(&c.set))
				})
			}
		}
		if rc > 0 && prev.retryCount >= 0 && rc != prev.retryCount+1 {
			c.findf(line, WireRetryCount, func() string {
				return fmt.Sprintf("%s %d after %d", retryCountHeader, rc, prev.retryCount)
			})
		}
	}
	// the answer goes in the scratch slot prev does not use
	next := &c.scratch[0]
	if prev == next {
		next = &c.scratch[1]
	}
	c.answer(next, line, rec, retries, rc)
	c.last = next
}

func (c *wireCheck) endOfLog() {
	if prev := c.last; prev != nil && prev.mustRetry {
		c.findf(prev.line, WireNotRetried, func() string {
			return fmt.Sprintf("%s: profile %s retries it (%s); the log ends", prev.what(), c.name, prev.reason(&c.set))
		})
	}
	c.last = nil
}

func fmtWait(ms float64) string { return strconv.FormatFloat(ms, 'f', 1, 64) }

// connectionError and timeoutError are the SDKs' messages for a request
// with no answer (Stainless: "Connection error.", "Request timed out.").
const (
	connectionError = "Connection error."
	timeoutError    = "Request timed out."
)

// kindOf is what rec's client got.
func kindOf(rec *wire.Record) answerKind {
	if rec.Status == 0 {
		return answerNone
	}
	for _, f := range rec.Faults {
		switch {
		case strings.HasPrefix(f, string(wire.FaultStreamCut)):
			if rec.Stream {
				return answerCutStream
			}
			return answerCutJSON
		case strings.HasPrefix(f, string(wire.FaultSSEError)) && rec.Stream:
			return answerStreamError
		}
	}
	if rec.Status < 400 {
		return answerSuccess
	}
	return answerError
}

// answer works out into w what the profile does after rec's answer, the
// call having made retries retries before it.
func (c *wireCheck) answer(w *wireAnswer, line int, rec *wireRequest, retries, rc int) {
	*w = wireAnswer{line: line, end: rec.End(), retries: retries, retryCount: rc, kind: rec.kind, status: rec.Status}
	m := policy.AssistantMessage{StopReason: policy.StopReasonError, Status: rec.Status, Headers: rec.Headers}
	asConnectionError := false
	switch w.kind {
	case answerSuccess:
		w.why = whySuccess
		return
	case answerNone:
		asConnectionError = true
		w.timeout = strings.Contains(rec.Error, "client gone")
	case answerCutJSON:
		asConnectionError = c.edge.cutJSON
	case answerCutStream:
		asConnectionError = c.edge.cutStream
	case answerStreamError:
		asConnectionError = c.edge.streamError
	default:
		m.ErrorMessage = rec.message
	}
	w.failed = true
	if w.kind != answerError && !asConnectionError {
		w.why = whyEdge
		return
	}
	if asConnectionError {
		m.Status, m.ErrorMessage = 0, connectionError
		if w.timeout {
			m.ErrorMessage = timeoutError
		}
	}
	now := time.UnixMicro(int64(w.end * 1000))
	o := c.reply(m, now)
	s := &c.set
	k := retries + 1
	w.k, w.class = k, o.Class
	switch {
	case !s.Enabled:
		w.why = whyDisabled
		return
	case o.Class != classify.ClassRetryable:
		w.why = whyNotRetryable
		return
	case !s.Persistent && k > s.MaxRetries:
		w.why = whySpent
		return
	}
	lo, hi := msOf(s.Backoff(k, 0)), msOf(s.Backoff(k, 1-1e-16))
	if lo > hi {
		lo, hi = hi, lo
	}
	w.why = whyBackoff
	hint, hasHint := o.WaitHintMs, o.HasWaitHint
	if hasHint && s.RetryAfter.MaxHint > 0 && hint > msOf(s.RetryAfter.MaxHint) {
		hasHint = false
		w.why, w.hint = whyHintOverMax, hint
	}
	if hasHint {
		switch s.RetryAfter.Use {
		case policy.HintFloor:
			lo, hi, w.why, w.hint = max(lo, hint), max(hi, hint), whyFloor, hint
		case policy.HintReplace:
			lo, hi, w.why, w.hint = hint, hint, whyReplace, hint
		}
	}
	w.lo, w.hi = lo, hi
	if maxWait := msOf(s.RetryAfter.MaxWait); maxWait > 0 && hi > maxWait {
		w.maxWait = maxWait
		if lo > maxWait {
			return // not retried: over maxWaitMs
		}
		w.hi, w.capped, w.mayRetry = maxWait, true, true
		return
	}
	w.mayRetry, w.mustRetry = true, true
}

// replyKey is a reply without headers: its classification and hint are
// the same at any time when its message names none that depends on it.
type replyKey struct {
	status  int
	message string
}

type cachedReply struct {
	o     classify.Outcome
	fixed bool // the same an hour later: reusable
}

// Bounds of a check's cache of classified replies: a log repeats a few
// answers many times.
const (
	maxCachedReplies    = 256
	maxCachedMessageLen = 4 << 10
)

// reply classifies m at now as the check's classifier does, reusing the
// outcome of the same reply without headers seen before.
func (c *wireCheck) reply(m policy.AssistantMessage, now time.Time) classify.Outcome {
	if len(m.Headers) != 0 || len(m.ErrorMessage) > maxCachedMessageLen {
		return c.cls.Reply(m, 0, now)
	}
	k := replyKey{m.Status, m.ErrorMessage}
	if e, ok := c.replies[k]; ok && e.fixed {
		return e.o
	} else if ok {
		return c.cls.Reply(m, 0, now)
	}
	o := c.cls.Reply(m, 0, now)
	later := c.cls.Reply(m, 0, now.Add(time.Hour))
	if c.replies == nil || len(c.replies) >= maxCachedReplies {
		c.replies = make(map[replyKey]cachedReply)
	}
	c.replies[k] = cachedReply{o: o, fixed: later.HasWaitHint == o.HasWaitHint && later.WaitHintMs == o.WaitHintMs}
	return o
}

// sdkErrorMessage is an error answer's message as the Stainless SDKs show
// it to the agent ("529 {...}": the status, then the body), which a
// profile classifying messages reads.
func sdkErrorMessage(rec *wire.Record) string {
	if rec.ErrorType == "" {
		return strings.TrimSpace(strconv.Itoa(rec.Status) + " " + rec.ErrorMessage)
	}
	// as encoding/json writes the map: names sorted
	b := strconv.AppendInt(make([]byte, 0, 64+len(rec.ErrorMessage)), int64(rec.Status), 10)
	b = append(b, ` {"error":{"message":`...)
	b = jsonw.AppendString(b, rec.ErrorMessage)
	b = append(b, `,"type":`...)
	b = jsonw.AppendString(b, rec.ErrorType)
	b = append(b, `},"type":"error"}`...)
	return string(b)
}
