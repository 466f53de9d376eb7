package explore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/session"
)

// TestMaxRetriesLimits: the limits are the measured ones (see
// BenchmarkExploreMaxRetries), never above what the state key encodes, and
// a variant that was not measured gets the smallest.
func TestMaxRetriesLimits(t *testing.T) {
	for _, tt := range []struct {
		v    *session.Variant
		want int
	}{
		{session.Sound, SoundMaxRetriesLimit},
		{nil, SoundMaxRetriesLimit},
		{session.Original, OriginalMaxRetriesLimit},
		{&session.Variant{Name: "custom"}, OriginalMaxRetriesLimit},
	} {
		if got := MaxRetriesLimit(tt.v); got != tt.want {
			t.Errorf("MaxRetriesLimit(%v) = %d, want %d", tt.v, got, tt.want)
		}
	}
	if SoundMaxRetriesLimit != 20 || OriginalMaxRetriesLimit != 11 {
		t.Errorf("limits sound %d, original %d: update SPEC.md §12 and the measured figures",
			SoundMaxRetriesLimit, OriginalMaxRetriesLimit)
	}
	if SoundMaxRetriesLimit > MaxMaxRetries || OriginalMaxRetriesLimit > MaxMaxRetries {
		t.Error("a limit exceeds MaxMaxRetries, which the state key encodes")
	}
}

// TestValidateMaxRetriesBoundary: the limit itself is accepted, one above
// it and -1 are rejected with a *MaxRetriesError naming the range.
func TestValidateMaxRetriesBoundary(t *testing.T) {
	for _, v := range []*session.Variant{session.Sound, session.Original} {
		lim := MaxRetriesLimit(v)
		for _, mr := range []int{0, lim} {
			if err := ValidateMaxRetries(v, mr); err != nil {
				t.Errorf("%s maxRetries %d: %v", v.Name, mr, err)
			}
		}
		for _, mr := range []int{-1, lim + 1} {
			err := ValidateMaxRetries(v, mr)
			var me *MaxRetriesError
			if !errors.As(err, &me) || me.MaxRetries != mr || me.Limit != lim || me.Variant != v.Name {
				t.Fatalf("%s maxRetries %d: error %#v, want a *MaxRetriesError", v.Name, mr, err)
			}
			if want := "allowed: 0 to " + strconv.Itoa(lim); !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), v.Name) {
				t.Errorf("%s maxRetries %d: %q lacks %q or the variant", v.Name, mr, err, want)
			}
		}
	}
}

// TestExploreRejectsAboveLimit: Explore and Check refuse a maxRetries above
// the variant's limit before exploring anything (original at 20 would not
// finish).
func TestExploreRejectsAboveLimit(t *testing.T) {
	lim := OriginalMaxRetriesLimit
	r, err := Explore(Options{Variant: session.Original, MaxRetries: lim + 1})
	var me *MaxRetriesError
	if r != nil || !errors.As(err, &me) || me.Limit != lim {
		t.Errorf("Explore(original, %d) = %v, %v; want a *MaxRetriesError", lim+1, r, err)
	}
	for _, rg := range [][2]int{{0, lim + 1}, {MaxMaxRetries, MaxMaxRetries}, {-1, 2}} {
		sum, err := Check(session.Original, rg[0], rg[1])
		if sum != nil || !errors.As(err, &me) {
			t.Errorf("Check(original, %d, %d) = %v, %v; want a *MaxRetriesError", rg[0], rg[1], sum, err)
		}
	}
	// Sound's limit is the encoding's: it runs (in milliseconds).
	if r, err := Explore(Options{Variant: session.Sound, MaxRetries: SoundMaxRetriesLimit}); err != nil || r.States == 0 {
		t.Errorf("Explore(sound, %d) = %v, %v", SoundMaxRetriesLimit, r, err)
	}
}

// TestSpecListsLimits: SPEC.md §12.5 states the limits in force.
func TestSpecListsLimits(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "SPEC.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("| sound | %d (`SoundMaxRetriesLimit`", SoundMaxRetriesLimit),
		fmt.Sprintf("| original | %d (`OriginalMaxRetriesLimit`)", OriginalMaxRetriesLimit),
		fmt.Sprintf("%d for sound, %d for the original", SoundMaxRetriesLimit, OriginalMaxRetriesLimit),
	} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("SPEC.md lacks %q", want)
		}
	}
}
