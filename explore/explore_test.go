package explore

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/scenario"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/counts.golden")

func countsText() []byte {
	var b bytes.Buffer
	b.WriteString("# variant maxRetries states transitions pruned violations\n")
	for _, v := range []*policy.Variant{policy.Sound, policy.Original} {
		for mr := 0; mr <= 3; mr++ {
			r := exploreAll(Options{Variant: v, MaxRetries: mr})
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

func TestSoundHolds(t *testing.T) {
	sum, err := Check(policy.Sound, 0, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Counterexamples) != 0 || sum.Pruned != 0 {
		t.Fatalf("sound: %s pruned=%d, counterexamples %v", sum.Line(), sum.Pruned, sum.Counterexamples)
	}
}

func TestOriginalCounterexamples(t *testing.T) {
	sum, err := Check(policy.Original, 3, 3)
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
	again, _ := Check(policy.Original, 3, 3)
	for i := range again.Counterexamples {
		if !bytes.Equal(again.Counterexamples[i].Replay.YAML, sum.Counterexamples[i].Replay.YAML) {
			t.Errorf("counterexample %d is not byte-stable", i)
		}
	}
}

// TestModelTimersConsistent: the model's backoff timers agree with the
// snapshot's Armed/Controlled in every reachable state.
func TestModelTimersConsistent(t *testing.T) {
	for _, v := range []*policy.Variant{policy.Sound, policy.Original} {
		r := exploreAll(Options{Variant: v, MaxRetries: 3})
		for i := 0; i < r.States; i++ {
			s := r.State(i)
			n, ctl := 0, false
			for j := 0; j < int(s.NT); j++ {
				if s.T[j].Kind == TimerBackoff {
					n++
					ctl = ctl || s.T[j].Ctl
				}
			}
			if n != s.Snap.Armed || ctl != s.Snap.Controlled {
				t.Fatalf("%s state %d %v: %d backoff timers (ctl %t), snapshot armed %d controlled %t",
					v.Name, i, s, n, ctl, s.Snap.Armed, s.Snap.Controlled)
			}
		}
	}
}

func TestSessionTexts(t *testing.T) {
	if msgAborted != session.AbortedMessage || errContinueStreaming != session.ErrContinueWhileStreaming ||
		errContinueEmpty != session.ErrContinueEmpty || errContinueAssistant != session.ErrContinueFromAssistant ||
		compactionDelayMs != session.CompactionContinueDelay.Milliseconds() {
		t.Fatal("explore's copies of sim's texts/delays are out of date")
	}
}

func benchExplore(b *testing.B, v *policy.Variant) {
	for b.Loop() {
		for mr := 0; mr <= 10; mr++ {
			exploreAll(Options{Variant: v, MaxRetries: mr})
		}
	}
}

func BenchmarkExploreSound(b *testing.B)    { benchExplore(b, policy.Sound) }
func BenchmarkExploreOriginal(b *testing.B) { benchExplore(b, policy.Original) }

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
