package session_test

import (
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// coreRun steps one session core and keeps what it needs between steps.
type coreRun struct {
	t    *testing.T
	core *session.Core
	set  *policy.Policy
	s    session.State
	call uint64        // the model call in flight
	comp session.Timer // the compaction continue armed last
	// armed is the timer of each kind armed last.
	armed [session.CompactionTimer + 1]session.Timer
	fx    []session.Effect // the last step's effects
}

func newCoreRun(t *testing.T, v *session.Variant, compaction bool) *coreRun {
	return &coreRun{t: t, set: policy.DefaultPolicy(), s: session.Initial(), core: &session.Core{Variant: v, Config: session.Config{
		CompactionEnabled: compaction, CompactionSucceeds: true, Provider: "anthropic", SessionID: "session-1", Model: "claude-sonnet-4-5",
	}}}
}

// step applies ev at ms, then the end of the queue event (settle), and
// performs the effects a shell would on its core: SetCompaction changes
// the core's Config.
func (c *coreRun) step(ms int, ev session.Event) {
	ev.At = time.Duration(ms) * time.Millisecond
	c.s, c.fx = c.core.Step(c.s, c.set, &ev, c.fx[:0])
	settle := session.Event{Kind: session.Settle, At: ev.At}
	c.s, c.fx = c.core.Step(c.s, c.set, &settle, c.fx)
	for _, e := range c.fx {
		switch e.Kind {
		case session.Call:
			c.call = e.Call
		case session.Arm:
			c.armed[e.Timer.Kind] = e.Timer
			if e.Timer.Kind == session.CompactionTimer {
				c.comp = e.Timer
			}
		case session.SetCompaction:
			c.core.Config.CompactionEnabled = e.Enabled
		}
	}
}

// records are the types of the last step's records, in order.
func (c *coreRun) records() []trace.Type {
	var ts []trace.Type
	for _, e := range c.fx {
		if e.Kind == session.Emit || e.Kind == session.Answer || e.Kind == session.Resolve {
			ts = append(ts, e.Record.Type)
		}
	}
	return ts
}

// state is get_state's data at ms.
func (c *coreRun) state(ms int) trace.SessionState {
	c.step(ms, session.Event{Kind: session.GetState, ID: "s"})
	for _, e := range c.fx {
		if e.Kind == session.Answer && e.Record.Response.HasState {
			return e.Record.Response.State
		}
	}
	c.t.Fatalf("get_state at %d ms: no data in %+v", ms, c.fx)
	return trace.SessionState{}
}

// overflow is a prompt-too-long error reply.
var overflow = classify.ClassifyReply(policy.AssistantMessage{StopReason: policy.StopReasonError,
	ErrorMessage: "prompt is too long: 213462 tokens > 200000 maximum"}, 200000, time.Unix(0, 0))

func has(ts []trace.Type, want trace.Type) bool {
	for _, t := range ts {
		if t == want {
			return true
		}
	}
	return false
}

// TestSetAutoCompaction: the event answers set_auto_compaction and asks
// the shell to change compaction.enabled; with it off an overflow is not
// compacted (the error stays in the context and nothing continues, as in
// the original), with it back on it is.
func TestSetAutoCompaction(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		t.Run(v.Name, func(t *testing.T) {
			c := newCoreRun(t, v, true)
			c.step(0, session.Event{Kind: session.SetAutoCompaction, ID: "c", Enabled: false})
			if len(c.fx) != 2 || c.fx[0].Kind != session.SetCompaction || c.fx[0].Enabled ||
				c.fx[1].Kind != session.Answer || c.fx[1].Record.Response != (trace.ResponseRecord{ID: "c", Command: "set_auto_compaction", Success: true}) {
				t.Fatalf("effects %+v", c.fx)
			}
			if c.core.Config.CompactionEnabled {
				t.Fatal("compaction still enabled")
			}
			if st := c.state(0); st.AutoCompactionEnabled {
				t.Errorf("get_state: autoCompactionEnabled %v", st.AutoCompactionEnabled)
			}
			c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
			c.step(10, session.Event{Kind: session.Reply, Call: c.call, Reply: overflow})
			if ts := c.records(); has(ts, trace.AutoCompactionStart) || has(ts, trace.AutoRetryStart) {
				t.Errorf("overflow with compaction off: %v", ts)
			}
			if st := c.state(20); st.MessageCount != 2 || st.IsCompacting || st.IsStreaming {
				t.Errorf("after the overflow: %+v (want the error kept: 2 messages, nothing due)", st)
			}

			c.step(30, session.Event{Kind: session.SetAutoCompaction, ID: "c2", Enabled: true})
			c.step(40, session.Event{Kind: session.Prompt, ID: "p2", Respond: true})
			c.step(50, session.Event{Kind: session.Reply, Call: c.call, Reply: overflow})
			if ts := c.records(); !has(ts, trace.AutoCompactionStart) || !has(ts, trace.AutoCompactionEnd) {
				t.Errorf("overflow with compaction on: %v", ts)
			}
		})
	}
}

// TestGetStateIsCompacting: isCompacting is true from a successful
// overflow compaction until its continue runs, in both variants; in sound
// an abort cancels the continue, and with it the wait.
func TestGetStateIsCompacting(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		t.Run(v.Name, func(t *testing.T) {
			c := newCoreRun(t, v, true)
			if st := c.state(0); st.IsCompacting {
				t.Fatal("compacting before anything happened")
			}
			c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
			c.step(10, session.Event{Kind: session.Reply, Call: c.call, Reply: overflow})
			if c.comp.Delay != session.CompactionContinueDelay {
				t.Fatalf("no compaction continue armed: %+v", c.fx)
			}
			for _, ms := range []int{10, 60, 109} {
				if st := c.state(ms); !st.IsCompacting {
					t.Errorf("at %d ms, in the compaction wait: isCompacting false", ms)
				}
			}
			c.step(110, session.Event{Kind: session.TimerFired, Timer: c.comp})
			if st := c.state(110); st.IsCompacting {
				t.Error("after the continue: isCompacting true")
			}
		})
	}
	c := newCoreRun(t, session.Sound, true)
	c.step(0, session.Event{Kind: session.Prompt, ID: "p", Respond: true})
	c.step(10, session.Event{Kind: session.Reply, Call: c.call, Reply: overflow})
	c.step(20, session.Event{Kind: session.Abort, ID: "a"})
	if st := c.state(20); st.IsCompacting {
		t.Error("sound: after an abort cancelled the continue: isCompacting true")
	}
}

// TestGetStateOptions: the original's session options and the model in
// use (none when its id is not known).
func TestGetStateOptions(t *testing.T) {
	c := newCoreRun(t, session.Sound, true)
	st := c.state(0)
	want := trace.SessionState{IsStreaming: false, MessageCount: 0, AutoCompactionEnabled: true, SessionID: "session-1",
		AutoRetryEnabled: true, RetryState: policy.StateIdle,
		Model:         trace.ModelInfo{ID: "claude-sonnet-4-5", Provider: "anthropic", API: "anthropic-messages"},
		ThinkingLevel: "off", SteeringMode: "one-at-a-time", FollowUpMode: "one-at-a-time", InterruptMode: "immediate"}
	if st != want {
		t.Errorf("get_state:\n got %+v\nwant %+v", st, want)
	}
	c.core.Config.Model = ""
	if st := c.state(0); st.Model != (trace.ModelInfo{}) {
		t.Errorf("no model id: model %+v, want none", st.Model)
	}
}

func TestProviderAPI(t *testing.T) {
	for p, want := range map[string]string{
		"anthropic": "anthropic-messages", "openai": "openai-responses", "openai-codex": "openai-codex-responses",
		"google": "google-generative-ai", "google-vertex": "google-vertex", "amazon-bedrock": "bedrock-converse-stream",
		"azure-openai-responses": "azure-openai-responses", "groq": "openai-completions", "": "",
	} {
		if got := session.ProviderAPI(p); got != want {
			t.Errorf("ProviderAPI(%q) = %q, want %q", p, got, want)
		}
	}
}
