package policy_test

import (
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

func TestProfiles(t *testing.T) {
	ps := policy.Profiles()
	if len(ps) != 9 || ps[0].Name != policy.DefaultProfile {
		t.Fatalf("%d profiles, first %q; want 9, the default first", len(ps), ps[0].Name)
	}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.Name] {
			t.Errorf("profile %q twice", p.Name)
		}
		seen[p.Name] = true
		if err := p.Settings.Validate(); err != nil {
			t.Errorf("profile %s: invalid settings: %v", p.Name, err)
		}
		if p.Summary == "" || p.Source == "" {
			t.Errorf("profile %s: no summary or source", p.Name)
		}
		q, err := policy.ProfileByName(p.Name)
		if err != nil || !q.Settings.Equal(p.Settings) {
			t.Errorf("ProfileByName(%q) = %+v, %v", p.Name, q, err)
		}
	}
	if def, _ := policy.ProfileByName(""); !def.Settings.Equal(policy.DefaultSettings()) || def.Name != policy.DefaultProfile {
		t.Errorf("the default profile is %+v, want the default settings", def)
	}
	if _, err := policy.ProfileByName("nope"); err == nil || !strings.Contains(err.Error(), "omp-2026-06") {
		t.Errorf("unknown profile: %v (want an error listing the allowed names)", err)
	}
	// Profiles returns copies.
	ps[1].Settings.Fallback = append(ps[1].Settings.Fallback, "x")
	if q, _ := policy.ProfileByName(ps[1].Name); len(q.Settings.Fallback) != 0 {
		t.Error("Profiles shares its settings with the table")
	}
}
