package fleet

import (
	"slices"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// A run's steps of the session cores and the wire calls they make: the
// effects a core asks for, the provider's answers, the counts kept of them.

// step steps s's core of layer with r.ev now and performs its effects. A
// model call is a step's last effect.
func (r *runner) step(s *sess, layer uint8) { r.stepWith(s, layer, &r.ev) }

// stepWith is step with event ev (r.ev, or a reply's from the catalog).
func (r *runner) stepWith(s *sess, layer uint8, ev *session.Event) {
	ev.At = r.now
	r.buf.Effects = r.buf.Effects[:0]
	var fx []session.Effect
	if layer == layerAgent {
		l := s.agent
		core := &l.core
		if s.tracer != nil {
			core = &l.traced
		}
		fx = core.Apply(&s.st, l.pol, ev, &r.buf)
	} else {
		fx = r.sdk.core.Apply(&r.sdkStates[s.slot], r.sdk.pol, ev, &r.buf)
	}
	if r.fx.s != s { // (sessions run alone: once a session)
		r.fx.s = s
	}
	r.fx.layer, r.fx.call = layer, 0 // r.fx.r is r, set once
	session.Perform(fx, &r.fx)
	call := r.fx.call
	if call == 0 {
		return
	}
	if layer == layerSDK {
		r.send(s, layerSDK, call)
		return
	}
	s.stats.Calls++
	if r.sdk == nil {
		r.send(s, layerAgent, call)
		return
	}
	s.agentCall = call
	r.ev.Kind = session.Prompt
	r.step(s, layerSDK)
}

// stepEffects is the session.Shell of one step's effects: session s's
// core of layer. A fleet session gets no set_auto_retry,
// set_retry_settings or set_auto_compaction: their effects never occur.
type stepEffects struct {
	r     *runner
	s     *sess
	layer uint8
	call  uint64 // the model call asked for, made once the effects are performed
}

func (e *stepEffects) Record(rec *trace.Record) { e.r.record(e.s, e.layer, rec) }
func (e *stepEffects) Arm(t session.Timer) {
	r, s := e.r, e.s
	s.live++
	r.schedule(t.Delay, &event{kind: evTimer, layer: e.layer, timer: uint8(t.Kind), id: t.ID, slot: s.slot, gen: s.gen})
	if t.Kind == session.BackoffTimer {
		st := s.stats
		st.LongestWait = max(st.LongestWait, t.Delay)
	}
}
func (e *stepEffects) Cancel(t session.Timer) {
	e.s.live--
	e.s.cancelled = append(e.s.cancelled, uint64(e.layer)<<63|t.ID)
}
func (e *stepEffects) SetEnabled(bool) { panic("fleet: a session got set_auto_retry") }
func (e *stepEffects) SetSettings(*policy.Policy) {
	panic("fleet: a session got set_retry_settings")
}
func (e *stepEffects) SetCompaction(bool) { panic("fleet: a session got set_auto_compaction") }
func (e *stepEffects) Call(id uint64)     { e.call = id }

// record takes a record of s's core of layer.
func (r *runner) record(s *sess, layer uint8, rec *trace.Record) {
	if layer == layerSDK {
		if rec.Type == trace.PromptResolved {
			s.sdkResolved = true
		}
		return
	}
	if rec.Type == trace.Transition && rec.Edge.Rule >= 0 && rec.Edge.Rule < len(ruleEnds) {
		st := s.stats
		switch ruleEnds[rec.Edge.Rule] {
		case endSuccess:
			st.ChainsSucceeded++
		case endExhausted:
			st.ChainsExhausted++
		case endFailFast:
			st.ChainsFailFast++
		case endOther:
			st.ChainsOther++
		}
	}
	if s.tracer != nil {
		rec.T -= s.arrival
		s.tracer.Record(rec)
		rec.T += s.arrival
	}
}

// dropCancelled reports whether timer id of layer was cancelled, and
// forgets it.
func (r *runner) dropCancelled(s *sess, layer uint8, id uint64) bool {
	key := uint64(layer)<<63 | id
	for i, c := range s.cancelled {
		if c == key {
			s.cancelled = append(s.cancelled[:i], s.cancelled[i+1:]...)
			return true
		}
	}
	return false
}

// send sends s's wire call (call of layer's core) to the provider.
func (r *runner) send(s *sess, layer uint8, call uint64) {
	st := s.stats
	st.WireCalls++
	// (Series.Add's common case, in line: sessions run alone send out of
	// time order, so the bin of the call before is rarely this one's.)
	if ws, w := &st.WireSeries, st.WireSeries.BinWidth(); r.now/w < SeriesBins {
		ws.Counts[r.now/w]++
	} else {
		ws.Add(r.now)
	}
	if s.afterError && r.now < s.window {
		st.InRetryAfter++
	}
	if r.peaks {
		r.count(int(s.prof))
		if len(r.bins) > len(r.agents) {
			r.count(len(r.agents))
		}
	}
	var over bool
	s.wire, s.wireAdmitted, over = r.prov.Request(r.now, &s.prompt, &s.model)
	if over {
		st.Rejected++
	}
	i := 0 // the latency's, else the error latency's
	if s.wire.Kind != fleetspec.KindNone {
		i = 1
	}
	d := r.fixedLat[i]
	if d < 0 {
		lat := &r.cfg.Latency
		if i == 1 {
			lat = &r.cfg.ErrorLatency
		}
		d = lat.DrawDuration(&s.model, minLatency)
	}
	s.wireLayer, s.wireCall, s.sentAt = layer, call, r.now
	s.wireSeq++
	s.live++
	e := event{kind: evReply, layer: layer, id: call, slot: s.slot, gen: s.gen, wire: s.wireSeq}
	switch {
	case r.alone:
		r.local.push(r.now, d, &e)
	case r.fixedLat[i] < 0:
		// A drawn latency is a delay of its own: the heap's, not a lane's
		// (a lane would hold it alone, and take the lane from a delay
		// that repeats).
		e.at = after(r.now, d)
		r.q.pushAt(e)
	default:
		r.q.pushAfter(r.now, d, &e)
	}
}

// cut answers every admitted call in flight with outage window i's error,
// now: each answer is a queue event of its session, in the order of the
// sessions' slots.
func (r *runner) cut(i int) {
	a := r.prov.Cut(i)
	for i := range r.sessions {
		s := &r.sessions[i]
		if !s.active || s.wireCall == 0 || !s.wireAdmitted {
			continue
		}
		r.prov.Release()
		s.wire, s.wireAdmitted = a, false
		s.wireSeq++ // the answer scheduled at the send is stale
		r.q.pushAfter(r.now, 0, &event{kind: evReply, layer: s.wireLayer, id: s.wireCall, slot: s.slot, gen: s.gen, wire: s.wireSeq})
	}
}

// answer handles the answer to s's wire call call of layer.
func (r *runner) answer(s *sess, layer uint8, call uint64) {
	if layer != s.wireLayer || call != s.wireCall {
		return
	}
	a := &s.wire // (not changed before the next send)
	s.wireCall = 0
	if s.wireAdmitted {
		r.prov.Release()
	}
	if s.tracer != nil {
		s.tracer.Call(r.cat.entry(*a).msg, r.now-s.sentAt)
	}
	if a.Hinted() {
		s.window = after(r.now, time.Duration(a.RetryAfter)*time.Second)
	}
	s.afterError = a.Kind != fleetspec.KindNone
	if layer == layerAgent {
		r.deliver(s, a, call)
		return
	}
	l := r.sdk
	r.ev.Kind, r.ev.Call = session.Reply, call
	r.ev.Reply = *r.cat.outcome(a, l.cls)
	if r.ev.Reply.IsSuccess() {
		r.ev.Reply.StopReason = policy.StopReasonStop // the tool loop is the agent's
	}
	if r.ev.Reply.Class == classify.ClassRetryable && l.jittered {
		r.ev.Reply.Draw = fleetspec.Float01(&s.model)
	}
	s.sdkAnswer = *a
	r.step(s, layerSDK)
}

// deliver gives answer a to the agent's call call.
func (r *runner) deliver(s *sess, a *fleetspec.Answer, call uint64) {
	l := s.agent
	ev := r.cat.event(a, l.cls) // the reply's event, not copied
	if ev.Reply.Class == classify.ClassRetryable && l.jittered {
		// A draw of its own: the reply in r.ev.
		r.ev.Kind = session.Reply
		r.ev.Reply = ev.Reply // a statement of its own: copied once, not through a temporary
		r.ev.Reply.Draw = fleetspec.Float01(&s.jitter)
		ev = &r.ev
	}
	ev.Call = call
	s.lastOK = ev.Reply.IsSuccess()
	r.stepWith(s, layerAgent, ev)
}

// count counts a wire call now in bin tracker i.
func (r *runner) count(i int) {
	b := &r.bins[i]
	bin := int64(r.now / binWidth)
	if bin != b.cur {
		r.flush(i)
		b.cur, b.n = bin, 0
	}
	b.n++
}

// flush takes tracker i's current bin into its peaks.
func (r *runner) flush(i int) {
	b := &r.bins[i]
	if b.cur < 0 || b.n == 0 {
		return
	}
	start := time.Duration(b.cur) * binWidth
	for _, o := range r.cfg.Outages {
		switch {
		case start >= o.Start && start < o.End():
			b.during = max(b.during, b.n)
		case start >= o.End() && start < o.End()+r.cfg.Recovery:
			b.after = max(b.after, b.n)
		}
	}
	b.n = 0
}

// result is the run's Result.
func (r *runner) result() *Result {
	g := Group{Fleet: r.cfg.Name, Mix: r.cfg.Profiles.String(), SDK: r.cfg.SDK, Seeds: []int64{r.cfg.Seed},
		CapacityPer100ms: capacityPer100ms(&r.cfg), Outages: slices.Clone(r.cfg.Outages), Profiles: r.stats}
	for i := range g.Profiles {
		g.Profiles[i].PeakDuring, g.Profiles[i].PeakAfter = r.bins[i].during, r.bins[i].after
		g.Profiles[i].Spread = spreadOf(&g.Profiles[i])
	}
	return &Result{Groups: []Group{g}}
}

// capacityPer100ms is c's provider capacity per 100 ms: the bucket's
// rate, else the in-flight bound over the mean call latency; 0 unlimited.
func capacityPer100ms(c *fleetspec.Config) float64 {
	switch {
	case c.Capacity.RPS > 0:
		return c.Capacity.RPS / 10
	case c.Capacity.MaxInFlight > 0 && c.Latency.Mean() > 0:
		return float64(c.Capacity.MaxInFlight) / (c.Latency.Mean() / float64(time.Second)) / 10
	}
	return 0
}
