package proxy

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ohmypi/retryfsm/fleet"
	"github.com/ohmypi/retryfsm/policy"
)

// model is the fault model: the fleet's provider (SPEC.md §15.2: its
// capacity, outage windows, background error rates and retry-after
// hints) answering on the real clock, the time since the proxy started.
type model struct {
	mu     sync.Mutex
	p      *fleet.Provider
	start  time.Time
	rng    *rand.PCG
	prompt fleet.Prompt
}

func newModel(cfg *fleet.Config, start time.Time) *model {
	seed := uint64(cfg.Seed)
	if seed == 0 {
		seed = 1
	}
	return &model{p: fleet.NewProvider(cfg), start: start, rng: rand.NewPCG(seed, 0)}
}

// answer is the provider's answer to a request arriving at now: its
// message (policy.AssistantMessage: status, headers, the SDK-style
// message), its kind for the log, and release, to call when the answer
// has ended (nil when the call was not admitted). A request whose
// x-stainless-retry-count is absent or 0 starts a new prompt (the fleet's
// prompt errors answer a prompt's first calls); a retry goes on with it.
func (m *model) answer(now time.Time, retryCount string) (policy.AssistantMessage, string, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if retryCount == "" || retryCount == "0" {
		m.prompt = fleet.Prompt{Remaining: 1}
	}
	if m.prompt.Remaining < 1 {
		m.prompt.Remaining = 1
	}
	at := now.Sub(m.start)
	a, admitted, _ := m.p.Request(at, &m.prompt, m.rng)
	kind := a.Kind.String()
	if a.Kind == fleet.KindNone {
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
	return a.Message(), kind, release
}

// providerMessage is the error message a provider's body carries for a
// fleet message ("529 {...}" as the SDKs show it): the JSON's
// error.message, and any text after the JSON (a hint).
func providerMessage(msg string, status int) string {
	rest := strings.TrimPrefix(msg, strconv.Itoa(status)+" ")
	if !strings.HasPrefix(rest, "{") {
		return rest
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := dec.Decode(&body); err != nil || body.Error.Message == "" {
		return rest
	}
	var tail bytes.Buffer
	_, _ = tail.ReadFrom(dec.Buffered())
	out := body.Error.Message
	if t := strings.TrimSpace(tail.String()); t != "" {
		out += ". " + t
	}
	return out
}
