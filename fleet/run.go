package fleet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// binWidth is the width of the bins whose peaks are reported.
const binWidth = 100 * time.Millisecond

// minLatency is the shortest call: every answer arrives in a queue event of
// its own.
const minLatency = time.Nanosecond

// SessionInfo identifies a traced session (Options.Trace).
type SessionInfo struct {
	// Index is the session's number, from 0 in order of arrival.
	Index int
	// Profile is the profile it runs.
	Profile string
	// Arrival is when it arrived; the records it traces are relative to it.
	Arrival time.Duration
	// JitterSeed seeds its agent's jitter draws: math/rand/v2's PCG with
	// seeds (JitterSeed, 0), as the simulator draws a scenario's seed.
	JitterSeed int64
}

// Tracer receives a traced session's records and wire calls.
type Tracer interface {
	// Record gets each record of the session's agent core (every type), its
	// time relative to the session's arrival; r is only valid during the
	// call.
	Record(r *trace.Record)
	// Call gets each wire call's answer and latency, in order.
	Call(reply policy.AssistantMessage, latency time.Duration)
}

// progressBatch is how many ended sessions a run adds to Options.Progress
// at once.
const progressBatch = 1024

// chainEnd classifies the rules of the sound retry table that end a chain.
type chainEnd uint8

const (
	endNone chainEnd = iota
	endSuccess
	endExhausted
	endFailFast
	endOther
)

// ruleEnds maps the sound table's rule indexes to how a chain ends there.
var ruleEnds = func() []chainEnd {
	rules := session.Sound.Retry.Rules()
	ends := make([]chainEnd, len(rules))
	for i, r := range rules {
		if !slices.Contains(r.Steps, retry.StepEmitEnd) {
			continue
		}
		switch {
		case r.Success:
			ends[i] = endSuccess
		case r.Reason == policy.ReasonMaxWait:
			ends[i] = endFailFast
		case r.Reason == policy.ReasonMaxRetries:
			ends[i] = endExhausted
		default:
			ends[i] = endOther
		}
	}
	return ends
}()

// chainEnds is the set of the sound table's rule indexes that end a
// chain (session.Core.Transitions): the only transitions an untraced
// session's record counts.
var chainEnds = func() []bool {
	set := make([]bool, len(ruleEnds))
	for i, e := range ruleEnds {
		set[i] = e != endNone
	}
	return set
}()

// layerRT is a profile as a run uses it: its settings, its cores and its
// classifier's index in the catalog (one index for the profiles that
// share a classifier).
type layerRT struct {
	name     string
	pol      *policy.Policy
	core     session.Core // records: Transition (agent) or PromptResolved (SDK)
	traced   session.Core // every record
	cls      int
	jittered bool
}

// sess is a live session.
type sess struct {
	st            session.State // the agent's (the SDK layer's is in runner.sdkStates)
	agent         *layerRT      // its profile's, runner.agents[prof]
	stats         *Stats        // its profile's counts, runner.stats[prof]
	model, jitter rand.PCG      // the model's draws; the agent's jitter draws
	index         int
	slot          int32
	gen           uint32
	prof          int32
	live          int32 // its events in the queue that will be handled
	active        bool
	inPrompt      bool
	lastOK        bool // the agent's last reply was a success
	sdkResolved   bool
	afterError    bool // the prompt's last wire answer was an error: the next call is a retry
	wireAdmitted  bool
	wireLayer     uint8
	promptsLeft   int
	prompt        fleetspec.Prompt // the provider's count of the prompt's calls
	arrival       time.Duration
	promptAt      time.Duration
	window        time.Duration    // the end of the provider's retry-after window
	wire          fleetspec.Answer // the answer of the wire call in flight
	wireCall      uint64
	wireSeq       uint32           // the number of the last wire call (or cut)
	sentAt        time.Duration    // when the wire call in flight was sent
	agentCall     uint64           // the agent's call the SDK layer is making
	sdkAnswer     fleetspec.Answer // the SDK layer's last answer
	cancelled     []uint64         // cancelled timers (layer in the top bit)
	tracer        Tracer
}

// bins tracks the peak of wire calls per 100 ms bin during and after the
// outage windows, streaming: calls are sent in time order. A fleet without
// outages has no peaks to track (runner.peaks false).
type bins struct {
	cur, n        int64
	during, after int64
}

type runner struct {
	cfg      fleetspec.Config
	opt      Options
	q        queue
	now      time.Duration
	agents   []layerRT
	sdk      *layerRT
	cat      *catalog
	sessions []sess
	// sdkStates are the SDK layer's session states, by slot (with an SDK
	// layer), apart so that a session without one stays small.
	sdkStates []session.State
	free      []int32
	buf       session.Buffer
	// ev is the event a core is given: reused, each kind setting only the
	// fields it reads (Kind, At, Call, Reply, Timer); the others (ID,
	// Respond, Enabled, Switch, Settings, Error) are never set and stay
	// zero, as a shell that makes no command sends them.
	ev    session.Event
	fx    stepEffects // the effects of the step being performed
	stats []Stats     // per profile, then all
	bins  []bins      // per profile, then all
	peaks bool        // the fleet has outages: bins track their peaks
	prov  *fleetspec.Provider
	// fixedLat are the latency and the error latency when they are fixed
	// (drawn once, with no draw), else -1: a call's is drawn.
	fixedLat [2]time.Duration
	// arrivals
	arrived int
	arrRNG  rand.PCG
	credit  []float64 // smooth weighted round robin of the profiles
	// sessions ended and not yet added to opt.Progress; sessions added
	ended, reported int64
	// alone: the sessions run one at a time (runAlone), their events in
	// local, not q.
	alone bool
	local localQueue
	// together runs every session in the one queue even when they are
	// apart (the tests' check that both ways give the same result).
	together bool
	// replays: sessions run alone draw nothing (replaying), so that every
	// session of a profile does what the first did, shifted by its
	// arrival; memos holds that, by profile, and replayed counts the
	// sessions replayed (the tests').
	replays  bool
	memos    []sessionMemo
	replayed int
	// maxLive is the bound of the sessions alive at once
	// (MaxLiveSessions; tests lower it); err why the run stopped.
	maxLive int
	err     error
	ctx     context.Context // checked every ctxEvery arrivals
}

// ctxEvery is how many arrivals a run makes between two looks at its
// context: rarely enough to cost nothing, often enough to stop soon.
const ctxEvery = 1024

// LiveSessionsError is the error of a fleet that would keep more than
// MaxLiveSessions sessions alive at once: its arrivals outrun its
// sessions' ends (memory grows with the sessions alive).
type LiveSessionsError struct {
	Limit int
	At    time.Duration // the virtual time of the arrival over the bound
}

// Error says the bound, when the run passed it, and what to change.
func (e *LiveSessionsError) Error() string {
	return fmt.Sprintf("more than %d sessions alive at once at t=%v (about 2.5 KB each): lower rate or sessions, or shorten what a session does", e.Limit, e.At)
}

// runOne simulates the fleet cfg (valid, normalized; pol its settings
// compiled, Config.Compile) and returns its result: one group, cfg's,
// with seed cfg.Seed.
func runOne(ctx context.Context, cfg fleetspec.Config, pol *policy.Policy, opt Options) (*Result, error) {
	r, err := newRunner(cfg, pol, opt)
	if err != nil {
		return nil, err
	}
	r.ctx = ctx
	r.run()
	defer r.freeSlots()
	if r.err != nil {
		return nil, r.err
	}
	return r.result(), nil
}

// newRunner is the run of cfg (valid, normalized); settings is
// cfg.Settings compiled (Config.Compile), nil when cfg has none: the
// settings were checked once, when the plan was built.
func newRunner(cfg fleetspec.Config, settings *policy.Policy, opt Options) (*runner, error) {
	if (settings != nil) != (cfg.Settings != nil) {
		return nil, errors.New("fleet: a run's compiled settings do not match its configuration's (Config.Compile gives them)")
	}
	r := &runner{cfg: cfg, opt: opt, maxLive: fleetspec.MaxLiveSessions}
	if slots, ok := sessionSlots.Get().(*[]sess); ok {
		r.sessions = *slots // empty: arrive appends to it
	}
	var cls []*classify.Classifier
	add := func(name string, records uint32, own *policy.Policy) (layerRT, error) {
		p, err := policy.ProfileByName(name)
		if err != nil {
			return layerRT{}, err
		}
		pol := own
		if pol == nil {
			if pol, err = p.Policy(); err != nil {
				return layerRT{}, err
			}
		}
		// Profiles that share a classifier (the original's, nil, for most)
		// share its index: the catalog classifies each answer once for
		// them all.
		ci := slices.Index(cls, pol.Classifier())
		if ci < 0 {
			ci = len(cls)
			cls = append(cls, pol.Classifier())
		}
		conf := session.Config{CompactionEnabled: cfg.Compaction.Enabled, CompactionSucceeds: cfg.Compaction.Succeed,
			Provider: session.DefaultProvider, SessionID: session.DefaultSessionID, BaseURL: session.DefaultBaseURL,
			Model: session.DefaultModel, Profile: p.Name}
		l := layerRT{name: p.Name, pol: pol, cls: ci, jittered: pol.Jittered(),
			core:   session.Core{Variant: session.Sound, Config: conf, Records: records, Transitions: chainEnds},
			traced: session.Core{Variant: session.Sound, Config: conf}}
		return l, nil
	}
	for _, sh := range cfg.Profiles {
		l, err := add(sh.Profile, session.RecordMask(trace.Transition), settings)
		if err != nil {
			return nil, err
		}
		r.agents = append(r.agents, l)
	}
	if cfg.SDK != "" {
		l, err := add(cfg.SDK, session.RecordMask(trace.PromptResolved), nil)
		if err != nil {
			return nil, err
		}
		l.core.Config.CompactionEnabled = false
		r.sdk = &l
	}
	r.cat = newCatalog(cls)
	n := len(r.agents)
	if n > 1 {
		n++
	}
	r.stats = make([]Stats, n)
	r.bins = make([]bins, n)
	for i := range r.stats {
		r.stats[i].Profile = AllProfiles
		if i < len(r.agents) {
			r.stats[i].Profile = r.agents[i].name
		}
		r.bins[i].cur = -1
	}
	r.peaks = len(cfg.Outages) > 0
	r.credit = make([]float64, len(r.agents))
	r.prov = fleetspec.NewProvider(&r.cfg)
	r.arrRNG.Seed(uint64(cfg.Seed), 0x617272697665)
	r.buf.Effects = make([]session.Effect, 0, 16)
	for i, d := range []*fleetspec.Dist{&r.cfg.Latency, &r.cfg.ErrorLatency} {
		r.fixedLat[i] = -1
		if !d.Draws() {
			r.fixedLat[i] = d.DrawDuration(nil, minLatency) // (no draw: no generator)
		}
	}
	r.fx.r = r
	return r, nil
}

// mix64 is SplitMix64's finalizer.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// JitterSeed is the seed of session i's draws in a fleet of seed seed (a
// positive int64): a stable derivation, so that a session's draws do not
// depend on the order events are handled in.
func JitterSeed(seed int64, i int) int64 {
	v := int64(mix64(mix64(uint64(seed))+uint64(i)) >> 1)
	if v == 0 {
		v = 1
	}
	return v
}

// apart reports whether the run may simulate its sessions one at a time
// (runAlone): its sessions never meet. They meet only at the provider's
// capacity (a bucket or an in-flight bound shared by every call) and its
// outages (a cut answers the calls in flight at once, and the peaks are
// counted in time order); every other answer comes from the call's own
// prompt and draws. A traced run keeps the one time order its tracers see,
// and a fleet of more sessions than MaxLiveSessions the check of how many
// are alive at once.
func (r *runner) apart() bool {
	c := &r.cfg
	return c.Capacity.RPS == 0 && c.Capacity.MaxInFlight == 0 && len(c.Outages) == 0 && r.opt.Trace == nil &&
		c.Sessions <= r.maxLive
}

func (r *runner) run() {
	if r.alone = !r.together && r.apart(); r.alone {
		if r.replays = r.replaying(); r.replays {
			r.memos = make([]sessionMemo, len(r.agents))
		}
		r.runAlone()
	} else {
		r.runQueue()
	}
	if r.opt.Progress != nil {
		r.opt.Progress.Add(int64(r.cfg.Sessions) - r.reported)
	}
	for i := range r.bins {
		r.flush(i)
	}
	for i := range r.sessions {
		if s := &r.sessions[i]; s.active && s.inPrompt {
			s.stats.Waiting++
		}
	}
	if len(r.stats) > len(r.agents) {
		all := &r.stats[len(r.agents)]
		for i := range r.agents {
			st := r.stats[i]
			st.PeakDuring, st.PeakAfter = 0, 0 // the all row's own
			all.Merge(&st)
		}
	}
}

// runQueue is the discrete-event simulation of every session at once, in
// the time order of their events.
func (r *runner) runQueue() {
	for i, o := range r.cfg.Outages {
		if o.Cuts() {
			r.q.pushAt(event{at: o.Start, kind: evOutage, id: uint64(i)})
		}
	}
	r.q.pushAt(event{at: 0, kind: evArrive})
	var e event
	for r.q.len() > 0 {
		if h := r.cfg.Horizon; h > 0 && r.q.peek().at > h {
			r.now = h
			break
		}
		r.q.pop(&e)
		r.now = e.at
		switch e.kind {
		case evArrive:
			if next, ok := r.nextArrival(); ok {
				r.q.pushAt(event{at: next, kind: evArrive}) // a gap of its own: not a lane's
			}
			if r.arrive(); r.err != nil {
				return
			}
			continue
		case evOutage:
			r.cut(int(e.id))
			continue
		}
		if s := &r.sessions[e.slot]; s.active && s.gen == e.gen { // else a freed session's cancelled timer
			r.handle(s, &e)
		}
	}
}

// runAlone simulates the sessions one at a time, each to its end (or the
// horizon) before the next arrives: when they never meet (apart), each
// session's events are the same, in the same order, as in runQueue, and
// every count the result keeps is a sum, a maximum or a histogram of them,
// which the order of the sessions does not change. A session's events wait
// in a queue of its own (r.local), a few at a time.
//
// When the sessions draw nothing (r.replays), a session's events are a
// function of its profile alone, shifted by its arrival: the first
// session of each profile is simulated and what it counted kept (its
// sessionMemo), and the others that end before the horizon add the same
// counts at their own times, without being simulated (replay).
func (r *runner) runAlone() {
	h := r.cfg.Horizon
	at, more := time.Duration(0), r.cfg.Sessions > 0
	for more && (h <= 0 || at <= h) {
		r.now = at
		at, more = r.nextArrival()
		s := r.arrive()
		if r.err != nil {
			return
		}
		if s == nil { // replayed
			continue
		}
		var e event
		for q := &r.local; s.active; {
			if len(q.ev) == 1 { // pop's usual case, in line: the session waits on one call or timer
				e = q.ev[0]
				q.ev = q.ev[:0]
			} else if !q.pop(&e) {
				break
			}
			if h > 0 && e.at > h {
				break
			}
			r.now = e.at
			r.handle(s, &e) // (its own events: s is alive, and they are of its generation)
		}
		ended := !s.active
		cut := !ended && h > 0 && e.at > h // (e: the event the horizon left, else the last one handled)
		if !ended {                        // at the horizon, or with nothing left to happen: as runQueue leaves it
			if s.inPrompt {
				s.stats.Waiting++
			}
			r.release(s)
		}
		r.local.reset()
		if r.replays {
			if m := &r.memos[s.prof]; m.state == memoNone { // the session took it
				m.take(s.stats, r.now-s.arrival, cut, ended)
			}
		}
	}
}

// sessionMemo is what a session run alone counted, its times relative to
// its arrival (runAlone, with r.replays): its profile's first, whose
// counts are then its profile's alone.
type sessionMemo struct {
	state uint8
	// counts are its counters and its longest wait (Stats.addCounts; its
	// histogram and series are not read).
	counts Stats
	// sends are its wire calls' times; succeeded are the buckets of its
	// times to success, with their count and maximum.
	sends     []time.Duration
	succeeded []bucketCount
	succN     uint64
	succMax   time.Duration
	span      time.Duration // its last event's time
	ended     bool          // it ended (Options.Progress counts it), rather than waited with nothing to happen
}

// bucketCount is a histogram bucket's count.
type bucketCount struct {
	bucket int
	n      uint64
}

// The states of a sessionMemo.
const (
	memoNone  uint8 = iota // not taken: the profile's next session takes it
	memoTaken              // taken: the profile's sessions replay it
	memoNot                // its session was cut by the horizon (or did not take it): the profile's sessions are simulated
)

// memoTracer takes the times of the wire calls of the session whose memo
// is taken: a Tracer's Call comes with each answer.
type memoTracer struct {
	r *runner
	s *sess
	m *sessionMemo
}

func (t *memoTracer) Record(*trace.Record) {}
func (t *memoTracer) Call(_ policy.AssistantMessage, latency time.Duration) {
	t.m.sends = append(t.m.sends, t.r.now-latency-t.s.arrival)
}

// take makes m the memo of a profile's first session, whose counts st
// holds (its profile's: the session's own); span is its last event's
// time, cut whether the horizon cut it, ended whether it ended. A session
// cut by the horizon, or one of whose wire calls was not answered, is not
// replayed.
func (m *sessionMemo) take(st *Stats, span time.Duration, cut, ended bool) {
	m.state = memoNot
	if cut || st.Sessions != 1 || int64(len(m.sends)) != st.WireCalls {
		return
	}
	m.state, m.span, m.ended = memoTaken, span, ended
	m.counts = *st
	m.counts.Sessions = 0 // (replay counts it)
	h := &st.TimeToSuccess
	for b, n := range h.Counts {
		if n != 0 {
			m.succeeded = append(m.succeeded, bucketCount{b, n})
		}
	}
	m.succN, m.succMax = h.N, h.Max
}

// fits reports whether a session arriving at t replays m: its events are
// not past the horizon h (0: none) nor past the largest time.
func (m *sessionMemo) fits(t, h time.Duration) bool {
	if m.span >= math.MaxInt64-t {
		return false
	}
	return h <= 0 || t+m.span <= h
}

// replaying reports whether sessions run alone replay the first of their
// profile (runner.replays): none of them draws (every distribution of a
// session is fixed, the think time when there is a second prompt, the
// provider has no error rates, no layer jitters), so that a session's
// events are those of any other of its profile, shifted by its arrival.
func (r *runner) replaying() bool {
	c := &r.cfg
	if r.prov.Draws() || c.Calls.Draws() || (c.Prompts > 1 && c.Think.Draws()) || c.Latency.Draws() || c.ErrorLatency.Draws() {
		return false
	}
	if r.sdk != nil && r.sdk.jittered {
		return false
	}
	for i := range r.agents {
		if r.agents[i].jittered {
			return false
		}
	}
	return true
}

// replay counts a session of profile p arriving now as its memo says,
// when the memo is taken and the session ends before the horizon; it
// reports whether it did.
func (r *runner) replay(p int) bool {
	m := &r.memos[p]
	if m.state != memoTaken || !m.fits(r.now, r.cfg.Horizon) {
		return false
	}
	st := &r.stats[p]
	st.Sessions++
	st.addCounts(&m.counts)
	ws, w := &st.WireSeries, st.WireSeries.BinWidth()
	for _, d := range m.sends {
		if at := r.now + d; at/w < SeriesBins {
			ws.Counts[at/w]++
		} else {
			ws.Add(at)
			w = ws.BinWidth()
		}
	}
	if m.succN != 0 {
		h := &st.TimeToSuccess
		for _, b := range m.succeeded {
			h.Counts[b.bucket] += b.n
		}
		h.N += m.succN
		h.Max = max(h.Max, m.succMax)
	}
	if m.ended {
		r.countEnded()
	}
	r.replayed++
	return true
}

// handle handles queue event e of live session s (its slot's, of its
// generation).
func (r *runner) handle(s *sess, e *event) {
	switch e.kind {
	case evPrompt:
		s.live--
		r.prompt(s)
	case evReply:
		if e.wire != s.wireSeq {
			break // a call cut by an outage: its answer came at the cut
		}
		s.live--
		r.answer(s, e.layer, e.id)
	case evTimer:
		if r.dropCancelled(s, e.layer, e.id) {
			break
		}
		s.live--
		r.ev.Kind, r.ev.Timer = session.TimerFired, session.Timer{Kind: session.TimerKind(e.timer), ID: e.id}
		r.step(s, e.layer)
	}
	r.settle(s)
}

// schedule schedules e d after now: in the run's queue, or in the
// session's own when sessions run alone.
func (r *runner) schedule(d time.Duration, e *event) {
	if r.alone {
		r.local.push(r.now, d, e)
		return
	}
	r.q.pushAfter(r.now, d, e)
}

// nextArrival is when the session after the one arriving now arrives (r.now
// being its arrival); ok is false when it is the last.
func (r *runner) nextArrival() (at time.Duration, ok bool) {
	if r.arrived+1 >= r.cfg.Sessions {
		return 0, false
	}
	if r.cfg.Rate > 0 {
		return after(r.now, time.Duration(-math.Log(1-fleetspec.Float01(&r.arrRNG))/r.cfg.Rate*float64(time.Second))), true
	}
	return r.now, true
}

// arrive starts the next session (the one after is scheduled by the
// caller, nextArrival) and returns it; nil when the run must stop (r.err),
// or when the session was replayed (runAlone, replayed).
func (r *runner) arrive() *sess {
	i := r.arrived
	r.arrived++
	if i%ctxEvery == 0 && r.ctx != nil {
		if r.err = r.ctx.Err(); r.err != nil {
			return nil
		}
	}
	// the profile: smooth weighted round robin over the shares
	best := 0
	for p := range r.credit {
		r.credit[p] += r.cfg.Profiles[p].Percent
		if r.credit[p] > r.credit[best] {
			best = p
		}
	}
	r.credit[best] -= 100
	if r.replays && r.replay(best) {
		return nil
	}
	var slot int32
	if n := len(r.free); n > 0 {
		slot = r.free[n-1]
		r.free = r.free[:n-1]
	} else {
		if len(r.sessions) >= r.maxLive {
			r.err = &LiveSessionsError{Limit: r.maxLive, At: r.now}
			return nil
		}
		r.sessions = append(r.sessions, sess{})
		slot = int32(len(r.sessions) - 1)
		if r.sdk != nil {
			r.sdkStates = append(r.sdkStates, session.State{})
		}
	}
	if r.sdk != nil {
		r.sdkStates[slot] = session.Initial()
	}
	s := &r.sessions[slot]
	gen, cancelled := s.gen, s.cancelled[:0]
	*s = sess{}                         // cleared in place, then its own fields set
	s.st.Retry.State = policy.StateIdle // session.Initial()
	s.index, s.slot, s.gen, s.prof, s.promptsLeft, s.arrival, s.cancelled, s.active = i, slot, gen, int32(best), r.cfg.Prompts, r.now, cancelled, true
	s.agent, s.stats = &r.agents[best], &r.stats[best]
	js := JitterSeed(r.cfg.Seed, i)
	s.jitter.Seed(uint64(js), 0)
	s.model.Seed(uint64(js), 0x6d6f64656c)
	r.stats[best].Sessions++
	if r.opt.Trace != nil {
		s.tracer = r.opt.Trace(SessionInfo{Index: i, Profile: r.agents[best].name, Arrival: r.now, JitterSeed: js})
	} else if r.replays && r.memos[best].state == memoNone { // the profile's first session: its memo is taken (its wire calls' times)
		s.tracer = &memoTracer{r: r, s: s, m: &r.memos[best]}
	}
	r.prompt(s)
	r.settle(s)
	return s
}

// prompt issues s's next prompt.
func (r *runner) prompt(s *sess) {
	s.inPrompt = true
	s.promptsLeft--
	s.promptAt = r.now
	s.prompt = fleetspec.Prompt{Remaining: r.cfg.Calls.DrawCount(&s.model)}
	s.afterError = false
	s.stats.Prompts++
	r.ev.Kind = session.Prompt
	r.step(s, layerAgent)
}

// settle ends a queue event of s: the SDK layer's prompt resolves (its
// answer goes to the agent), then the agent's; a prompt whose session has
// nothing left to do is done.
//
// A core is only given the Settle when it would do something
// (session.Core.Settles): otherwise the step is empty.
func (r *runner) settle(s *sess) {
	if r.sdk != nil && r.sdk.core.Settles(&r.sdkStates[s.slot]) {
		s.sdkResolved = false
		r.ev.Kind = session.Settle
		r.step(s, layerSDK)
		if s.sdkResolved {
			r.deliver(s, &s.sdkAnswer, s.agentCall)
		}
	}
	if s.agent.core.Settles(&s.st) {
		r.ev.Kind = session.Settle
		r.step(s, layerAgent)
	}
	if !s.inPrompt || s.live != 0 || s.st.Pending != 0 || s.st.Run.Kind != session.NoRun {
		return
	}
	s.inPrompt = false
	st := s.stats
	if s.lastOK {
		st.Succeeded++
		st.TimeToSuccess.Add(r.now - s.promptAt)
	} else {
		st.Failed++
	}
	if s.promptsLeft > 0 {
		s.live++
		r.schedule(r.cfg.Think.DrawDuration(&s.model, 0), &event{kind: evPrompt, slot: s.slot, gen: s.gen})
		return
	}
	r.release(s)
	r.countEnded()
}

// countEnded counts a session ended in Options.Progress, in batches.
func (r *runner) countEnded() {
	if r.opt.Progress != nil {
		if r.ended++; r.ended == progressBatch {
			r.opt.Progress.Add(r.ended)
			r.reported += r.ended
			r.ended = 0
		}
	}
}

// release frees s's slot: its events still queued are stale.
func (r *runner) release(s *sess) {
	s.active = false
	s.gen++
	s.tracer = nil
	r.free = append(r.free, s.slot)
}
