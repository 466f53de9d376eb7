package explore

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/counts.golden")

// oldAlphabet leaves out the usage-limit replies: the alphabet before
// issue 10, for comparing with the counts of the explorer's own model.
const oldAlphabet = 1<<ReplyUsageLimitSwitch | 1<<ReplyUsageLimitStay

func countsText() []byte {
	var b bytes.Buffer
	b.WriteString("# variant maxRetries states transitions pruned violations\n")
	for _, section := range []struct {
		title   string
		without uint32
	}{{"", 0}, {"# without the usage-limit replies (the alphabet before issue 10)\n", oldAlphabet}} {
		b.WriteString(section.title)
		for _, v := range []*session.Variant{session.Sound, session.Original} {
			for mr := 0; mr <= 3; mr++ {
				r := exploreAll(Options{Variant: v, MaxRetries: mr, without: section.without})
				fmt.Fprintf(&b, "%s %d states=%d transitions=%d pruned=%d violations=", v.Name, mr, r.States, r.Transitions, r.Pruned)
				for i, x := range r.Violations {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(x.Invariant.String())
				}
				b.WriteByte('\n')
			}
		}
	}
	return b.Bytes()
}

func TestCountsGolden(t *testing.T) {
	path := filepath.Join("testdata", "counts.golden")
	got := countsText()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./explore -run TestCountsGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("counts differ from %s (-update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestSoundOldAlphabetCounts: with the alphabet it had, the explorer
// driving the session core finds exactly the states and transitions of
// the abstract model it replaced (explore/model.go before issue 10) in the
// sound variant, whose session rules did not change: the normalisation of
// the core's state (key.go) merges what that model never told apart.
func TestSoundOldAlphabetCounts(t *testing.T) {
	for mr, want := range [][2]int{{14, 82}, {44, 306}, {52, 366}, {60, 426}} {
		r := exploreAll(Options{Variant: session.Sound, MaxRetries: mr, without: oldAlphabet})
		if r.States != want[0] || r.Transitions != want[1] || r.Pruned != 0 || len(r.Violations) != 0 {
			t.Errorf("sound maxRetries %d: states=%d transitions=%d pruned=%d violations=%v, want states=%d transitions=%d",
				mr, r.States, r.Transitions, r.Pruned, r.Violations, want[0], want[1])
		}
	}
}

func TestSoundHolds(t *testing.T) {
	sum, err := Check(session.Sound, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Counterexamples) != 0 || sum.Pruned != 0 {
		t.Fatalf("sound: %s pruned=%d, counterexamples %v", sum.Line(), sum.Pruned, sum.Counterexamples)
	}
}

func TestOriginalCounterexamples(t *testing.T) {
	sum, err := Check(session.Original, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	got := map[Invariant]bool{}
	for _, c := range sum.Counterexamples {
		got[c.Invariant] = true
		sc, err := scenario.Parse(c.Invariant.String()+".yaml", c.Replay.YAML)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.Invariant, err, c.Replay.YAML)
		}
		res, err := sim.RunScenario(sc, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed() {
			t.Errorf("%s: counterexample does not pass under sim: %v\n%s", c.Invariant, res.Failures, c.Replay.YAML)
		}
		replayCheck(t, c.Invariant.String(), c.Replay)
	}
	for _, inv := range []Invariant{InvAttemptZero, InvChainEnds, InvPromptResolves} {
		if !got[inv] {
			t.Errorf("original: no counterexample for %s", inv)
		}
	}
	// Byte-stable output.
	again, _ := Check(session.Original, 3, 3)
	for i := range again.Counterexamples {
		if !bytes.Equal(again.Counterexamples[i].Replay.YAML, sum.Counterexamples[i].Replay.YAML) {
			t.Errorf("counterexample %d is not byte-stable", i)
		}
	}
}

// TestTimersConsistent: the pending backoff timers agree with the retry
// machine's Armed and Controlled in every reachable state, and Ctl names
// the cancellable one.
func TestTimersConsistent(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		r := exploreAll(Options{Variant: v, MaxRetries: 3})
		for i := 0; i < r.States; i++ {
			s := r.State(i)
			n, ctl := 0, false
			for j := 0; j < int(s.NT); j++ {
				if s.T[j].Kind == session.BackoffTimer {
					n++
					ctl = ctl || s.T[j].ID == s.Session.Ctl
				}
			}
			if rs := s.Session.Retry; n != rs.Armed || ctl != rs.Controlled {
				t.Fatalf("%s state %d %v: %d backoff timers (ctl %t), snapshot armed %d controlled %t",
					v.Name, i, s, n, ctl, rs.Armed, rs.Controlled)
			}
		}
	}
}

func benchExplore(b *testing.B, v *session.Variant) {
	for b.Loop() {
		for mr := 0; mr <= 10; mr++ {
			exploreAll(Options{Variant: v, MaxRetries: mr})
		}
	}
}

func BenchmarkExploreSound(b *testing.B)    { benchExplore(b, session.Sound) }
func BenchmarkExploreOriginal(b *testing.B) { benchExplore(b, session.Original) }

// TestExploreRejectsBadMaxRetries: out-of-range settings are an error, not
// a panic.
func TestExploreRejectsBadMaxRetries(t *testing.T) {
	for _, mr := range []int{-1, MaxMaxRetries + 1} {
		if r, err := Explore(Options{MaxRetries: mr}); err == nil || r != nil {
			t.Errorf("Explore(maxRetries %d) = %v, %v; want an error", mr, r, err)
		}
	}
	if r, err := Explore(Options{MaxRetries: 1}); err != nil || r.States == 0 {
		t.Errorf("Explore(maxRetries 1) = %v, %v", r, err)
	}
}

// TestCompactionContinuesH19: the explorer finds the original's hazard
// H19_compaction_continue_rejected (reference §1.6, public scenario 21) as
// a shortest path, a retried error then an overflow on the retry's
// continue, and never in sound.
func TestCompactionContinuesH19(t *testing.T) {
	find := func(v *session.Variant) *Counterexample {
		sum, err := Check(v, 0, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i := range sum.Counterexamples {
			if c := &sum.Counterexamples[i]; c.Invariant == InvCompactionContinues {
				return c
			}
		}
		return nil
	}
	if c := find(session.Sound); c != nil {
		t.Errorf("sound violates %s: %v", InvCompactionContinues, c.Path)
	}
	c := find(session.Original)
	if c == nil {
		t.Fatal("original: no counterexample for compaction-continues")
	}
	want := []Input{ActPrompt, ReplyRetryable, FireTimer, FireTimer, ReplyOverflow}
	if !slices.Equal(c.Path, want) || c.MaxRetries != 1 {
		t.Errorf("original: path %v at maxRetries %d, want %v at 1", c.Path, c.MaxRetries, want)
	}
	if c.Replay == nil {
		t.Fatalf("original: no replay: %s", c.NotReplayed)
	}
	sc, err := scenario.Parse("h19.yaml", c.Replay.YAML)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunScenario(sc, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Errorf("counterexample does not pass under sim: %v\n%s", res.Failures, c.Replay.YAML)
	}
	if !bytes.Contains(res.Trace, []byte(`"type":"continue_rejected","error":"Cannot continue from message role: assistant"`)) {
		t.Errorf("the replay's trace has no rejected continue:\n%s", res.Trace)
	}
}
