package retry_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ohmypi/retryfsm/policy/classify"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// TestCompile: Compile checks the settings once (Validate's error for
// invalid ones) and the Policy holds a copy of them with their classifier:
// nil for the original's message classification, built for another mode
// or patterns; changing the settings given, or the copy Settings returns,
// changes nothing in the Policy.
func TestCompile(t *testing.T) {
	var se *retry.SettingsError
	if _, err := retry.Compile(retry.Settings{Enabled: true, MaxRetries: 1, BaseDelay: time.Second, RetryablePatterns: []string{"(oops"}}); !errors.As(err, &se) || se.Field != "retryablePatterns" {
		t.Errorf("an invalid pattern: %v, want a *SettingsError on retryablePatterns", err)
	}
	if retry.DefaultPolicy().Classifier() != nil {
		t.Error("the default policy has a classifier; want nil (the original's)")
	}
	set := retry.Settings{Enabled: true, MaxRetries: 2, BaseDelay: time.Second, Classify: retry.ClassifyStatus, RetryablePatterns: []string{"busy"}}
	p, err := retry.Compile(set)
	if err != nil {
		t.Fatal(err)
	}
	set.RetryablePatterns[0] = "changed"
	got := p.Settings()
	if got.RetryablePatterns[0] != "busy" {
		t.Errorf("the policy's settings changed with the caller's: %v", got.RetryablePatterns)
	}
	got.RetryablePatterns[0] = "again"
	if c := p.Classifier(); c == nil || c.Mode != retry.ClassifyStatus || len(c.Retryable) != 1 || p.Settings().RetryablePatterns[0] != "busy" {
		t.Errorf("classifier %+v, settings %v", c, p.Settings().RetryablePatterns)
	}
	m := classify.AssistantMessage{StopReason: classify.StopReasonError, ErrorMessage: "server busy"}
	if o := p.Reply(m, 0, time.Unix(0, 0)); o.Class != classify.ClassRetryable {
		t.Errorf("Reply(%q) = %v, want retryable by the pattern", m.ErrorMessage, o.Class)
	}
	if o := retry.DefaultPolicy().Reply(m, 0, time.Unix(0, 0)); o.Class != classify.ClassFatal {
		t.Errorf("the default policy: Reply(%q) = %v, want fatal", m.ErrorMessage, o.Class)
	}
}

// TestPolicyWithEnabled: WithEnabled changes retry.enabled only, in a copy
// that shares the classifier (SameClassification), and returns the policy
// itself when nothing changes; a policy compiled apart has a classifier of
// its own.
func TestPolicyWithEnabled(t *testing.T) {
	p := retry.MustCompile(retry.Settings{Enabled: true, MaxRetries: 2, BaseDelay: time.Second, Classify: retry.ClassifyStrict})
	off := p.WithEnabled(false)
	if off.Enabled() || !p.Enabled() || off.Settings().MaxRetries != 2 {
		t.Errorf("WithEnabled(false): %v, the original %v", off.Settings(), p.Settings())
	}
	if !off.SameClassification(p) || off.Classifier() != p.Classifier() {
		t.Error("WithEnabled made a new classifier")
	}
	if p.WithEnabled(true) != p {
		t.Error("WithEnabled(true) on an enabled policy made a copy")
	}
	q := retry.MustCompile(p.Settings())
	if q.SameClassification(p) {
		t.Error("two compilations share a classifier")
	}
	if !retry.DefaultPolicy().SameClassification(retry.MustCompile(retry.DefaultSettings())) {
		t.Error("two policies of the original's classification (nil) differ")
	}
}

// TestProfilePolicyCompiledOnce: a profile of the table is compiled once:
// every copy gives the same Policy, with the table's settings.
func TestProfilePolicyCompiledOnce(t *testing.T) {
	for _, prof := range retry.Profiles() {
		p1, err := prof.Policy()
		if err != nil {
			t.Fatal(err)
		}
		again, _ := retry.ProfileByName(prof.Name)
		p2, _ := again.Policy()
		if p1 != p2 || !p1.Settings().Equal(prof.Settings) {
			t.Errorf("%s: Policy() compiled twice (%p, %p) or holds other settings", prof.Name, p1, p2)
		}
	}
	custom := retry.Profile{Name: "mine", Settings: retry.Settings{MaxRetries: -1}}
	if _, err := custom.Policy(); err == nil {
		t.Error("a profile outside the table with invalid settings compiled")
	}
}
