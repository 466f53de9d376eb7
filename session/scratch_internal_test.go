package session

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
)

// TestStepLeavesNoScratch: Apply does not clear the stepper's per-step
// scratch (ending, aborting, afterEnd, deferred, fx) on entry; every step
// leaves it zero. Random event sequences (prompts, replies of every kind,
// timers, aborts, commands, settles) on both variants check it after each
// step.
func TestStepLeavesNoScratch(t *testing.T) {
	msg := func(sr policy.StopReason, text string) classify.Outcome {
		return classify.ClassifyReply(policy.AssistantMessage{StopReason: sr, ErrorMessage: text}, 0, time.Unix(0, 0))
	}
	replies := []classify.Outcome{
		msg(policy.StopReasonStop, ""),
		msg(policy.StopReasonToolUse, ""),
		msg(policy.StopReasonError, "503 service unavailable"),
		msg(policy.StopReasonError, "prompt is too long: 213462 tokens > 200000 maximum"),
		msg(policy.StopReasonError, "401 unauthorized"),
		msg(policy.StopReasonAborted, AbortedMessage),
		msg(policy.StopReasonError, "You have hit your ChatGPT usage limit (plus plan). Try again in ~5 min."),
	}
	for _, v := range []*Variant{Sound, Original} {
		rng := rand.New(rand.NewPCG(1, uint64(len(v.Name))))
		for run := 0; run < 200; run++ {
			c := &Core{Variant: v, Config: Config{CompactionEnabled: true, CompactionSucceeds: run%2 == 0}}
			set := policy.Settings{Enabled: true, MaxRetries: 1 + run%3, BaseDelay: time.Second}
			s := Initial()
			var b Buffer
			var armed []Timer
			var call uint64
			at := time.Duration(0)
			for i := 0; i < 60; i++ {
				at += time.Millisecond
				ev := Event{At: at}
				switch k := rng.IntN(9); {
				case k == 0:
					ev.Kind, ev.ID, ev.Respond = Prompt, "p", rng.IntN(2) == 0
				case k <= 3 && call != 0:
					ev.Kind, ev.Call, ev.Reply, ev.Switch = Reply, call, replies[rng.IntN(len(replies))], rng.IntN(2) == 0
				case k <= 5 && len(armed) > 0:
					j := rng.IntN(len(armed))
					ev.Kind, ev.Timer = TimerFired, armed[j]
					armed = append(armed[:j], armed[j+1:]...)
				case k == 6:
					ev.Kind, ev.ID, ev.Reply = Abort, "a", msg(policy.StopReasonAborted, AbortedMessage)
				case k == 7:
					ev.Kind, ev.ID = AbortRetry, "r"
				default:
					ev.Kind = Settle
				}
				b.Effects = b.Effects[:0]
				for _, e := range c.Apply(&s, policy.MustCompile(set), &ev, &b) {
					switch e.Kind {
					case Arm:
						armed = append(armed, e.Timer)
					case Cancel:
						for j, a := range armed {
							if a.ID == e.Timer.ID {
								armed = append(armed[:j], armed[j+1:]...)
								break
							}
						}
					case Call:
						call = e.Call
					}
				}
				if s.Run.Kind == NoRun {
					call = 0
				}
				if st := &b.st; st.ending || st.aborting || st.afterEnd != 0 || st.deferred != 0 || st.fx != 0 {
					t.Fatalf("%s run %d step %d (%v): scratch left: ending %v aborting %v afterEnd %d deferred %d fx %d",
						v.Name, run, i, ev.Kind, st.ending, st.aborting, st.afterEnd, st.deferred, st.fx)
				}
			}
		}
	}
}
