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
	for i, c := range cfgs {
		if err := c.Validate(); err != nil {
			return nil, &SweepError{Index: i, Name: c.Name, Err: err}
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(cfgs))
	results := make([]*Result, len(cfgs))
	errs := make([]error, len(cfgs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(cfgs) {
					return
				}
				results[i], errs[i] = Run(cfgs[i], Options{})
			}
		})
	}
	wg.Wait()
	out := &Result{}
	for i, r := range results {
		if errs[i] != nil {
			return nil, &SweepError{Index: i, Name: cfgs[i].Name, Err: errs[i]}
		}
		if err := out.Merge(r); err != nil {
			return nil, err
		}
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
