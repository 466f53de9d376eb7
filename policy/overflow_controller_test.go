package policy_test

import (
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// ovfSamples holds, for each of the 21 overflow patterns in order, an error
// message matching that pattern and no other one. Each ends with (or, for the
// anchored last pattern, contains) "529 overloaded", so that it also matches
// the retryable regex: only the overflow check keeps it from being retried.
var ovfSamples = []string{
	"prompt is too long: 213462 tokens > 200000 maximum (529 overloaded)",
	"Input is too long for requested model. 529 overloaded",
	"The input exceeds the context window of this model; 529 overloaded",
	"The input token count (1196265) exceeds the maximum number of tokens allowed (1048575). 529 overloaded",
	"This model's maximum prompt length is 131072 but the request contains 537812 tokens. 529 overloaded",
	"Please reduce the length of the messages or completion. 529 overloaded",
	"This model's maximum context length is 128000 tokens. However, you requested 130000. 529 overloaded",
	"Prompt contains 300000 tokens and exceeds the limit of 200000. 529 overloaded",
	"the request exceeds the available context size, try increasing it. 529 overloaded",
	"requested tokens (9000) exceed context window of 8192. 529 overloaded",
	"context size overflow. 529 overloaded",
	"the input is too large for n_ctx. 529 overloaded",
	"the number of requested tokens (9000) is greater than n_ctx (8192). 529 overloaded",
	"This request is greater than the context length. 529 overloaded",
	"Error: context window exceeds limit. 529 overloaded",
	"Request exceeded model token limit. 529 overloaded",
	"error code: context_length_exceeded. 529 overloaded",
	"Too many tokens in request. 529 overloaded",
	"token limit exceeded for this deployment. 529 overloaded",
	`{"type":"request_too_large"} 529 overloaded`,
	"413 status code (no body) 529 overloaded",
}

// TestOverflowSamples checks the samples themselves: one per pattern, each
// matching exactly its own pattern, each retryable by its text alone.
func TestOverflowSamples(t *testing.T) {
	pats := classify.OverflowPatterns()
	retryable := regexp.MustCompile("(?i)" + classify.RetryableSource)
	if len(pats) != 21 || len(ovfSamples) != len(pats) {
		t.Fatalf("%d patterns, %d samples; want 21 of each", len(pats), len(ovfSamples))
	}
	res := make([]*regexp.Regexp, len(pats))
	for i, p := range pats {
		res[i] = regexp.MustCompile("(?i)" + p) // the sources are RE2-compatible for these ASCII samples
	}
	for i, msg := range ovfSamples {
		// The original tries the patterns in order: the sample's first match
		// must be its own pattern (10 is a special case of 13, so sample 10
		// matches both; every other sample matches only its own).
		var matched []int
		for j, re := range res {
			if re.MatchString(msg) {
				matched = append(matched, j+1)
			}
		}
		want := []int{i + 1}
		if i+1 == 10 {
			want = []int{10, 13}
		}
		if !slices.Equal(matched, want) {
			t.Errorf("sample %d %q matches patterns %v, want %v", i+1, msg, matched, want)
		}
		if !retryable.MatchString(msg) {
			t.Errorf("sample %d %q does not match the retryable regex", i+1, msg)
		}
		if c := (*classify.Classifier)(nil).Classify(*ctlErrReply(msg), 0); c != classify.ClassOverflow {
			t.Errorf("Classify(sample %d) = %v, want overflow", i+1, c)
		}
	}
}

// TestControllerOverflowNeverRetried: an overflow (by any of the 21
// patterns, or by usage over the context window) never yields
// auto_retry_start and OnAgentEnd returns false, at rest and mid-chain; at
// rest nothing happens, mid-chain the chain ends with the overflow message.
func TestControllerOverflowNeverRetried(t *testing.T) {
	const window = 200_000
	type sample struct {
		name string
		msg  policy.AssistantMessage
	}
	var samples []sample
	for i, m := range ovfSamples {
		samples = append(samples, sample{fmt.Sprintf("pattern %02d", i+1), *ctlErrReply(m)})
	}
	samples = append(samples,
		sample{"usage over the window", policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error",
			InputTokens: 150_000, CacheReadTokens: 50_001}},
		sample{"usage over the window, empty message", policy.AssistantMessage{StopReason: policy.StopReasonError,
			InputTokens: window + 1}},
	)
	withWindow := func(c *policy.Config) { c.ContextWindow = window }

	for _, s := range samples {
		t.Run("at rest/"+s.name, func(t *testing.T) {
			h := newCtlHarness(t, policy.DefaultSettings(), withWindow)
			msg := s.msg
			if h.ctl.OnAgentEnd(&msg) {
				t.Error("OnAgentEnd = true, want false")
			}
			if n := h.eventCount(); n != 0 {
				t.Errorf("events %q, want none", h.eventJSON())
			}
			if h.agent.drops.Load() != 0 || len(h.clk.dueTimes()) != 0 {
				t.Error("an overflow at rest dropped the message or armed a timer")
			}
			h.assertAtRest(policy.StateIdle)
		})
		t.Run("continuing/"+s.name, func(t *testing.T) {
			h := newCtlHarness(t, policy.DefaultSettings(), withWindow)
			h.toContinuing("529 overloaded_error")
			msg := s.msg
			if h.ctl.OnAgentEnd(&msg) {
				t.Error("OnAgentEnd = true, want false")
			}
			// Compared as values: json.Marshal would escape the '>' of pattern 1's sample.
			got := h.eventList()
			final := msg.ErrorMessage
			if final == "" {
				final = policy.UnknownError // sound never ends a chain with an empty finalError
			}
			want := []policy.Event{
				policy.AutoRetryStart{Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "529 overloaded_error"},
				policy.AutoRetryEnd{Success: false, Attempt: 1, FinalError: final},
			}
			if !slices.Equal(got, want) {
				t.Errorf("events:\n got %#v\nwant %#v", got, want)
			}
			if h.agent.drops.Load() != 1 || len(h.clk.dueTimes()) != 1 {
				t.Error("the overflow dropped its message or armed a timer")
			}
			h.clk.Add(time.Minute)
			h.clk.settle(t)
			if h.agent.continues.Load() != 1 {
				t.Error("continued after an overflow")
			}
			checkOutcome(t, "WaitForRetry", h.assertAtRest(policy.StateExhausted),
				&policy.ExhaustedError{Attempt: 1, FinalError: final, Reason: policy.ReasonNonRetryable})
		})
	}

	// The usage rule is strict and needs a window: at the window exactly, or
	// with ContextWindow 0, the same 529 is retried.
	for _, c := range []struct {
		name   string
		window int64
		usage  tokens
	}{
		{"usage equal to the window", window, tokens{150_000, 50_000}},
		{"no window", 0, tokens{10 * window, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newCtlHarness(t, policy.DefaultSettings(), func(cfg *policy.Config) { cfg.ContextWindow = c.window })
			msg := policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded_error", InputTokens: c.usage.input, CacheReadTokens: c.usage.cacheRead}
			if !h.ctl.OnAgentEnd(&msg) {
				t.Error("OnAgentEnd = false, want a retry")
			}
			h.ctl.AbortRetry()
		})
	}
}

// tokens is a reply's usage.
type tokens struct{ input, cacheRead int64 }
