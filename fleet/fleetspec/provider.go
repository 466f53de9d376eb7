package fleetspec

import (
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/provider"
)

// The provider's answers as the agent sees them (SPEC.md §15.2;
// Answer.Message renders them from Answer.Reply, and TestMessagesAreTheTexts
// holds the two together). Each error kind has one status, message and, for
// a hint, one header; the texts are the Anthropic API's where it has one.
const (
	// Message529 is an overloaded answer (HTTP 529).
	Message529 = `529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	// Message503 is a service-unavailable answer (HTTP 503).
	Message503 = `503 Service Unavailable`
	// Message500 is an internal-error answer (HTTP 500).
	Message500 = `500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}`
	// MessageNetwork is a connection error (no HTTP status), as the
	// Stainless SDKs write it.
	MessageNetwork = `Connection error.`
	// Message429 is the over-capacity answer (HTTP 429); with hint text,
	// " Please try again in Ns." follows it (N the retry-after in whole
	// seconds).
	Message429 = `429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}`
	// MessageOverflow is a context-overflow answer (HTTP 400).
	MessageOverflow = `400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}`
	// MessageUsageLimit starts a usage-limit answer (HTTP 429, with a
	// retry-after header); " Please try again in Ns." follows it.
	MessageUsageLimit = `429 {"type":"error","error":{"type":"rate_limit_error","message":"You have reached your usage limit."}}`
)

// Answer is one answer of the provider: a success (Kind KindNone; Tool: a
// toolUse turn, else the final stop) or an error of a kind, with, for a
// 429 or a usage limit, a retry-after of RetryAfter whole seconds given as
// Hint says. An Answer is comparable (the catalog's key).
type Answer struct {
	Kind       Kind
	Tool       bool
	Hint       HintMode // 429: how the retry-after is given; usage_limit: header
	RetryAfter int64    // the retry-after in whole seconds (hint header or text)
}

// Hinted reports whether the answer gives a retry-after (a client's
// retry-after window opens when it arrives).
func (a Answer) Hinted() bool {
	return (a.Kind == Kind429 || a.Kind == KindUsageLimit) && a.Hint != HintNone
}

// Message is the assistant message the answer is (SPEC.md §15.2's texts):
// its Reply as the agent sees it.
func (a Answer) Message() policy.AssistantMessage { return a.Reply().AgentMessage() }

// Reply is the answer as the provider gives it (provider.Answer): the
// one value the simulator reads as a message and the proxy writes as
// HTTP.
func (a Answer) Reply() provider.Answer {
	if a.Kind == KindNone {
		if a.Tool {
			return provider.Answer{Stop: policy.StopReasonToolUse}
		}
		return provider.Answer{Stop: policy.StopReasonStop}
	}
	r := provider.Answer{Stop: policy.StopReasonError}
	switch a.Kind {
	case Kind529:
		r.Status, r.Message = 529, "Overloaded"
	case Kind503:
		r.Status, r.Message, r.Plain = 503, "Service Unavailable", true
	case Kind500:
		r.Status, r.Message = 500, "Internal server error"
	case KindNetwork: // no HTTP status: a connection error
	case KindOverflow:
		r.Status, r.Message = 400, "prompt is too long: 213462 tokens > 200000 maximum"
	case Kind429, KindUsageLimit:
		r.Status, r.Message = 429, "Number of requests has exceeded your rate limit"
		if a.Kind == KindUsageLimit {
			r.Message = "You have reached your usage limit."
		}
		secs := strconv.FormatInt(a.RetryAfter, 10)
		switch a.Hint {
		case HintHeader:
			r.Headers = map[string]string{"retry-after": secs}
			if a.Kind == KindUsageLimit {
				r.Hint = "Please try again in " + secs + "s."
			}
		case HintText:
			r.Hint = "Please try again in " + secs + "s."
		}
	}
	return r
}

// Provider is the fleet's provider (SPEC.md §15.2): its capacity (a token
// bucket and a bound on the calls in flight), its outage windows, its
// background and scripted errors, and the answer it gives one request.
// Time is an argument, as in x/time/rate's reserveN(t): the Provider holds
// no clock, so the simulator passes its virtual time and a server its
// real time since start; the times of successive calls must not decrease.
// A Provider is not safe for concurrent use.
type Provider struct {
	capacity     Capacity
	overCapacity OverCapacity
	outages      []Outage
	errors       []Rate
	overflow     float64
	promptErrors PromptErrors
	errSum       float64 // the background error rates and the overflow rate
	tokens       float64 // the bucket's tokens at tokensAt
	tokensAt     time.Duration
	inFlight     int // calls admitted and not yet released
}

// NewProvider is the provider of fleet cfg (its capacity, over-capacity
// answer, outages, error rates and prompt errors), its bucket full at
// t=0. cfg is used as Validate accepts it; its zero values mean what
// Config says.
func NewProvider(cfg *Config) *Provider {
	p := &Provider{capacity: cfg.Capacity, overCapacity: cfg.OverCapacity, outages: cfg.Outages,
		errors: cfg.Errors, overflow: cfg.Overflow, promptErrors: cfg.PromptErrors,
		tokens: float64(cfg.Capacity.Burst), errSum: cfg.Overflow}
	if p.overCapacity.Hint == "" {
		p.overCapacity.Hint = HintHeader
	}
	for _, e := range cfg.Errors {
		p.errSum += e.P
	}
	return p
}

// Prompt is what the provider keeps of one prompt of a client: the
// scripted errors (PromptErrors) answer its first admitted calls, and its
// calls succeed as toolUse turns until the last it needs.
type Prompt struct {
	// Admitted counts its calls admitted so far (Request adds one).
	Admitted int
	// Remaining is the successful calls it still needs (Request takes one
	// at each success; the last is the final stop).
	Remaining int
}

// Draws reports whether Request may draw from its generator: the
// provider has background error rates or an overflow rate. Without them
// its answers are a function of the time, the prompt and its capacity.
func (p *Provider) Draws() bool { return p.errSum > 0 }

// Request is the provider's answer to a call sent at now for prompt pr:
// during an outage window the window's error (not admitted); over
// capacity a 429 (over set, not admitted); else the call is admitted (in
// flight until Release) and answered with a scripted error, a background
// error or overflow drawn from rng (one draw when the provider has error
// rates), or a success.
func (p *Provider) Request(now time.Duration, pr *Prompt, rng *rand.PCG) (a Answer, admitted, over bool) {
	for i := range p.outages {
		o := &p.outages[i]
		if now >= o.Start && now < o.End() {
			a = Answer{Kind: o.Kind}
			if o.Kind == Kind429 || o.Kind == KindUsageLimit {
				a.Hint = HintHeader
				if o.Kind == Kind429 {
					a.Hint = p.overCapacity.Hint
				}
				ra := o.RetryAfter
				if ra == 0 {
					ra = o.End() - now
				}
				a.RetryAfter = ceilSeconds(ra)
			}
			return a, false, false
		}
	}
	c := &p.capacity
	if c.RPS > 0 {
		p.tokens = min(float64(c.Burst), p.tokens+(now-p.tokensAt).Seconds()*c.RPS)
		p.tokensAt = now
		if p.tokens < 1 {
			ra := p.overCapacity.RetryAfter
			if ra == 0 {
				ra = max(time.Second, time.Duration((1-p.tokens)/c.RPS*float64(time.Second)))
			}
			return Answer{Kind: Kind429, Hint: p.overCapacity.Hint, RetryAfter: ceilSeconds(ra)}, false, true
		}
	}
	if c.MaxInFlight > 0 && p.inFlight >= c.MaxInFlight {
		ra := p.overCapacity.RetryAfter
		if ra == 0 {
			ra = time.Second
		}
		return Answer{Kind: Kind429, Hint: p.overCapacity.Hint, RetryAfter: ceilSeconds(ra)}, false, true
	}
	if c.RPS > 0 {
		p.tokens--
	}
	p.inFlight++
	pr.Admitted++
	if pe := &p.promptErrors; pr.Admitted <= pe.Count {
		return p.errorAnswer(pe.Kind), true, false
	}
	if p.errSum > 0 {
		u := Float01(rng)
		for _, e := range p.errors {
			if u < e.P {
				return p.errorAnswer(e.Kind), true, false
			}
			u -= e.P
		}
		if u < p.overflow {
			return Answer{Kind: KindOverflow}, true, false
		}
	}
	pr.Remaining--
	return Answer{Tool: pr.Remaining > 0}, true, false
}

// Release ends an admitted call: answered, or cut by an outage.
func (p *Provider) Release() { p.inFlight-- }

// InFlight is the number of calls admitted and not yet released.
func (p *Provider) InFlight() int { return p.inFlight }

// Cuts reports whether the window answers the calls in flight at its
// start (a server failing or overloaded drops its streams; a usage limit
// or a rate limit does not).
func (o Outage) Cuts() bool {
	return o.Kind == Kind529 || o.Kind == Kind503 || o.Kind == Kind500 || o.Kind == KindNetwork
}

// Cut is the answer outage window i (one that Cuts) gives each admitted
// call in flight at its start; each is then released.
func (p *Provider) Cut(i int) Answer { return Answer{Kind: p.outages[i].Kind} }

// errorAnswer is a background or scripted error of kind k: a 429 is given
// as over capacity (its hint mode and retry-after, 1 s when computed), a
// usage limit with that retry-after in the header and the text.
func (p *Provider) errorAnswer(k Kind) Answer {
	a := Answer{Kind: k}
	if k == Kind429 || k == KindUsageLimit {
		ra := p.overCapacity.RetryAfter
		if ra == 0 {
			ra = time.Second
		}
		a.Hint, a.RetryAfter = p.overCapacity.Hint, ceilSeconds(ra)
		if k == KindUsageLimit {
			a.Hint = HintHeader
		}
	}
	return a
}

// ceilSeconds is d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 { return int64((d + time.Second - 1) / time.Second) }
