package proxy

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/provider"
)

// model is the fault model: the fleet's provider (SPEC.md §15.2: its
// capacity, outage windows, background error rates and retry-after
// hints) answering on the real clock, the time since the proxy started.
type model struct {
	mu     sync.Mutex
	p      *fleetspec.Provider
	start  time.Time
	rng    *rand.PCG
	prompt fleetspec.Prompt
}

func newModel(cfg *fleetspec.Config, start time.Time) *model {
	seed := uint64(cfg.Seed)
	if seed == 0 {
		seed = 1
	}
	return &model{p: fleetspec.NewProvider(cfg), start: start, rng: rand.NewPCG(seed, 0)}
}

// answer is the provider's answer to a request arriving at now
// (provider.Answer, written as HTTP as it is), its kind for the log, and release, to call when the answer
// has ended (nil when the call was not admitted). A request whose
// x-stainless-retry-count is absent or 0 starts a new prompt (the fleet's
// prompt errors answer a prompt's first calls); a retry goes on with it.
func (m *model) answer(now time.Time, retryCount string) (provider.Answer, string, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if retryCount == "" || retryCount == "0" {
		m.prompt = fleetspec.Prompt{Remaining: 1}
	}
	if m.prompt.Remaining < 1 {
		m.prompt.Remaining = 1
	}
	at := now.Sub(m.start)
	a, admitted, _ := m.p.Request(at, &m.prompt, m.rng)
	kind := a.Kind.String()
	if a.Kind == fleetspec.KindNone {
		kind = "ok"
	}
	var release func()
	if admitted {
		var once sync.Once
		release = func() {
			once.Do(func() {
				m.mu.Lock()
				m.p.Release()
				m.mu.Unlock()
			})
		}
	}
	return a.Reply(), kind, release
}
