package session

import (
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/trace"
)

// countShell counts the Shell methods called.
type countShell struct{ n int }

func (c *countShell) Record(*trace.Record)       { c.n++ }
func (c *countShell) Arm(Timer)                  { c.n++ }
func (c *countShell) Cancel(Timer)               { c.n++ }
func (c *countShell) SetEnabled(bool)            { c.n++ }
func (c *countShell) SetSettings(*policy.Policy) { c.n++ }
func (c *countShell) SetCompaction(bool)         { c.n++ }
func (c *countShell) Call(uint64)                { c.n++ }

// TestPerformHandlesEveryKind: every effect kind reaches exactly one Shell
// method; a kind added without its case in Perform fails here (Perform
// panics), one added without a Shell method fails every shell's build.
func TestPerformHandlesEveryKind(t *testing.T) {
	for k := EffectKind(1); k < numEffectKinds; k++ {
		var c countShell
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("effect kind %d: %v", k, v)
				}
			}()
			Perform([]Effect{{Kind: k}}, &c)
		}()
		if c.n != 1 {
			t.Errorf("effect kind %d: %d Shell calls, want 1", k, c.n)
		}
	}
}
