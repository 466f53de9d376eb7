package retry

import "testing"

// countApplier counts the applier methods called.
type countApplier struct{ n int }

func (c *countApplier) AskAuth(*Decision, *Effect)   { c.n++ }
func (c *countApplier) Fallback(*Decision, *Effect)  { c.n++ }
func (c *countApplier) EmitStart(*Decision, *Effect) { c.n++ }
func (c *countApplier) DropError()                   { c.n++ }
func (c *countApplier) ArmTimer(*Decision, *Effect)  { c.n++ }
func (c *countApplier) CancelTimer()                 { c.n++ }
func (c *countApplier) Uncontrol()                   { c.n++ }
func (c *countApplier) EmitEnd(*Decision, *Effect)   { c.n++ }
func (c *countApplier) Release()                     { c.n++ }
func (c *countApplier) Continue(bool)                { c.n++ }

// TestApplyHandlesEveryStep: every Step kind a decision can give as an
// effect reaches exactly one applier method (the steps that only change
// the snapshot are never effects: Decide keeps them out).
func TestApplyHandlesEveryStep(t *testing.T) {
	snapshotOnly := map[Step]bool{StepIncAttempt: true, StepResetAttempt: true, StepOpen: true}
	for k := Step(0); int(k) < len(stepNames); k++ {
		if snapshotOnly[k] {
			continue
		}
		var c countApplier
		d := &Decision{n: 1}
		d.effects[0] = Effect{Kind: k}
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("step %v: %v", k, v)
				}
			}()
			d.Apply(&c)
		}()
		if c.n != 1 {
			t.Errorf("step %v: %d applier calls, want 1", k, c.n)
		}
	}
}
