package explore

import (
	"errors"
	"fmt"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
)

// Counterexample is one violated invariant with its shortest path, made into
// a scenario file whose expect block passes under sim (it shows the
// violation).
type Counterexample struct {
	Violation
	MaxRetries int
	// Replay is the scenario file, nil when scenario files cannot express
	// the path (NotReplayed says why: jitter draws, waits that are not
	// whole milliseconds; see NewReplay).
	Replay      *Replay
	NotReplayed string
}

// Summary is the result of checking a range of maxRetries values.
type Summary struct {
	Variant         string
	Settings        *policy.Settings // the settings checked (nil: the default ones)
	States          int              // summed over the range
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
	return check(Options{Variant: v}, from, to)
}

// CheckSettings is Check with the retry settings set (nil: the default
// settings), e.g. a profile's: see Options.Settings. Settings the explorer
// cannot take are refused with an error saying why, before exploring
// anything. The counterexamples' scenario files carry the settings.
func CheckSettings(v *session.Variant, set *policy.Settings, from, to int) (*Summary, error) {
	return check(Options{Variant: v, Settings: set}, from, to)
}

// check is Check for opt's variant and settings (its MaxRetries unused).
func check(opt Options, from, to int) (*Summary, error) {
	v := opt.Variant
	if v == nil {
		v = session.Sound
	}
	opt.Variant = v
	for _, mr := range []int{from, to} {
		if err := ValidateMaxRetries(v, mr); err != nil {
			return nil, fmt.Errorf("explore: %w", err)
		}
	}
	configs := make([]*config, 0, max(to-from+1, 0))
	for mr := from; mr <= to; mr++ {
		c, err := newConfig(v, opt.Settings, mr, opt.anyVariant)
		if err != nil {
			return nil, fmt.Errorf("explore: settings: %w", err)
		}
		configs = append(configs, c)
	}
	sum := &Summary{Variant: v.Name}
	if opt.Settings != nil {
		set := opt.Settings.Clone()
		sum.Settings = &set
	}
	best := map[Invariant]Counterexample{}
	for mr := from; mr <= to; mr++ {
		o := opt
		o.MaxRetries = mr
		r := exploreConfig(o, configs[mr-from])
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
		rp, err := newReplay(v, configs[c.MaxRetries-from], c.Path, ReplayOptions{
			Name: fmt.Sprintf("check-%s-%s", v.Name, inv),
			Description: fmt.Sprintf("Counterexample found by retrysim check (variant %s, maxRetries %d): %s. Path: %v.",
				v.Name, c.MaxRetries, inv.Description(), c.Path),
			Extend: true, Expect: true,
		})
		var nr notReplayable
		switch {
		case errors.As(err, &nr):
			c.NotReplayed = nr.why
		case err != nil:
			return nil, fmt.Errorf("counterexample for %s: %w", inv, err)
		default:
			c.Replay = rp
		}
		sum.Counterexamples = append(sum.Counterexamples, c)
	}
	return sum, nil
}

// Line is the summary line: "states=N transitions=M violations=K" (K is
// the number of violated invariants).
func (s *Summary) Line() string {
	return fmt.Sprintf("states=%d transitions=%d violations=%d", s.States, s.Transitions, len(s.Counterexamples))
}
