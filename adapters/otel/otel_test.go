package otel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ohmypi/retryfsm"
	retryotel "github.com/ohmypi/retryfsm/adapters/otel"
	"github.com/ohmypi/retryfsm/policy"
)

// sdk is an in-memory OpenTelemetry SDK: a manual metric reader and a span
// recorder.
type sdk struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	rec    *retryotel.Recorder
}

func newSDK(t *testing.T) *sdk {
	t.Helper()
	s := &sdk{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()); _ = tp.Shutdown(context.Background()) })
	rec, err := retryotel.New(retryotel.WithMeterProvider(mp), retryotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	s.rec = rec
	return s
}

// point is one data point: its attributes (as a set) and value.
type point struct {
	attrs attribute.Set
	value float64 // a sum's value, a histogram's sum
	count uint64  // a histogram's count
}

// metrics collects the metrics by name.
func (s *sdk) metrics(t *testing.T) map[string][]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string][]point{}
	units := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != retryotel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, retryotel.ScopeName)
		}
		for _, m := range sm.Metrics {
			units[m.Name] = m.Unit
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{attrs: p.Attributes, value: float64(p.Value)})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out[m.Name] = append(out[m.Name], point{attrs: p.Attributes, value: p.Sum, count: p.Count})
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	for name, want := range map[string]string{
		"retryfsm.retry.attempts": "{attempt}", "retryfsm.retry.backoff.duration": "ms",
		"retryfsm.retry.retries": "{retry}", "retryfsm.retry.delay": "s",
		"retryfsm.retry.chains": "{chain}", "retryfsm.retry.backoff.active": "{chain}",
	} {
		if u, ok := units[name]; ok && u != want {
			t.Errorf("%s: unit %q, want %q", name, u, want)
		}
	}
	return out
}

// find returns the value of the point of name whose attributes include kv.
func find(t *testing.T, m map[string][]point, name string, kv ...attribute.KeyValue) point {
	t.Helper()
	for _, p := range m[name] {
		ok := true
		for _, want := range kv {
			if v, has := p.attrs.Value(want.Key); !has || v != want.Value {
				ok = false
			}
		}
		if ok {
			return p
		}
	}
	t.Errorf("%s: no point with %v in %v", name, kv, m[name])
	return point{}
}

var labels = retryotel.Labels{Provider: "anthropic", Model: "claude-sonnet-4-5", Profile: "default"}

var overloaded = errors.New("529 overloaded_error: Overloaded")

// failing returns a call that fails n times with a 529, then returns "ok".
func failing(n int) func(context.Context) (string, error) {
	calls := 0
	return func(context.Context) (string, error) {
		calls++
		if calls <= n {
			return "", overloaded
		}
		return "ok", nil
	}
}

// TestRecorderDo: Do's chain of two 529s and a success, then a chain that
// gives up (four 529s), then one cancelled in its backoff: the attempts
// counter, the waits histogram (2 s, 4 s...), the chains by outcome and
// reason, the backoff gauge back to 0, and a span per chain with an event
// per attempt and status Error unless it succeeded.
func TestRecorderDo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		ctx := context.Background()
		v, err := retryfsm.Do(ctx, policy.DefaultPolicy(), failing(2), s.rec.Option(labels))
		if err != nil || v != "ok" {
			t.Fatalf("Do = %q, %v", v, err)
		}
		// During a backoff, the gauge says 1.
		inBackoff := make(chan float64, 1)
		_, err = retryfsm.Do(ctx, policy.DefaultPolicy(), failing(10), s.rec.Option(labels),
			retryfsm.OnEvent(func(e policy.Event) {
				if st, ok := e.(policy.AutoRetryStart); ok && st.Attempt == 1 {
					go func() {
						time.Sleep(time.Second) // in the 2 s wait
						inBackoff <- find(t, s.metrics(t), "retryfsm.retry.backoff.active", retryotel.AttrModel.String(labels.Model)).value
					}()
				}
			}))
		var ex *policy.ExhaustedError
		if !errors.As(err, &ex) || ex.Reason != policy.ReasonMaxRetries {
			t.Fatalf("Do = %v, want max_retries", err)
		}
		if g := <-inBackoff; g != 1 {
			t.Errorf("in a backoff, retryfsm.retry.backoff.active = %v, want 1", g)
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := retryfsm.Do(cctx, policy.DefaultPolicy(), failing(10), s.rec.Option(labels)); !errors.Is(err, policy.ErrRetryCancelled) {
			t.Fatalf("Do = %v, want cancelled", err)
		}

		m := s.metrics(t)
		lab := []attribute.KeyValue{retryotel.AttrProvider.String("anthropic"), retryotel.AttrModel.String("claude-sonnet-4-5"), retryotel.AttrProfile.String("default")}
		// Retries: 2 + 3 + 1.
		if p := find(t, m, "retryfsm.retry.attempts", lab...); p.value != 6 {
			t.Errorf("attempts = %v, want 6", p.value)
		}
		// Waits: 2+4, 2+4+8, 2 s.
		if p := find(t, m, "retryfsm.retry.backoff.duration", lab...); p.count != 6 || p.value != 22000 {
			t.Errorf("waits: %d, sum %v ms; want 6, 22000", p.count, p.value)
		}
		// The same under the names and unit of OpenTelemetry's conventions.
		if p := find(t, m, "retryfsm.retry.retries", lab...); p.value != 6 {
			t.Errorf("retries = %v, want 6", p.value)
		}
		if p := find(t, m, "retryfsm.retry.delay", lab...); p.count != 6 || p.value != 22 {
			t.Errorf("delays: %d, sum %v s; want 6, 22", p.count, p.value)
		}
		for _, c := range []struct {
			kv   []attribute.KeyValue
			want float64
		}{
			{[]attribute.KeyValue{retryotel.AttrOutcome.String("success")}, 1},
			{[]attribute.KeyValue{retryotel.AttrOutcome.String("exhausted"), retryotel.AttrReason.String("max_retries")}, 1},
			{[]attribute.KeyValue{retryotel.AttrOutcome.String("cancelled")}, 1},
		} {
			if p := find(t, m, "retryfsm.retry.chains", append(c.kv, lab...)...); p.value != c.want {
				t.Errorf("chains %v = %v, want %v", c.kv, p.value, c.want)
			}
		}
		if p := find(t, m, "retryfsm.retry.backoff.active", lab...); p.value != 0 {
			t.Errorf("backoff.active = %v at the end, want 0", p.value)
		}

		spans := s.spans.Ended()
		if len(spans) != 3 {
			t.Fatalf("%d spans, want 3", len(spans))
		}
		for i, want := range []struct {
			events int
			status codes.Code
			reason string
		}{{2, codes.Unset, ""}, {3, codes.Error, "max_retries"}, {1, codes.Error, ""}} {
			sp := spans[i]
			if sp.Name() != "retryfsm.chain" || len(sp.Events()) != want.events || sp.Status().Code != want.status {
				t.Errorf("span %d: %q, %d events, status %v; want retryfsm.chain, %d, %v", i, sp.Name(), len(sp.Events()), sp.Status().Code, want.events, want.status)
			}
			attrs := attribute.NewSet(sp.Attributes()...)
			if v, _ := attrs.Value(retryotel.AttrReason); v.AsString() != want.reason {
				t.Errorf("span %d: reason %q, want %q", i, v.AsString(), want.reason)
			}
			if v, _ := attrs.Value(retryotel.AttrProvider); v.AsString() != "anthropic" {
				t.Errorf("span %d: provider %q", i, v.AsString())
			}
			if ev := sp.Events(); len(ev) > 0 && ev[0].Name != "retry" {
				t.Errorf("span %d: event %q, want retry", i, ev[0].Name)
			}
		}
	})
}

// TestRecorderController: Observe on a Controller; a chain that ends at
// once (maxRetries 0) is a span with no event and a chain counted
// max_retries; stop unsubscribes (nothing recorded after it).
func TestRecorderController(t *testing.T) {
	s := newSDK(t)
	set := policy.DefaultSettings()
	set.MaxRetries = 0
	ctl, err := policy.NewController(policy.Config{Agent: noAgent{}, Settings: policy.NewSettingsStore(policy.MustCompile(set))})
	if err != nil {
		t.Fatal(err)
	}
	stop := s.rec.Observe(context.Background(), ctl, retryotel.Labels{Provider: "openai"})
	ctl.OnPrompt(context.Background())
	reply := policy.AssistantMessage{StopReason: policy.StopReasonError, ErrorMessage: "529 overloaded"}
	ctl.OnMessageEnd(reply)
	ctl.OnAgentEnd(&reply)
	stop()
	ctl.OnPrompt(context.Background())
	ctl.OnMessageEnd(reply)
	ctl.OnAgentEnd(&reply)

	m := s.metrics(t)
	if p := find(t, m, "retryfsm.retry.chains", retryotel.AttrProvider.String("openai"), retryotel.AttrReason.String("max_retries")); p.value != 1 {
		t.Errorf("chains = %v, want 1 (the second, after stop, not counted)", p.value)
	}
	if len(m["retryfsm.retry.attempts"]) != 0 {
		t.Errorf("attempts recorded: %v", m["retryfsm.retry.attempts"])
	}
	if sp := s.spans.Ended(); len(sp) != 1 || len(sp[0].Events()) != 0 || sp[0].Status().Code != codes.Error {
		t.Errorf("spans %v, want one with no event and status Error", sp)
	}
}

type noAgent struct{}

func (noAgent) Continue(context.Context) error { return nil }
