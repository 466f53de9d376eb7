package fleet

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Sweep runs every fleet of cfgs (independent runs: seeds × profiles ×
// files) on up to workers goroutines (0: GOMAXPROCS) and merges their
// results in the order of cfgs, so the result does not depend on how many
// run at once. The first invalid configuration's error is returned (with
// its index in cfgs), and nothing is run.
func Sweep(cfgs []Config, workers int) (*Result, error) {
	return SweepWith(cfgs, SweepOptions{Workers: workers})
}

// SweepOptions adjust a sweep; the zero value runs on every processor.
type SweepOptions struct {
	// Workers is the number of runs at once (0: GOMAXPROCS).
	Workers int
	// Progress, when set, counts the sessions done over every run (see
	// Options.Progress): at the end it has grown by the sum of the runs'
	// Sessions.
	Progress *atomic.Int64
}

// SweepWith is Sweep with options. A run's result is merged as soon as
// every run before it is, so the sweep holds the results of the runs done
// out of order only, not one per run.
func SweepWith(cfgs []Config, opt SweepOptions) (*Result, error) {
	for i, c := range cfgs {
		if err := c.Validate(); err != nil {
			return nil, &SweepError{Index: i, Name: c.Name, Err: err}
		}
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
				res, err := Run(cfgs[i], Options{Progress: opt.Progress})
				mu.Lock()
				if err != nil {
					if runErr == nil || i < runErr.Index {
						runErr = &SweepError{Index: i, Name: cfgs[i].Name, Err: err}
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

// SweepError is a sweep's run that could not run.
type SweepError struct {
	Index int    // its index in the sweep
	Name  string // its fleet's name
	Err   error
}

// Error gives "fleet NAME: ERR".
func (e *SweepError) Error() string { return "fleet " + e.Name + ": " + e.Err.Error() }

// Unwrap returns the run's error.
func (e *SweepError) Unwrap() error { return e.Err }
