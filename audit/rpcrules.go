package audit

import (
	"fmt"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/trace"
)

func (a *Auditor) onAgentStart(at stamp) {
	st := &a.st
	a.compactionContinue(at)
	st.reply = reply{}
	retried := st.open && st.awaitingRun // this may be the retried run
	if a.runs != nil {
		attempt, delay := 0, 0.0
		if retried {
			attempt, delay = st.lastAttempt, st.lastDelay
		}
		a.runs.start(st.line, at, attempt, delay)
	}
	st.awaitingRun = false
	if st.promptLine != 0 {
		promptLine := st.promptLine
		st.promptLine = 0
		if retried {
			// A prompt accepted during the backoff: this run may be the
			// retried one, or the prompt's. The chain may still end; its
			// hint cannot be told apart.
			st.hint = hintCheck{}
			return
		}
		if st.open {
			a.find(st.chainLine, ChainNotEnded, fmt.Sprintf(
				"the chain that started here has no auto_retry_end before the run of the next prompt (accepted at line %d) started at line %d; its last attempt was %d (line %d)",
				promptLine, st.line, st.lastAttempt, st.lastStartLine))
			a.closeChain()
		}
	}
	if !st.hint.ok {
		return
	}
	h := st.hint
	st.hint = hintCheck{}
	if at.kind == noTime || at.kind != h.errAt.kind {
		return
	}
	if at.ms < h.deadline-hintToleranceMs {
		a.find(st.line, HintWindow, fmt.Sprintf(
			"the retried run started %s ms after the error (line %d), before the %s ms the provider asked for in it had passed (%s: retryAfter.use %s; retry at line %d)",
			fmtMs(at.ms-h.errAt.ms), h.errorLine, fmtMs(h.hintMs), a.policy, a.set.RetryAfter.Use, h.line))
	}
}

// compactionContinue checks the pending compaction's continue at a run's
// start: a run that is not a prompt's is the continue; a prompt's run that
// starts past the continue's time shows it missing (H19). A prompt's run
// before then leaves it unknown (the sound variant's prompt cancels the
// continue), and so does a log without times.
func (a *Auditor) compactionContinue(at stamp) {
	st := &a.st
	c := st.compaction
	if c.line == 0 {
		return
	}
	st.compaction.line = 0
	if st.promptLine == 0 || at.kind == noTime || at.kind != c.at.kind {
		return
	}
	if at.ms > c.at.ms+compactionContinueMs+continueSlackMs {
		a.find(c.line, CompactionContinueMissing, fmt.Sprintf(
			"the compaction's continue never started: the next run, prompt's at line %d, started %s ms later (the continue comes after %d ms)",
			st.promptLine, fmtMs(at.ms-c.at.ms), compactionContinueMs))
	}
}

func (a *Auditor) onMessageEnd(e *messageEndLine) {
	if e.Message == nil || e.Message.Role != "assistant" {
		return
	}
	r := reply{ok: true, line: a.st.line, errorMessage: e.Message.ErrorMessage, at: e.stamp()}
	if u := e.Message.Usage; u != nil {
		r.input, r.cacheRead = tokens(u.Input), tokens(u.CacheRead)
	}
	a.st.reply = r
	if a.runs != nil {
		a.runs.reply(a.st.line, e.Message.StopReason == "error" || e.Message.ErrorMessage != "", e.Message.StopReason == "aborted")
	}
}

func (a *Auditor) onResponse(e *responseLine) {
	st := &a.st
	if e.Command != nil && *e.Command == "abort" {
		st.compaction.line = 0 // the sound variant's abort cancels the continue
	}
	if e.Command == nil || *e.Command != "prompt" || e.Success == nil {
		return
	}
	id, hasID := "", false
	if e.ID.Kind() == '"' {
		hasID = jsonv2.Unmarshal(e.ID, &id, decodeOptions) == nil
	}
	if !*e.Success {
		st.rejected.line, st.rejected.id, st.rejected.hasID = st.line, id, hasID
		return
	}
	if st.rejected.line != 0 && st.rejected.line == st.prevLine && st.rejected.hasID == hasID && st.rejected.id == id {
		// The original answers a rejected prompt twice, false then true
		// (SPEC §9 H5): the second is no prompt.
		return
	}
	st.promptLine = st.line
}

func (a *Auditor) onEnd(e *endLine) {
	st := &a.st
	if e.Success == nil {
		a.badEvent(trace.AutoRetryEnd.String(), "success is missing (allowed: true or false)")
		return
	}
	attempt := 0
	if e.Attempt != nil {
		k, ok := a.whole(trace.AutoRetryEnd.String(), "attempt", e.Attempt)
		if !ok {
			return
		}
		attempt = k
	}
	if st.open {
		a.closeChain()
		return
	}
	st.hint = hintCheck{}
	st.fallback = false
	finalError := ""
	if e.FinalError != nil {
		finalError = *e.FinalError
	}
	switch {
	case *e.Success:
		a.find(st.line, StrayEnd, fmt.Sprintf(
			"auto_retry_end{success:true, attempt:%d} with no chain open: a success ends a chain that was never started or already ended (a stale counter)", attempt))
	case attempt > 0 && !strings.HasPrefix(finalError, failFastPrefix):
		a.find(st.line, StrayEnd, fmt.Sprintf(
			"auto_retry_end{success:false, attempt:%d} with no chain open: only maxRetries 0 (attempt 0) or a fail-fast (\"%s...\") ends a chain with no auto_retry_start (a stale counter)",
			attempt, failFastPrefix))
	}
}

func (a *Auditor) closeChain() {
	st := &a.st
	st.open, st.fallback, st.awaitingRun, st.hint = false, false, false, hintCheck{}
}

func (a *Auditor) endOfLog() {
	st := &a.st
	if c := st.compaction; c.line != 0 {
		a.find(c.line, CompactionContinueMissing, fmt.Sprintf(
			"the compaction's continue never started: no run after it by the end of the log (line %d)", st.line))
		st.compaction.line = 0
	}
	if st.open {
		a.find(st.chainLine, ChainNotEnded, fmt.Sprintf(
			"the chain that started here has no auto_retry_end by the end of the log (line %d); its last attempt was %d (line %d)",
			st.line, st.lastAttempt, st.lastStartLine))
		a.closeChain()
	}
}

func (a *Auditor) onStart(e *startLine) {
	st := &a.st
	typ := trace.AutoRetryStart.String()
	k, ok := a.whole(typ, "attempt", e.Attempt)
	if !ok {
		return
	}
	if e.DelayMs == nil {
		a.badEvent(typ, "delayMs is missing (allowed: a number of milliseconds)")
		return
	}
	a.sum.Retries++
	afterFallback := st.fallback
	if !st.open {
		a.sum.Chains++
		st.open, st.chainLine = true, st.line
		if k != 1 {
			a.find(st.line, StaleCounter, fmt.Sprintf(
				"a chain starts at attempt %d, not 1: the attempt counter of an earlier chain was not reset", k))
		}
	} else {
		want := st.lastAttempt + 1
		if afterFallback {
			want = 1
		}
		if k != want {
			why := fmt.Sprintf("attempt %d (line %d)", st.lastAttempt, st.lastStartLine)
			if afterFallback {
				why = "a retry_fallback, which restarts the count"
			}
			a.find(st.line, AttemptSequence, fmt.Sprintf("attempt %d follows %s; expected %d", k, why, want))
		}
	}
	st.lastAttempt, st.lastStartLine, st.fallback, st.awaitingRun = k, st.line, false, true

	delay := *e.DelayMs
	st.lastDelay = delay
	if ok, want := a.delayAllowed(k, delay); !ok {
		a.find(st.line, Delay, fmt.Sprintf("delayMs %s for attempt %d: %s waits %s", fmtMs(delay), k, a.policy, want))
	}

	msg := policy.AssistantMessage{StopReason: policy.StopReasonError}
	errAt := e.stamp()
	errorLine := st.line
	if st.reply.ok {
		msg.ErrorMessage = st.reply.errorMessage
		msg.InputTokens, msg.CacheReadTokens = st.reply.input, st.reply.cacheRead
		if st.reply.at.kind != noTime {
			errAt, errorLine = st.reply.at, st.reply.line
		}
	}
	if e.ErrorMessage != nil {
		msg.ErrorMessage = *e.ErrorMessage
	}
	now := time.UnixMilli(int64(errAt.ms))
	o := a.classifier.Reply(msg, a.opt.ContextWindow, now)
	if o.Class == classify.ClassOverflow {
		by := "its message"
		if !a.classifier.Reply(msg, 0, now).Overflow {
			by = fmt.Sprintf("its usage: input %d + cacheRead %d > context window %d", msg.InputTokens, msg.CacheReadTokens, a.opt.ContextWindow)
		}
		a.find(st.line, OverflowRetried, fmt.Sprintf(
			"the retried error is a context overflow by %s (%s); an overflow is never retried, it goes to compaction: %q",
			by, a.policy, msg.ErrorMessage))
	}

	st.hint = hintCheck{}
	if errAt.kind == noTime || !a.honoursHints() || !o.HasWaitHint || o.WaitHintMs <= 0 {
		return
	}
	if maxHint := msOf(a.set.RetryAfter.MaxHint); maxHint > 0 && o.WaitHintMs > maxHint {
		return // not used: the backoff stands
	}
	if delay == 0 && (o.UsageLimit || afterFallback) {
		return // a credential switch or another model: the hint was the old one's
	}
	if errAt.kind == virtualTime {
		// Virtual time has no date: a hint that depends on "now" (a date,
		// an epoch reset) cannot be placed on it.
		if later := a.classifier.Reply(msg, a.opt.ContextWindow, now.Add(time.Second)); later.WaitHintMs != o.WaitHintMs {
			return
		}
	}
	st.hint = hintCheck{ok: true, line: st.line, errAt: errAt, deadline: errAt.ms + o.WaitHintMs, hintMs: o.WaitHintMs, errorLine: errorLine}
}

// honoursHints reports whether the profile's wait reads the provider's hint.
func (a *Auditor) honoursHints() bool {
	return a.set.RetryAfter.Use == policy.HintFloor || a.set.RetryAfter.Use == policy.HintReplace
}

// delayAllowed reports whether the profile's rule can give delay (ms) for
// attempt k; want says what it gives. 0 is always allowed: a credential
// switch or a fallback leaves no other trace. The backoff's range is
// Settings.Backoff's over the draw u in [0,1); with hints (floor, replace)
// the log does not show the provider's headers, so only their bounds are
// checked.
func (a *Auditor) delayAllowed(k int, delay float64) (bool, string) {
	s := &a.set
	lo, hi := msOf(s.Backoff(k, 0)), msOf(s.Backoff(k, 1-1e-16))
	if lo > hi {
		lo, hi = hi, lo
	}
	maxWait := msOf(s.RetryAfter.MaxWait)
	maxHint := msOf(s.RetryAfter.MaxHint)
	backoff := fmtMs(lo)
	if hi-lo > delayToleranceMs {
		backoff = fmtMs(lo) + " to " + fmtMs(hi)
	}
	if s.Jittered() {
		backoff += fmt.Sprintf(" (jitter %s %s)", s.Jitter.Mode, fmtMs(s.Jitter.Ratio))
	}
	inBackoff := delay >= lo-delayToleranceMs && delay <= hi+delayToleranceMs
	underCeiling := maxWait == 0 || delay <= maxWait+delayToleranceMs
	ceiling := ""
	if maxWait > 0 {
		ceiling = ", at most " + fmtMs(maxWait) + " (maxWaitMs)"
	}
	var ok bool
	var want string
	switch s.RetryAfter.Use {
	case policy.HintFloor:
		// max(backoff, hint): at least the backoff; a hint over maxHintMs
		// is not used.
		ok = delay >= lo-delayToleranceMs && underCeiling && (maxHint == 0 || delay <= max(hi, maxHint)+delayToleranceMs)
		want = "at least " + fmtMs(lo) + " (its backoff " + backoff + ", raised by a hint"
		if maxHint > 0 {
			want += " of at most " + fmtMs(maxHint) + " (maxHintMs)"
		}
		want += ")" + ceiling
	case policy.HintReplace:
		ok = underCeiling && (inBackoff || maxHint == 0 || delay <= maxHint+delayToleranceMs)
		want = backoff + " (its backoff) or the provider's hint"
		if maxHint > 0 {
			want += " of at most " + fmtMs(maxHint) + " (maxHintMs)"
		}
		want += ceiling
	default:
		ok = inBackoff && underCeiling
		want = backoff + ceiling
	}
	if delay == 0 {
		return true, want
	}
	return ok && delay > 0, want + ", or 0 (a credential switch, a fallback)"
}
