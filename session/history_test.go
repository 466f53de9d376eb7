package session_test

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// Replies of the compaction triggers (reference §1.6): a retryable error,
// a successful reply and an aborted reply whose usage (1100 tokens)
// exceeds a 1000-token window.
var (
	unavailable = classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonError,
		ErrorMessage: "503 service unavailable"}, 200000, time.Unix(0, 0))
	stopOverWindow = classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonStop,
		InputTokens: 800, CacheReadTokens: 300}, 1000, time.Unix(0, 0))
	abortedOverWindow = classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonAborted,
		ErrorMessage: session.AbortedMessage, InputTokens: 1200}, 1000, time.Unix(0, 0))
	stop = classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonStop}, 200000, time.Unix(0, 0))
)

// fire fires the timer of kind k armed last.
func (c *coreRun) fire(ms int, k session.TimerKind) {
	c.t.Helper()
	tm := c.armed[k]
	if tm.ID == 0 {
		c.t.Fatalf("at %d ms: no %v timer armed", ms, k)
	}
	c.armed[k] = session.Timer{}
	c.step(ms, session.Event{Kind: session.TimerFired, Timer: tm})
}

// continueOutcome fires the compaction continue and says what became of
// it: "run" (a continue run started) or the continue_rejected error.
func (c *coreRun) continueOutcome(ms int) string {
	c.t.Helper()
	c.fire(ms, session.CompactionTimer)
	for _, e := range c.fx {
		switch {
		case e.Kind == session.Emit && e.Record.Type == trace.ContinueRejected:
			return e.Record.Error
		case e.Kind == session.Emit && e.Record.Type == trace.AgentRun:
			return "run"
		}
	}
	c.t.Fatalf("at %d ms the compaction continue did nothing: %+v", ms, c.fx)
	return ""
}

// TestCompactionRebuildsContext: one test per trigger of reference §1.6
// (public scenarios 21-23) and the case that still continues (24). In the
// original variant a successful overflow compaction rebuilds the context
// from the session history and its continue is rejected when that context
// ends with an assistant message; the sound variant keeps its context and
// continues in every case.
func TestCompactionRebuildsContext(t *testing.T) {
	cases := []struct {
		name string
		// run drives the session up to the compaction continue, which
		// fires at ms; window is the context window of the replies.
		run func(c *coreRun) (ms int)
		// original is the continue's outcome in the original variant;
		// messages its context's size after the compaction (summary
		// first).
		original string
		messages int
		// sound is the sound variant's outcome, "" when it does not
		// compact at all.
		sound string
	}{{
		// 1: a 503 retried once, then an overflow on the continue: the
		// retried 503 (kept in the history) is the tail after the
		// overflow error is dropped.
		name: "retried-error-then-overflow",
		run: func(c *coreRun) int {
			c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
			c.step(0, session.Event{Kind: session.Reply, Call: c.call, Reply: unavailable})
			c.fire(2000, session.BackoffTimer)
			if c.armed[session.ContinueTimer].ID != 0 {
				c.fire(2000, session.ContinueTimer)
			}
			c.step(2000, session.Event{Kind: session.Reply, Call: c.call, Reply: overflow})
			return 2100
		},
		original: session.ErrContinueFromAssistant, messages: 3, sound: "run",
	}, {
		// 2: a successful reply over the window is compacted; it is no
		// error, so it stays the tail.
		name: "success-over-window",
		run: func(c *coreRun) int {
			c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
			c.step(0, session.Event{Kind: session.Reply, Call: c.call, Reply: stopOverWindow})
			return 100
		},
		original: session.ErrContinueFromAssistant, messages: 3, sound: "run",
	}, {
		// 3: the pre-prompt check of prompt 2 compacts an aborted reply
		// over the window; prompt 2's run ends before the continue.
		name: "aborted-over-window-before-prompt",
		run: func(c *coreRun) int {
			c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
			c.step(0, session.Event{Kind: session.Reply, Call: c.call, Reply: abortedOverWindow})
			c.step(2000, session.Event{Kind: session.Prompt, ID: "p2", Respond: true})
			c.step(2000, session.Event{Kind: session.Reply, Call: c.call, Reply: stop})
			return 2100
		},
		original: session.ErrContinueFromAssistant, messages: 5,
	}, {
		// An overflow on the prompt's own reply: the rebuilt context is
		// the summary and the prompt (the overflow error dropped).
		name: "overflow-on-first-reply",
		run: func(c *coreRun) int {
			c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
			c.step(0, session.Event{Kind: session.Reply, Call: c.call, Reply: overflow})
			return 100
		},
		original: "run", messages: 2, sound: "run",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []*session.Variant{session.Original, session.Sound} {
				c := newCoreRun(t, v, true)
				ms := tc.run(c)
				want := tc.original
				if v == session.Sound {
					want = tc.sound
				}
				if want == "" {
					if c.comp.ID != 0 {
						t.Errorf("%s: compacted: %+v", v.Name, c.comp)
					}
					continue
				}
				if c.comp.ID == 0 {
					t.Fatalf("%s: no compaction continue armed", v.Name)
				}
				if v == session.Original && c.s.Context.Count != tc.messages {
					t.Errorf("%s: %d messages before the continue, want %d", v.Name, c.s.Context.Count, tc.messages)
				}
				if got := c.continueOutcome(ms); got != want {
					t.Errorf("%s: compaction continue: %q, want %q", v.Name, got, want)
				}
			}
		})
	}
}
