package explore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
)

// replayCheck runs rp's scenario through sim and compares its observations
// and final state with the predicted ones.
func replayCheck(t *testing.T, label string, rp *Replay) bool {
	t.Helper()
	sc, err := scenario.Parse(label+".yaml", rp.YAML)
	if err != nil {
		t.Errorf("%s: %v\n%s", label, err, rp.YAML)
		return false
	}
	return replayScenarioCheck(t, label, rp, sc)
}

// replayFileCheck is replayCheck of rp.Scenario, the file rp.YAML
// writes, without reading it back.
func replayFileCheck(t *testing.T, label string, rp *Replay) bool {
	t.Helper()
	return replayScenarioCheck(t, label, rp, rp.Scenario)
}

// replayScenarioCheck is replayCheck of sc, rp's scenario.
func replayScenarioCheck(t *testing.T, label string, rp *Replay, sc *scenario.Scenario) bool {
	t.Helper()
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Errorf("%s: %v", label, err)
		return false
	}
	got := NormalizeTrace(res.Records)
	f := res.Final
	unresolved := f.UnresolvedPrompts
	if len(unresolved) == 0 {
		unresolved = nil
	}
	if !slices.Equal(got, rp.Lines) || f.State != rp.Final.State || f.Attempt != rp.Final.Attempt ||
		f.IsRetrying != rp.Final.IsRetrying || !slices.Equal(unresolved, rp.Final.Unresolved) {
		t.Errorf("%s: path %v: sim and explorer disagree\nexplorer final %+v\nsim   final %+v\n%s\n%s",
			label, rp.Path, rp.Final, f, diffLines(rp.Lines, got), rp.YAML)
		return false
	}
	if !res.Passed() {
		t.Errorf("%s: expectations failed: %v", label, res.Failures)
		return false
	}
	return true
}

func diffLines(pred, sim []string) string {
	var b strings.Builder
	n := max(len(pred), len(sim))
	for i := 0; i < n; i++ {
		var a, c string
		if i < len(pred) {
			a = pred[i]
		}
		if i < len(sim) {
			c = sim[i]
		}
		mark := "  "
		if a != c {
			mark = "!="
		}
		fmt.Fprintf(&b, "%s explorer %-50s | sim %s\n", mark, a, c)
	}
	return b.String()
}

// TestReplayEveryState replays the shortest path to every reachable state
// (extended to quiescence) through sim, for maxRetries 0..2 and both
// variants, and compares observations and final states. The explorations
// run in parallel, each a subtest. A third of the states extend to a path
// another state's replay already ran (the original at maxRetries 2: 4,238
// states, 2,901 replays): their scenario file is the same bytes (checked),
// so sim's run of it is not repeated. At maxRetries 0 and 1 sim runs the
// scenario read back from its YAML (1,481 files: the explorer's files
// through scenario's writer and reader); at maxRetries 2 it runs the
// file NewReplay wrote that YAML from (Replay.Scenario), as the coverage
// test does.
func TestReplayEveryState(t *testing.T) {
	t.Parallel()
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		for mr := 0; mr <= 2; mr++ {
			t.Run(fmt.Sprintf("%s-mr%d", v.Name, mr), func(t *testing.T) {
				t.Parallel()
				r := exploreAll(Options{Variant: v, MaxRetries: mr})
				fails, runs := 0, 0
				ran := map[string]string{} // an extended path's inputs: the YAML sim ran
				for i := 0; i < r.States && fails < 3; i++ {
					label := fmt.Sprintf("%s-mr%d-state%d", v.Name, mr, i)
					rp, err := NewReplay(v, mr, r.PathTo(i), ReplayOptions{Extend: true, Expect: true})
					if err != nil {
						t.Errorf("%s: path %v: %v", label, r.PathTo(i), err)
						fails++
						continue
					}
					path := string(inputBytes(rp.Path))
					if yaml, ok := ran[path]; ok {
						if yaml != string(rp.YAML) {
							t.Errorf("%s: path %v: the same path replayed as two scenario files:\n%s\n---\n%s", label, rp.Path, yaml, rp.YAML)
							fails++
						}
						continue
					}
					ran[path] = string(rp.YAML)
					runs++
					check := replayCheck
					if mr == 2 {
						check = replayFileCheck
					}
					if !check(t, label, rp) {
						fails++
					}
				}
				t.Logf("%d states, %d distinct replays", r.States, runs)
			})
		}
	}
}

// inputBytes is path as bytes, one an input (a map key).
func inputBytes(path []Input) []byte {
	b := make([]byte, len(path))
	for i, in := range path {
		b[i] = byte(in)
	}
	return b
}

// TestReplayTightSchedule: a path with more inputs between a timer's
// arming and its firing than 2 ms spacing allows (60 commands inside the
// compaction continue's 100 ms) is replayed with closer times, and sim
// agrees with the prediction.
func TestReplayTightSchedule(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		path := []Input{ActPrompt, ReplyOverflow}
		for range 30 {
			path = append(path, ActDisable, ActEnable)
		}
		path = append(path, FireTimer)
		rp, err := NewReplay(v, 1, path, ReplayOptions{Extend: true, Expect: true})
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		if !strings.Contains(string(rp.YAML), "{at: 2, do: set_auto_retry, enabled: false}") {
			t.Errorf("%s: the commands are not packed after the reply:\n%s", v.Name, rp.YAML)
		}
		replayCheck(t, v.Name+"-tight", rp)
	}
}

// TestReplayRefusesImpossibleOrder: a path whose events no times can
// order is refused, not replayed wrongly.
func TestReplayRefusesImpossibleOrder(t *testing.T) {
	steps := []replayStep{
		{in: ActPrompt, kind: stepAction, seq: 0},
		{in: FireTimer, kind: stepTimer, seq: 1 << 30, from: 0, delay: 100 * time.Millisecond},
		{in: FireTimer, kind: stepTimer, seq: 1<<30 + 1, from: 0, delay: 50 * time.Millisecond},
	}
	if times, ok := schedule(steps, nil, 0); ok {
		t.Errorf("a 100 ms timer before a 50 ms one armed at the same time was scheduled at %v", times)
	}
	steps[2].delay = 100 * time.Millisecond
	if times, ok := schedule(steps, nil, 0); !ok || !slices.Equal(times, []int64{0, 100, 100}) {
		t.Errorf("two 100 ms timers in the order armed: %v, %t; want [0 100 100]", times, ok)
	}
}
