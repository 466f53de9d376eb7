package fleet

import (
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/session"
)

// catalog classifies answers once per classifier: an answer's message is a
// function of the answer alone (no time-relative hint), so its Outcome is
// too, and the simulation looks it up instead of running the classifier's
// regular expressions on every call.
type catalog struct {
	cls     []*classify.Classifier
	entries map[fleetspec.Answer]*catalogEntry
	// plain holds the answers without a retry-after (by kind, and tool
	// for a success), looked up without hashing; plainOut their outcomes
	// once classified, at (2×kind+tool)×len(cls)+classifier.
	plain    [2 * fleetspec.NumKinds]*catalogEntry
	plainOut []*session.Event
	// last is the entry of the answer with a retry-after looked up last,
	// lastAnswer: such answers come in runs (a rate limit's 429 with its
	// fixed retry-after, a window's with the seconds left, the same for
	// a second), found without hashing.
	last       *catalogEntry
	lastAnswer fleetspec.Answer
	epoch      time.Time
}

type catalogEntry struct {
	msg policy.AssistantMessage
	// out[i] is the answer classified by classifier i, as the Reply event
	// that delivers it (its Call and At set by the step), once done[i].
	out  []session.Event
	done []bool
}

func newCatalog(cls []*classify.Classifier) *catalog {
	return &catalog{cls: cls, entries: make(map[fleetspec.Answer]*catalogEntry, 64), plainOut: make([]*session.Event, 2*int(fleetspec.NumKinds)*len(cls)),
		epoch: time.UnixMilli(session.DefaultEpochMs).UTC()}
}

// plainIndex is a's index in plain, or -1 for an answer with a
// retry-after.
func plainIndex(a *fleetspec.Answer) int {
	if a.RetryAfter != 0 || a.Hint != "" {
		return -1
	}
	i := 2 * int(a.Kind)
	if a.Tool {
		i++
	}
	return i
}

// entry is a's entry, made on first use.
func (c *catalog) entry(a fleetspec.Answer) *catalogEntry {
	var slot **catalogEntry
	if i := plainIndex(&a); i >= 0 {
		slot = &c.plain[i]
		if *slot != nil {
			return *slot
		}
	}
	if slot == nil && c.last != nil && c.lastAnswer == a {
		return c.last
	}
	e := c.entries[a]
	if e == nil {
		e = &catalogEntry{msg: a.Message(), out: make([]session.Event, len(c.cls)), done: make([]bool, len(c.cls))}
		c.entries[a] = e
	}
	if slot != nil {
		*slot = e
	} else {
		c.last, c.lastAnswer = e, a
	}
	return e
}

// outcome is a classified by classifier i.
func (c *catalog) outcome(a *fleetspec.Answer, i int) *classify.Outcome { return &c.event(a, i).Reply }

// event is the Reply event of a classified by classifier i: its other
// fields zero but its Call and At, which the caller sets (the reply is
// not copied into an event of its own).
func (c *catalog) event(a *fleetspec.Answer, i int) *session.Event {
	p := plainIndex(a)
	if p >= 0 {
		if o := c.plainOut[p*len(c.cls)+i]; o != nil {
			return o
		}
	}
	e := c.entry(*a)
	if !e.done[i] {
		e.out[i] = session.Event{Kind: session.Reply, Reply: c.cls[i].Reply(e.msg, session.DefaultContextWindow, c.epoch)}
		e.done[i] = true
	}
	if p >= 0 {
		c.plainOut[p*len(c.cls)+i] = &e.out[i]
	}
	return &e.out[i]
}
