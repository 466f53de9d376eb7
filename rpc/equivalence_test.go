package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
	"github.com/ohmypi/retryfsm/trace"
)

// TestServeMatchesScenarioRuns drives the server with each conformance
// scenario's prompts and actions, sent as commands at their times (with
// advance in between), and checks that it writes what the scenario's own
// run traces: the same events, in the same order, at the same times, and
// the same responses, in the protocol's form.
func TestServeMatchesScenarioRuns(t *testing.T) {
	files, err := scenario.Files("../testdata/conformance/public", "../scenarios")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "manifest.json") {
			continue
		}
		for _, variant := range session.VariantNames() {
			t.Run(filepath.Base(file)+"/"+variant, func(t *testing.T) {
				sc, err := scenario.Load(file)
				if err != nil {
					t.Fatal(err)
				}
				if variant != sc.Variant && sc.SetVariant(variant) != nil {
					t.Skip("the scenario's settings or profile are not the original's")
				}
				serveMatchesRun(t, sc, variant)
			})
		}
	}
}

// TestServeMatchesEveryCommandAction: a scenario that runs every command
// of session's table as an action (set_retry_settings once refused, as
// out of range) traces what the server writes for the same commands.
func TestServeMatchesEveryCommandAction(t *testing.T) {
	sc, err := scenario.Parse("every.yaml", []byte(`
turns:
  - {stopReason: error, errorMessage: "503 service unavailable"}
  - {stopReason: error, errorMessage: "prompt is too long: 213462 tokens > 200000 maximum"}
  - {stopReason: stop}
  - {stopReason: stop}
actions:
  - {at: 1, do: get_state, id: s1}
  - {at: 2, do: set_retry_settings, id: r1, settings: {baseDelayMs: 50, maxRetries: 2}}
  - {at: 3, do: set_retry_settings, id: r2, settings: {maxRetries: -1}}
  - {at: 4, do: set_auto_compaction, enabled: false}
  - {at: 5, do: set_auto_compaction, enabled: true}
  - {at: 6, do: set_auto_retry, enabled: true}
  - {at: 3000, do: abort_retry}
  - {at: 3001, do: prompt, message: again}
  - {at: 3002, do: abort}
  - {at: 3003, do: get_state}
`))
	if err != nil {
		t.Fatal(err)
	}
	// A command the file lacks (a new one) is added with arguments of
	// its kinds: true, "x", {}.
	done := map[string]bool{}
	for _, a := range sc.Actions {
		done[a.Do] = true
	}
	yes := true
	for _, c := range session.Commands() {
		if !done[c.Name] {
			sc.Actions = append(sc.Actions, scenario.Action{At: time.Duration(3004+len(sc.Actions)) * time.Millisecond, Do: c.Name,
				Enabled: &yes, Message: "x", Settings: []byte("{}")})
		}
	}
	serveMatchesRun(t, sc, sc.Variant)
}

// serveMatchesRun runs sc and serves its commands (commandsOf), and checks
// that the server writes what the run traces.
func serveMatchesRun(t *testing.T, sc *scenario.Scenario, variant string) {
	t.Helper()
	var records []trace.Record
	res, err := sim.RunScenario(sc, sim.Options{Variant: variant, Sink: trace.SinkFunc(func(r *trace.Record) {
		records = append(records, r.Clean())
	})})
	if err != nil {
		t.Fatal(err)
	}
	input, coincide := commandsOf(sc, res.Trace)
	if coincide {
		// An action at the very instant a timer fires: a scenario
		// runs the action first (it was scheduled first), a client
		// can only send it after advancing to that instant.
		t.Skip("an action coincides with a timer")
	}
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(input), &out, Options{Scenario: sc, Variant: variant, Virtual: true}); err != nil {
		t.Fatal(err)
	}
	got := withoutClientLines(out.String(), sc.InitialPrompt)
	want := protocolLines(sc, records)
	if !slices.Equal(got, want) {
		t.Errorf("input:\n%s\ngot:\n%s\nwant:\n%s", input, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// commandsOf turns a scenario's initial prompt and actions into command
// lines. coincide reports an action at the time of a trace line that a
// timer, not an action, wrote.
func commandsOf(sc *scenario.Scenario, trace []byte) (input string, coincide bool) {
	var b strings.Builder
	if sc.InitialPrompt {
		fmt.Fprintf(&b, `{"type":"prompt","message":%q}`+"\n", sc.Prompt)
	}
	actions := slices.Clone(sc.Actions)
	slices.SortStableFunc(actions, func(a, b scenario.Action) int { return int(a.At - b.At) })
	var now time.Duration
	for _, a := range actions {
		if a.At > now {
			fmt.Fprintf(&b, `{"type":"advance","ms":%d}`+"\n", (a.At - now).Milliseconds())
			now = a.At
		}
		m := map[string]any{"type": a.Do}
		if a.ID != "" {
			m["id"] = a.ID
		}
		cmd, _ := session.CommandByName(a.Do)
		for _, arg := range cmd.Args {
			switch arg.Kind {
			case session.ArgText:
				m[arg.Name] = a.Message
			case session.ArgBool:
				m[arg.Name] = *a.Enabled
			case session.ArgSettings:
				m[arg.Name] = a.Settings
			}
		}
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteByte('\n')
	}
	// The instants timers fire at: the ends of backoffs and compaction
	// continues. (A model call's end is not in the trace; no scenario puts
	// an action at that instant.)
	timers := map[int64]bool{}
	for _, line := range bytes.Split(trace, []byte("\n")) {
		var l struct {
			T         int64  `json:"t"`
			Type      string `json:"type"`
			DelayMs   int64  `json:"delayMs"`
			WillRetry bool   `json:"willRetry"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch {
		case l.Type == "auto_retry_start":
			timers[l.T+l.DelayMs] = true
		case l.Type == "auto_compaction_end" && l.WillRetry:
			timers[l.T+session.CompactionContinueDelay.Milliseconds()] = true
		}
	}
	for _, a := range actions {
		coincide = coincide || timers[a.At.Milliseconds()]
	}
	return b.String(), coincide
}

// withoutClientLines drops the responses to the test's own commands: the
// advances and the initial prompt's (a scenario's initial prompt has none).
func withoutClientLines(out string, initialPrompt bool) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.HasPrefix(l, `{"type":"response","command":"advance"`) {
			continue
		}
		if initialPrompt && strings.HasPrefix(l, `{"type":"response","command":"prompt","success":true,"data":{"prompt":1}}`) {
			initialPrompt = false
			continue
		}
		lines = append(lines, l)
	}
	return lines
}

// promptTexts are the texts of a scenario's prompts in the order they are
// issued (so numbered): the initial prompt, then the prompt actions in
// time order (list order at the same time).
func promptTexts(sc *scenario.Scenario) []string {
	var texts []string
	if sc.InitialPrompt {
		texts = append(texts, sc.Prompt)
	}
	actions := slices.Clone(sc.Actions)
	slices.SortStableFunc(actions, func(a, b scenario.Action) int { return int(a.At - b.At) })
	for _, a := range actions {
		if a.Do == "prompt" {
			texts = append(texts, a.Message)
		}
	}
	return texts
}

// protocolLines is what the protocol shows of a run's records: its events
// (agent_end with the run's messages, each prompt's own text in its user
// message), and its responses with the id first, no "t", the prompt's
// number, and one response per command. The final line is not a record of
// the run's sink.
func protocolLines(sc *scenario.Scenario, records []trace.Record) []string {
	var lines []string
	texts := promptTexts(sc)
	ev := newEventWriter(sc, true)
	issued := 0 // prompts issued so far
	prompts := 0
	if sc.InitialPrompt {
		prompts = 1
	}
	rejected := false // the last line was a rejected prompt's response
	for i := range records {
		r := &records[i]
		if r.Type == trace.PromptRejected || r.Type == trace.AgentRun && r.Run == trace.RunPrompt {
			if issued < len(texts) {
				ev.setPrompt(texts[issued])
			}
			issued++
		}
		if r.Type != trace.Response {
			rejected = false
			if line := ev.append(nil, r); line != nil {
				lines = append(lines, strings.TrimSuffix(string(line), "\n"))
			}
			continue
		}
		p := &r.Response
		if p.Command == "prompt" && p.Success && rejected {
			rejected = false // the original's second answer to a rejected prompt
			continue
		}
		var b strings.Builder
		b.WriteString("{")
		if p.ID != "" {
			fmt.Fprintf(&b, `"id":%q,`, p.ID)
		}
		fmt.Fprintf(&b, `"type":"response","command":%q,"success":%t`, p.Command, p.Success)
		rejected = false
		switch {
		case p.Command == "prompt":
			prompts++
			if p.Success {
				fmt.Fprintf(&b, `,"data":{"prompt":%d}`, prompts)
			} else {
				rejected = true
			}
		case p.HasState:
			b.WriteString(`,"data":` + string(trace.AppendState(nil, &p.State)))
		}
		if !p.Success {
			e, _ := json.Marshal(p.Error)
			b.WriteString(`,"error":` + string(e))
		}
		b.WriteString("}")
		lines = append(lines, b.String())
	}
	return lines
}
