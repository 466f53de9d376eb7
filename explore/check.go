package explore

import (
	"fmt"

	"github.com/ohmypi/retryfsm/session"
)

// Counterexample is one violated invariant with its shortest path, made into
// a scenario file whose expect block passes under sim (it shows the
// violation).
type Counterexample struct {
	Violation
	MaxRetries int
	Replay     *Replay
}

// Summary is the result of checking a range of maxRetries values.
type Summary struct {
	Variant         string
	States          int // summed over the range
	Transitions     int
	Pruned          int
	Counterexamples []Counterexample // one per violated invariant, in Invariants order
	Results         []*Result
}

// Check explores maxRetries from..to for v and keeps, per violated
// invariant, the shortest counterexample (ties: the smaller maxRetries).
// A from or to outside 0..MaxRetriesLimit(v) is refused with an error
// wrapping a *MaxRetriesError, before exploring anything.
func Check(v *session.Variant, from, to int) (*Summary, error) {
	if v == nil {
		v = session.Sound
	}
	for _, mr := range []int{from, to} {
		if err := ValidateMaxRetries(v, mr); err != nil {
			return nil, fmt.Errorf("explore: %w", err)
		}
	}
	sum := &Summary{Variant: v.Name}
	best := map[Invariant]Counterexample{}
	for mr := from; mr <= to; mr++ {
		r := exploreAll(Options{Variant: v, MaxRetries: mr})
		sum.Results = append(sum.Results, r)
		sum.States += r.States
		sum.Transitions += r.Transitions
		sum.Pruned += r.Pruned
		for _, x := range r.Violations {
			if b, ok := best[x.Invariant]; ok && len(b.Path) <= len(x.Path) {
				continue
			}
			best[x.Invariant] = Counterexample{Violation: x, MaxRetries: mr}
		}
	}
	for _, inv := range Invariants() {
		c, ok := best[inv]
		if !ok {
			continue
		}
		rp, err := NewReplay(v, c.MaxRetries, c.Path, ReplayOptions{
			Name: fmt.Sprintf("check-%s-%s", v.Name, inv),
			Description: fmt.Sprintf("Counterexample found by retrysim check (variant %s, maxRetries %d): %s. Path: %v.",
				v.Name, c.MaxRetries, inv.Description(), c.Path),
			Extend: true, Expect: true,
		})
		if err != nil {
			return nil, fmt.Errorf("counterexample for %s: %w", inv, err)
		}
		c.Replay = rp
		sum.Counterexamples = append(sum.Counterexamples, c)
	}
	return sum, nil
}

// Line is the summary line: "states=N transitions=M violations=K" (K is
// the number of violated invariants).
func (s *Summary) Line() string {
	return fmt.Sprintf("states=%d transitions=%d violations=%d", s.States, s.Transitions, len(s.Counterexamples))
}
