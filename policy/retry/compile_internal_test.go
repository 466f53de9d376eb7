package retry

import (
	"regexp"
	"slices"
	"testing"

	"github.com/ohmypi/retryfsm/policy/classify"
)

// TestCompileClassifierIsNewClassifier: the classifier Compile builds from
// the patterns Validate compiled is the one classify.NewClassifier builds
// from the settings (the same mode, and the same patterns in the same
// order, case-insensitive), for every profile and for patterns given
// without a mode; settings classified by message get none.
func TestCompileClassifierIsNewClassifier(t *testing.T) {
	sets := []Settings{{MaxRetries: 1, RetryablePatterns: []string{`\bslow down\b`, "x+"}}, {MaxRetries: 1, Classify: ClassifyStrict}}
	for _, p := range Profiles() {
		sets = append(sets, p.Settings)
	}
	patterns := 0
	for _, s := range sets {
		p, err := Compile(s)
		if err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		if s.messageClassification() {
			if p.cls != nil {
				t.Errorf("%+v: a classifier for message classification", s)
			}
			continue
		}
		want, err := classify.NewClassifier(s.Classify, s.RetryablePatterns, s.NonRetryablePatterns)
		if err != nil {
			t.Fatal(err)
		}
		str := func(res []*regexp.Regexp) []string {
			var out []string
			for _, re := range res {
				out = append(out, re.String())
			}
			return out
		}
		patterns += len(want.Retryable) + len(want.NonRetryable)
		if p.cls == nil || p.cls.Mode != want.Mode || !slices.Equal(str(p.cls.Retryable), str(want.Retryable)) ||
			!slices.Equal(str(p.cls.NonRetryable), str(want.NonRetryable)) {
			t.Errorf("%+v: Compile's classifier %+v, NewClassifier's %+v", s, p.cls, want)
		}
	}
	if patterns == 0 {
		t.Fatal("no settings with patterns")
	}
}
