package retry

import (
	"time"

	"github.com/ohmypi/retryfsm/policy/classify"
)

// Policy is a Settings value checked once: Compile validates the settings
// and builds their classifier, and from then on the Policy is read-only, so
// the Controller, Do and the simulators take it and never check it again.
// A *Policy may be shared between goroutines. Build one with Compile (or
// DefaultPolicy); a nil or zero Policy is not a valid one.
type Policy struct {
	set Settings
	cls *classify.Classifier // nil: the original's message classification
}

// Compile checks s (Settings.Validate) and returns it as a Policy holding
// its classifier. The error is Validate's (a *SettingsError naming the
// field).
func Compile(s Settings) (*Policy, error) {
	retryable, nonRetryable, err := s.validate()
	if err != nil {
		return nil, err
	}
	p := &Policy{set: s.Clone()}
	if !s.messageClassification() {
		// classify.NewClassifier of the patterns validate compiled.
		mode, err := classify.ParseMode(s.Classify)
		if err != nil { // validate parsed the same mode: not expected
			return nil, &SettingsError{Field: "classify", Value: err.Error(), Allowed: "message, status or strict, and Go regular expressions"}
		}
		p.cls = &classify.Classifier{Mode: mode, Retryable: retryable, NonRetryable: nonRetryable}
	}
	return p, nil
}

// MustCompile is Compile for settings known to be valid (a profile's, a
// literal's); it panics on invalid ones.
func MustCompile(s Settings) *Policy {
	p, err := Compile(s)
	if err != nil {
		panic(err)
	}
	return p
}

var defaultPolicy = MustCompile(DefaultSettings())

// DefaultPolicy returns the Policy of DefaultSettings (one shared value).
func DefaultPolicy() *Policy { return defaultPolicy }

// Settings returns the policy's settings (a copy: changing it changes
// nothing here).
func (p *Policy) Settings() Settings { return p.set.Clone() }

// Enabled reports retry.enabled.
func (p *Policy) Enabled() bool { return p.set.Enabled }

// WithEnabled returns the policy with retry.enabled set to on (p itself when
// it already is), sharing p's classifier.
func (p *Policy) WithEnabled(on bool) *Policy {
	if p.set.Enabled == on {
		return p
	}
	q := *p
	q.set.Enabled = on
	return &q
}

// Classifier returns the policy's classifier: nil for the original's
// message classification (mode message, no patterns), which a nil
// *Classifier applies.
func (p *Policy) Classifier() *classify.Classifier { return p.cls }

// Reply classifies the assistant reply m as the policy's classifier does
// (Classifier.Reply).
func (p *Policy) Reply(m classify.AssistantMessage, contextWindow int64, now time.Time) classify.Outcome {
	return p.cls.Reply(m, contextWindow, now)
}

// SameClassification reports whether p and q classify every reply alike
// because they share one classifier (WithEnabled keeps it) or both use the
// original's. Policies compiled apart from equal settings may still
// classify alike while this reports false: it is for keeping replies
// already classified, not for comparing settings.
func (p *Policy) SameClassification(q *Policy) bool { return p.cls == q.cls }

// Jittered is Settings.Jittered of the policy's settings.
func (p *Policy) Jittered() bool { return p.set.Jittered() }

// ModelName is Settings.ModelName of the policy's settings.
func (p *Policy) ModelName(primary string, i int) string { return p.set.ModelName(primary, i) }

// messageClassification reports whether s classifies as the original:
// mode message, no patterns.
func (s *Settings) messageClassification() bool {
	return (s.Classify == "" || s.Classify == ClassifyMessage) && len(s.RetryablePatterns) == 0 && len(s.NonRetryablePatterns) == 0
}

// EndInput is the retry machine's input at agent_end when o is the run's
// last reply; ok is false for a success (nothing to decide).
func EndInput(o *classify.Outcome) (in Input, ok bool) {
	switch o.Class {
	case classify.ClassRetryable:
		return InputRetryable, true
	case classify.ClassOverflow:
		return InputOverflow, true
	case classify.ClassFatal:
		return InputFatal, true
	case classify.ClassAborted:
		return InputAborted, true
	}
	return 0, false
}

// settings is the policy's settings for the decision code, which only reads
// them.
func (p *Policy) settings() *Settings { return &p.set }
