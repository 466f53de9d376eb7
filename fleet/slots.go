package fleet

import "sync"

// sessionSlots keeps the session slots of runs that ended (a *[]sess,
// emptied), for the next run to use again: a sweep or a tune runs
// hundreds of fleets one after another, and each run's slots grow to its
// most sessions alive at once, which the garbage collector would
// otherwise scan and free run after run (TestRunsReuseSessionSlots).
var sessionSlots sync.Pool

// freeSlots gives r's session slots to sessionSlots, emptied (a slot
// holds pointers into r), once r's result is taken.
func (r *runner) freeSlots() {
	if r.sessions == nil {
		return
	}
	clear(r.sessions)
	slots := r.sessions[:0]
	r.sessions = nil
	sessionSlots.Put(&slots)
}
