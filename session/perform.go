package session

import (
	"fmt"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/trace"
)

// Shell performs a step's effects: one method per effect kind, so that a
// shell lacking one does not compile, and Perform, the one loop over the
// effects, calls them in order. A new effect kind is a new method here and
// a case in Perform (TestPerformHandlesEveryKind fails until it has one).
type Shell interface {
	// Record takes a record to write (Emit), a command's response
	// (Answer) or a prompt_resolved (Resolve); r is valid during the call.
	Record(r *trace.Record)
	// Arm arms timer t (Delay from now); Cancel cancels it: it must never
	// fire.
	Arm(t Timer)
	Cancel(t Timer)
	// SetEnabled, SetSettings and SetCompaction change the session's
	// retry.enabled, retry policy and Config.CompactionEnabled.
	SetEnabled(enabled bool)
	SetSettings(p *policy.Policy)
	SetCompaction(enabled bool)
	// Call starts model call id; its reply comes back as a Reply event.
	// It is a step's last effect.
	Call(id uint64)
}

// Perform performs effects fx, in order, with sh. An effect of a kind it
// does not know panics: a bug of this file, found by its test.
func Perform(fx []Effect, sh Shell) {
	for i := range fx {
		e := &fx[i]
		switch e.Kind {
		case Emit, Answer, Resolve:
			sh.Record(&e.Record)
		case Arm:
			sh.Arm(e.Timer)
		case Cancel:
			sh.Cancel(e.Timer)
		case SetEnabled:
			sh.SetEnabled(e.Enabled)
		case SetSettings:
			sh.SetSettings(e.Policy)
		case SetCompaction:
			sh.SetCompaction(e.Enabled)
		case Call:
			sh.Call(e.Call)
		default:
			panic(fmt.Sprintf("session: effect kind %d has no Shell method", e.Kind))
		}
	}
}
