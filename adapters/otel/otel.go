// Package otel records retry chains with the OpenTelemetry Go API
// (go.opentelemetry.io/otel): metrics for dashboards and a span per chain.
// It subscribes to a policy.Controller (Observe) or to retryfsm.Do (Option).
//
// Its name is OpenTelemetry's, so import it under another name:
//
//	import retryotel "github.com/ohmypi/retryfsm/adapters/otel"
//
//	rec, err := retryotel.New() // the global MeterProvider and TracerProvider
//	stop := rec.Observe(ctx, ctl, retryotel.Labels{Provider: "anthropic", Model: "claude-sonnet-4-5", Profile: "default"})
//	defer stop()
//
//	msg, err := retryfsm.Do(ctx, pol, call, rec.Option(labels))
//
// # Metrics
//
// Names and units follow OpenTelemetry's conventions (a retryfsm. namespace,
// dot-separated, units in UCUM, no unit or _total in the name):
//
//   - retryfsm.retry.retries (counter, {retry}): one per retry scheduled
//     (auto_retry_start);
//   - retryfsm.retry.delay (histogram, s): each retry's wait, in seconds
//     as OpenTelemetry's semantic conventions measure durations;
//   - retryfsm.retry.chains (counter, {chain}): one per chain that ended,
//     with retryfsm.chain.outcome (success, cancelled, exhausted) and,
//     when it gave up, retryfsm.chain.reason (max_retries,
//     non_retryable, disabled, no_message, continue_failed, max_wait);
//   - retryfsm.retry.backoff.active (up-down counter, {chain}): the chains
//     waiting in a backoff now;
//   - retryfsm.retry.attempts (counter, {attempt}) and
//     retryfsm.retry.backoff.duration (histogram, ms): the first two
//     again under their first names, kept for the dashboards built on them
//     (the counter counts retries, not attempts, whatever its name says).
//
// Every measurement has the Labels given: gen_ai.provider.name and
// gen_ai.request.model (OpenTelemetry's GenAI attributes; the model
// follows a retry_fallback) and retryfsm.profile; a label left empty is
// left out.
//
// # Spans
//
// A chain is a span named "retryfsm.chain", a child of the span in the
// ctx given to Observe (or Do's ctx), with the labels as attributes, an
// event "retry" per attempt (retryfsm.retry.attempt,
// retryfsm.retry.delay_ms, retryfsm.retry.error) and "fallback" per
// retry_fallback (retryfsm.fallback.from, .to). It ends with the chain,
// with the outcome and reason attributes, and status Error unless it
// succeeded. A chain that ends at once (maxRetries 0, a fail-fast) is a
// span with no event.
//
// Package policy does not import OpenTelemetry (a test checks it): only a
// program that imports this package builds it.
package otel

import (
	"context"
	"errors"
	"sync"

	otelapi "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ohmypi/retryfsm"
	"github.com/ohmypi/retryfsm/fsm"
	"github.com/ohmypi/retryfsm/policy"
)

// ScopeName is the instrumentation scope of the Meter and Tracer.
const ScopeName = "github.com/ohmypi/retryfsm/adapters/otel"

// Attribute keys.
const (
	AttrProvider = attribute.Key("gen_ai.provider.name")
	AttrModel    = attribute.Key("gen_ai.request.model")
	AttrProfile  = attribute.Key("retryfsm.profile")
	AttrOutcome  = attribute.Key("retryfsm.chain.outcome")
	AttrReason   = attribute.Key("retryfsm.chain.reason")
	AttrAttempt  = attribute.Key("retryfsm.retry.attempt")
	AttrDelayMs  = attribute.Key("retryfsm.retry.delay_ms")
	AttrError    = attribute.Key("retryfsm.retry.error")
)

// Outcomes of a chain (AttrOutcome).
const (
	OutcomeSuccess   = "success"
	OutcomeCancelled = "cancelled"
	OutcomeExhausted = "exhausted"
)

// Labels are the attributes of a Controller's measurements and spans.
type Labels struct {
	Provider string // e.g. "anthropic", "openai"
	Model    string // the model first called (a fallback changes it)
	Profile  string // the retry profile's name, e.g. "default"
}

// Option configures New.
type Option func(*config)

type config struct {
	mp metric.MeterProvider
	tp trace.TracerProvider
}

// WithMeterProvider records metrics with mp (default: the global one,
// otel.GetMeterProvider()).
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithTracerProvider records spans with tp (default: the global one,
// otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// Recorder holds the instruments. It is safe for concurrent use; one
// Recorder serves any number of Controllers.
type Recorder struct {
	tracer    trace.Tracer
	retries   metric.Int64Counter
	delays    metric.Float64Histogram // seconds
	attempts  metric.Int64Counter     // retries, under their first name
	waits     metric.Float64Histogram // milliseconds, under their first name
	chains    metric.Int64Counter
	inBackoff metric.Int64UpDownCounter
}

// New returns a Recorder with its instruments created.
func New(opts ...Option) (*Recorder, error) {
	c := config{}
	for _, o := range opts {
		o(&c)
	}
	if c.mp == nil {
		c.mp = otelapi.GetMeterProvider()
	}
	if c.tp == nil {
		c.tp = otelapi.GetTracerProvider()
	}
	m := c.mp.Meter(ScopeName)
	r := &Recorder{tracer: c.tp.Tracer(ScopeName)}
	var err, e error
	r.retries, e = m.Int64Counter("retryfsm.retry.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("Retries scheduled (auto_retry_start events)."))
	err = errors.Join(err, e)
	r.delays, e = m.Float64Histogram("retryfsm.retry.delay", metric.WithUnit("s"),
		metric.WithDescription("The wait before each retry."),
		metric.WithExplicitBucketBoundaries(0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 300))
	err = errors.Join(err, e)
	r.attempts, e = m.Int64Counter("retryfsm.retry.attempts", metric.WithUnit("{attempt}"),
		metric.WithDescription("Retries scheduled (auto_retry_start events); retryfsm.retry.retries under its first name."))
	err = errors.Join(err, e)
	r.waits, e = m.Float64Histogram("retryfsm.retry.backoff.duration", metric.WithUnit("ms"),
		metric.WithDescription("The wait before each retry (auto_retry_start delayMs); retryfsm.retry.delay in milliseconds, under its first name."))
	err = errors.Join(err, e)
	r.chains, e = m.Int64Counter("retryfsm.retry.chains", metric.WithUnit("{chain}"),
		metric.WithDescription("Retry chains ended, by outcome and reason."))
	err = errors.Join(err, e)
	r.inBackoff, e = m.Int64UpDownCounter("retryfsm.retry.backoff.active", metric.WithUnit("{chain}"),
		metric.WithDescription("Retry chains waiting in a backoff."))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Observe records the chains of ctl, with labels l, until stop is called;
// their spans are children of ctx's span. stop ends an open chain's span
// (without an outcome) and takes it out of the backoff count.
func (r *Recorder) Observe(ctx context.Context, ctl *policy.Controller, l Labels) (stop func()) {
	o := &observer{r: r, ctx: ctx, labels: l, model: l.Model}
	unsub := ctl.Subscribe(o.event)
	unobs := ctl.OnTransition(o.edge)
	unend := ctl.OnChainEnd(o.end)
	return func() {
		unsub()
		unobs()
		unend()
		o.close()
	}
}

// Option is the retryfsm.Do option that records Do's chain with labels l.
func (r *Recorder) Option(l Labels) retryfsm.Option {
	return retryfsm.WithController(func(ctx context.Context, c *policy.Controller) func() {
		return r.Observe(ctx, c, l)
	})
}

// observer records one Controller's chains.
type observer struct {
	r      *Recorder
	ctx    context.Context
	labels Labels

	mu        sync.Mutex
	model     string     // the model now (a fallback changes it)
	span      trace.Span // the open chain's, or nil
	inBackoff bool
}

// attrs returns the labels as attributes, with extra. o.mu is held.
func (o *observer) attrs(extra ...attribute.KeyValue) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 3+len(extra))
	if o.labels.Provider != "" {
		kv = append(kv, AttrProvider.String(o.labels.Provider))
	}
	if o.model != "" {
		kv = append(kv, AttrModel.String(o.model))
	}
	if o.labels.Profile != "" {
		kv = append(kv, AttrProfile.String(o.labels.Profile))
	}
	return append(kv, extra...)
}

// startSpan opens the chain's span if none is open. o.mu is held.
func (o *observer) startSpan() {
	if o.span == nil {
		_, o.span = o.r.tracer.Start(o.ctx, "retryfsm.chain", trace.WithAttributes(o.attrs()...))
	}
}

func (o *observer) event(e policy.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e := e.(type) {
	case policy.AutoRetryStart:
		o.startSpan()
		set := metric.WithAttributes(o.attrs()...)
		o.r.retries.Add(o.ctx, 1, set)
		o.r.delays.Record(o.ctx, e.DelayMs/1000, set)
		o.r.attempts.Add(o.ctx, 1, set)
		o.r.waits.Record(o.ctx, e.DelayMs, set)
		o.span.AddEvent("retry", trace.WithAttributes(AttrAttempt.Int(e.Attempt), AttrDelayMs.Float64(e.DelayMs), AttrError.String(e.ErrorMessage)))
	case policy.RetryFallback:
		o.startSpan()
		o.span.AddEvent("fallback", trace.WithAttributes(attribute.String("retryfsm.fallback.from", e.From), attribute.String("retryfsm.fallback.to", e.To)))
		o.model = e.To
	}
}

// edge counts the chains in backoff: in on an edge into the backoff
// state, out on an edge out of it.
func (o *observer) edge(e fsm.Edge) {
	backoff := string(policy.StateBackoff)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case e.To == backoff && !o.inBackoff:
		o.inBackoff = true
		o.r.inBackoff.Add(o.ctx, 1, metric.WithAttributes(o.attrs()...))
	case e.To != backoff && o.inBackoff:
		o.inBackoff = false
		o.r.inBackoff.Add(o.ctx, -1, metric.WithAttributes(o.attrs()...))
	}
}

// end counts the chain's outcome and ends its span.
func (o *observer) end(ev policy.AutoRetryEnd, err error) {
	outcome := []attribute.KeyValue{AttrOutcome.String(OutcomeSuccess)}
	var ex *policy.ExhaustedError
	switch {
	case errors.As(err, &ex):
		outcome = []attribute.KeyValue{AttrOutcome.String(OutcomeExhausted), AttrReason.String(string(ex.Reason))}
	case err != nil:
		outcome = []attribute.KeyValue{AttrOutcome.String(OutcomeCancelled)}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.r.chains.Add(o.ctx, 1, metric.WithAttributes(o.attrs(outcome...)...))
	o.startSpan() // a chain that ended at once has none yet
	o.span.SetAttributes(append(outcome, AttrAttempt.Int(ev.Attempt))...)
	if !ev.Success {
		o.span.SetStatus(codes.Error, ev.FinalError)
	}
	o.span.End()
	o.span = nil
	o.model = o.labels.Model
}

// close ends an open span and leaves the backoff count.
func (o *observer) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.inBackoff {
		o.inBackoff = false
		o.r.inBackoff.Add(o.ctx, -1, metric.WithAttributes(o.attrs()...))
	}
	if o.span != nil {
		o.span.End()
		o.span = nil
	}
}
