package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/lines"
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

// DefaultWireSlack is how much later than the profile's longest wait a
// retry may arrive (WireOptions.Slack 0): the client's own work between
// reading an answer and sending the next request, on the real clock.
const DefaultWireSlack = 50 * time.Millisecond

// WireOptions configure AuditWire.
type WireOptions struct {
	// Slack is how much later than the profile's longest wait a retry may
	// arrive (0: DefaultWireSlack; negative: none). A retry may come 1 ms
	// sooner than the shortest wait (the clocks' rounding).
	Slack time.Duration
}

// wireSlack is opt's slack in ms.
func wireSlack(opt WireOptions) float64 {
	switch {
	case opt.Slack == 0:
		return msOf(DefaultWireSlack)
	case opt.Slack < 0:
		return 0
	}
	return msOf(opt.Slack)
}

// Fit is how well a profile fits a wire log: its findings there.
type Fit struct {
	Profile  string `json:"profile"`
	Findings int    `json:"findings"`
}

// WireSummary is Summary for a wire log (Events: requests, Chains: calls,
// Retries: retries), with how every profile fits it.
type WireSummary struct {
	Summary
	// Fits are the findings of every profile (policy.Profiles order).
	Fits []Fit `json:"fits"`
	// Best names the profiles with the fewest findings.
	Best []string `json:"best"`
}

// Add adds o's counts and fits to s (the total of several logs).
func (s *WireSummary) Add(o WireSummary) {
	s.Summary.Add(o.Summary)
	if s.Fits == nil {
		s.Fits = make([]Fit, len(o.Fits))
		copy(s.Fits, o.Fits)
	} else {
		for i := range s.Fits {
			if i < len(o.Fits) {
				s.Fits[i].Findings += o.Fits[i].Findings
			}
		}
	}
	s.Best = bestFits(s.Fits)
}

func bestFits(fits []Fit) []string {
	var best []string
	least := math.MaxInt
	for _, f := range fits {
		switch {
		case f.Findings < least:
			best, least = []string{f.Profile}, f.Findings
		case f.Findings == least:
			best = append(best, f.Profile)
		}
	}
	return best
}

// wireCheck follows one profile through a wire log.
type wireCheck struct {
	name     string
	set      policy.Settings
	cls      *classify.Classifier
	slack    float64
	findings int
	report   func(Finding)
	last     *wireAnswer
}

// wireAnswer is what a check keeps of the last answer: what the profile
// does after it.
type wireAnswer struct {
	line       int
	end        float64
	retries    int // retries of its call before it
	retryCount int // its x-stainless-retry-count, -1 when not sent
	what       string
	mayRetry   bool    // the profile may retry it
	mustRetry  bool    // the profile retries it whatever its draw
	lo, hi     float64 // the wait's range, ms
	why        string  // why it is not retried, or the wait's rule
}

// AuditWire reads a wire log (wire.Record lines, as "retrysim proxy"
// writes them) and checks that its client retried as the Auditor's
// profile says: which answers it retried, how many times, and each wait
// (from an answer's end to the retry's arrival) within the profile's
// range, hints included. Calls are told apart by x-stainless-retry-count
// (0 starts a call); without it, a request after an error answer or a
// dropped connection is taken as its retry. Every profile of
// policy.Profiles is checked too, for WireSummary.Fits; findings are
// reported for the Auditor's settings only.
func (a *Auditor) AuditWire(r io.Reader, opt WireOptions, report func(Finding)) (WireSummary, error) {
	slack := wireSlack(opt)
	main := &wireCheck{name: a.profile.Name, set: a.set, cls: a.classifier, slack: slack, report: report}
	checks := []*wireCheck{main}
	for _, p := range policy.Profiles() {
		pol, err := p.Policy()
		if err != nil {
			return WireSummary{}, fmt.Errorf("audit: profile %s: %w", p.Name, err)
		}
		checks = append(checks, &wireCheck{name: p.Name, set: pol.Settings().Normalized(), cls: pol.Classifier(), slack: slack})
	}
	var sum WireSummary
	badLine := func(line int, rule Rule, reason string) {
		for _, c := range checks {
			c.find(line, rule, reason)
		}
	}
	err := readWireLog(r, &sum.Summary, badLine, func(n int, rec *wire.Record) {
		retry, rc := isRetry(rec, main.last)
		if retry && main.last != nil {
			sum.Retries++
		} else {
			sum.Chains++
		}
		for _, c := range checks {
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
		sum.Fits = append(sum.Fits, Fit{Profile: c.name, Findings: c.findings})
	}
	sum.Best = bestFits(sum.Fits)
	return sum, nil
}

// readWireLog reads a wire log's lines, counting them in sum (Lines,
// Skipped, Bad, Events: the requests), and calls onRequest with each
// request; a line that cannot be read is counted bad and given to
// badLine, and the reading goes on. The error is r's.
func readWireLog(r io.Reader, sum *Summary, badLine func(line int, rule Rule, reason string), onRequest func(line int, rec *wire.Record)) error {
	lr := lines.NewReader(r, MaxLineSize)
	bad := func(line int, rule Rule, reason string) {
		sum.Bad++
		badLine(line, rule, reason)
	}
	for {
		line, tooLong, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("audit: reading line %d: %w", sum.Lines+1, err)
		}
		sum.Lines++
		n := sum.Lines
		if tooLong {
			bad(n, LongLine, fmt.Sprintf("line longer than %d bytes, skipped unread", MaxLineSize))
			continue
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			sum.Skipped++
			continue
		}
		var rec wire.Record
		if err := json.Unmarshal(line, &rec); err != nil {
			var typeErr *json.UnmarshalTypeError
			if errors.As(err, &typeErr) {
				bad(n, BadEvent, fmt.Sprintf("field %s: %s is not a %s", typeErr.Field, typeErr.Value, typeErr.Type))
			} else {
				bad(n, BadJSON, "not JSON: "+err.Error())
			}
			continue
		}
		if rec.Type != "request" {
			sum.Skipped++
			continue
		}
		sum.Events++
		onRequest(n, &rec)
	}
}

// retryCountHeader is the Stainless SDKs' count of the retries made.
const retryCountHeader = "x-stainless-retry-count"

// isRetry tells whether rec retries the last answer: its retry count is
// over 0, or, without one, the last answer was an error or no answer.
func isRetry(rec *wire.Record, last *wireAnswer) (bool, int) {
	if v, ok := rec.Client[retryCountHeader]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			return n > 0, n
		}
	}
	return last != nil && last.failed(), -1
}

func (w *wireAnswer) failed() bool {
	return strings.HasPrefix(w.what, "error") || strings.HasPrefix(w.what, "no answer")
}

func (c *wireCheck) find(line int, rule Rule, reason string) {
	c.findings++
	if c.report != nil {
		c.report(Finding{Line: line, Rule: rule, Reason: reason})
	}
}

func (c *wireCheck) onRequest(line int, rec *wire.Record, retry bool, rc int) {
	prev := c.last
	retries := 0
	if prev != nil && prev.mustRetry && !retry {
		c.find(prev.line, WireNotRetried, fmt.Sprintf("%s: profile %s retries it (%s); the client's next request (line %d) starts a new call",
			prev.what, c.name, prev.why, line))
	}
	if retry && prev != nil {
		retries = prev.retries + 1
		wait := rec.Timestamp - prev.end
		switch {
		case !prev.mayRetry:
			c.find(line, WireRetried, fmt.Sprintf("a retry of %s, which profile %s does not retry: %s", prev.what, c.name, prev.why))
		case wait < prev.lo-hintToleranceMs || wait > prev.hi+c.slack:
			c.find(line, WireWait, fmt.Sprintf("retry %d waited %s ms after %s; profile %s waits %s", retries, fmtWait(wait), prev.what, c.name, prev.why))
		}
		if rc >= 0 && prev.retryCount >= 0 && rc != prev.retryCount+1 {
			c.find(line, WireRetryCount, fmt.Sprintf("%s %d after %d", retryCountHeader, rc, prev.retryCount))
		}
	}
	c.last = c.answer(line, rec, retries, rc)
}

func (c *wireCheck) endOfLog() {
	if prev := c.last; prev != nil && prev.mustRetry {
		c.find(prev.line, WireNotRetried, fmt.Sprintf("%s: profile %s retries it (%s); the log ends", prev.what, c.name, prev.why))
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

// answer works out what the profile does after rec's answer, the call
// having made retries retries before it.
func (c *wireCheck) answer(line int, rec *wire.Record, retries, rc int) *wireAnswer {
	w := &wireAnswer{line: line, end: rec.End(), retries: retries, retryCount: rc}
	m := policy.AssistantMessage{StopReason: policy.StopReasonError, Status: rec.Status, Headers: rec.Headers, ErrorMessage: rec.ErrorMessage}
	cutBody := false
	for _, f := range rec.Faults {
		if strings.HasPrefix(f, string(wire.FaultStreamCut)) && !rec.Stream {
			cutBody = true // a JSON body cut short: a connection error
		}
	}
	switch {
	case rec.Status == 0 || cutBody:
		m.Status, m.ErrorMessage = 0, connectionError
		if strings.Contains(rec.Error, "client gone") {
			m.ErrorMessage = timeoutError
		}
		w.what = fmt.Sprintf("no answer at line %d (%s)", line, strings.TrimSuffix(m.ErrorMessage, "."))
	case rec.Status < 400:
		w.what = fmt.Sprintf("the success at line %d", line)
		w.why = "a success"
		return w
	default:
		w.what = fmt.Sprintf("error %d at line %d", rec.Status, line)
		m.ErrorMessage = sdkErrorMessage(rec)
	}
	now := time.UnixMicro(int64(w.end * 1000))
	o := c.cls.Reply(m, 0, now)
	s := &c.set
	k := retries + 1
	switch {
	case !s.Enabled:
		w.why = "retries are disabled"
		return w
	case o.Class != classify.ClassRetryable:
		w.why = "not retryable (" + o.Class.String() + ")"
		return w
	case !s.Persistent && k > s.MaxRetries:
		w.why = fmt.Sprintf("its %d retries are spent", s.MaxRetries)
		return w
	}
	lo, hi := msOf(s.Backoff(k, 0)), msOf(s.Backoff(k, 1-1e-16))
	if lo > hi {
		lo, hi = hi, lo
	}
	rule := "its backoff"
	hint, hasHint := o.WaitHintMs, o.HasWaitHint
	if hasHint && s.RetryAfter.MaxHint > 0 && hint > msOf(s.RetryAfter.MaxHint) {
		hasHint = false
		rule = fmt.Sprintf("its backoff (a hint of %s ms over maxHintMs)", fmtMs(hint))
	}
	if hasHint {
		switch s.RetryAfter.Use {
		case policy.HintFloor:
			lo, hi, rule = max(lo, hint), max(hi, hint), fmt.Sprintf("its backoff raised to the hint of %s ms", fmtMs(hint))
		case policy.HintReplace:
			lo, hi, rule = hint, hint, fmt.Sprintf("the hint of %s ms", fmtMs(hint))
		}
	}
	if maxWait := msOf(s.RetryAfter.MaxWait); maxWait > 0 && hi > maxWait {
		if lo > maxWait {
			w.why = fmt.Sprintf("the wait (%s) is over maxWaitMs %s", rule, fmtMs(maxWait))
			return w
		}
		hi = maxWait
		w.mayRetry = true
		w.lo, w.hi = lo, hi
		w.why = fmt.Sprintf("%s to %s ms (%s, at most maxWaitMs)", fmtWait(lo), fmtWait(hi), rule)
		return w
	}
	w.mayRetry, w.mustRetry = true, true
	w.lo, w.hi = lo, hi
	if hi-lo > delayToleranceMs {
		w.why = fmt.Sprintf("%s to %s ms (%s, attempt %d)", fmtWait(lo), fmtWait(hi), rule, k)
	} else {
		w.why = fmt.Sprintf("%s ms (%s, attempt %d)", fmtWait(lo), rule, k)
	}
	return w
}

// sdkErrorMessage is an error answer's message as the Stainless SDKs show
// it to the agent ("529 {...}": the status, then the body), which a
// profile classifying messages reads.
func sdkErrorMessage(rec *wire.Record) string {
	if rec.ErrorType == "" {
		return strings.TrimSpace(strconv.Itoa(rec.Status) + " " + rec.ErrorMessage)
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": rec.ErrorType, "message": rec.ErrorMessage}})
	return strconv.Itoa(rec.Status) + " " + string(b)
}
