package fleet

import (
	"context"
	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"runtime"
	"sync"
	"sync/atomic"
)

// Options adjust Run; the zero value runs every run of the plan on every
// processor.
type Options struct {
	// Shard, when set (Count above 0), runs only the plan's runs that shard
	// holds; the zero Shard runs them all (the shard 0/1).
	Shard Shard
	// Workers is the number of runs at once (0: GOMAXPROCS).
	Workers int
	// Progress, when set, counts the sessions done: each run adds them as
	// they end (in batches), and when it ends the rest (those not arrived
	// or not done by the horizon), so that it grows by the sum of the runs'
	// Sessions (Plan.Sessions). It may be shared by runs at once and read
	// while they run.
	Progress *atomic.Int64
	// Trace, when set, is asked once per session as it arrives; a non-nil
	// Tracer gets that session's records and calls. With more than one run
	// at once (Workers), it is called from each run's goroutine.
	Trace func(info SessionInfo) Tracer
}

// Run runs the plan: every run, or with opt.Shard the runs of that shard,
// on up to opt.Workers goroutines, and returns their result
// (Partial.Result). Every run of the plan is validated first, whichever
// shard holds it: the first invalid one's error is a *SweepError (its
// index in the plan, its *FieldError within), and nothing is run. Results
// merge in the plan's order, so they do not depend on how many runs ran at
// once; a run's result is merged as soon as every run before it is, so Run
// holds the results of the runs done out of order only. When ctx is done,
// Run stops within about a thousand sessions and returns ctx's error.
//
// With opt.Shard given (0/1 for the whole plan), the partial result is a
// shard's, whole: the sweep's identity, groups and plan that MergePartials
// and Partial.JSON need. Without it, Run returns the result alone (Runs
// and Groups set, Shard zero), at less cost: what a caller making many
// runs wants. A one-fleet run: Run(ctx, PlanOf(cfg), Options{}); its
// result's one group is cfg's, with seed cfg.Seed. A nil plan has no runs.
func Run(ctx context.Context, p *Plan, opt Options) (*Partial, error) {
	if p == nil {
		p = &Plan{} // no runs
	}
	shard := opt.Shard != (Shard{})
	sh := opt.Shard.orWhole()
	if err := sh.validate(); err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	mine, at := p.shard(sh)
	res, err := sweep(ctx, mine, at, opt)
	if err != nil {
		return nil, err
	}
	keys, of := p.groups()
	part := &Partial{Runs: p.runs, Groups: len(keys), Result: *res}
	if !shard {
		return part, nil
	}
	if part.Sweep, err = p.ID(); err != nil {
		return nil, err
	}
	part.Shard, part.SweepGroups = sh, keys
	index := make(map[string]int, len(keys))
	for i, k := range keys {
		index[k.key()] = i
	}
	for _, g := range res.Groups {
		part.GroupIndex = append(part.GroupIndex, index[g.key()])
	}
	for i := range p.stretches {
		s := &p.stretches[i]
		part.Plan = append(part.Plan, SeedRange{Group: of[i], Run: s.run, From: s.from, To: s.to})
	}
	return part, nil
}

// orWhole is the shard, or for the zero Shard the whole sweep's, 0/1.
func (s Shard) orWhole() Shard {
	if s == (Shard{}) {
		return Shard{Index: 0, Count: 1}
	}
	return s
}

// sweep runs cfgs, validated, on up to opt.Workers goroutines and merges
// their results in order; at[i] is the plan's index of cfgs[i], for
// errors.
func sweep(ctx context.Context, cfgs []fleetspec.Config, at []int, opt Options) (*Result, error) {
	if len(cfgs) == 1 { // one run: on this goroutine
		res, err := runOne(ctx, cfgs[0], opt)
		if err != nil {
			return nil, &SweepError{Index: at[0], Name: cfgs[0].Name, Err: err}
		}
		return res, nil
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(cfgs))
	out := &Result{}
	var (
		mu       sync.Mutex
		done     = map[int]*Result{} // runs done, not merged yet
		merged   int                 // runs merged
		runErr   *SweepError         // the failed run of the lowest index
		mergeErr error
		stop     atomic.Bool
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(cfgs) {
					return
				}
				res, err := runOne(ctx, cfgs[i], opt)
				mu.Lock()
				if err != nil {
					if runErr == nil || at[i] < runErr.Index {
						runErr = &SweepError{Index: at[i], Name: cfgs[i].Name, Err: err}
					}
					stop.Store(true)
				} else {
					done[i] = res
				}
				for mergeErr == nil {
					r, ok := done[merged]
					if !ok {
						break
					}
					delete(done, merged)
					merged++
					if mergeErr = out.Merge(r); mergeErr != nil {
						stop.Store(true)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Every run before a failed one has run: the failure is the one a
	// sweep run in order meets first.
	switch {
	case mergeErr != nil:
		return nil, mergeErr
	case runErr != nil:
		return nil, runErr
	}
	return out, nil
}

// SweepError is a plan's run that could not run.
type SweepError struct {
	Index int    // its index in the plan
	Name  string // its fleet's name
	Err   error
}

// Error gives "fleet NAME: ERR".
func (e *SweepError) Error() string { return "fleet " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the run's error.
func (e *SweepError) Unwrap() error { return e.Err }
