package fleetspec

import (
	"encoding/json"
	"fmt"

	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/policy"
	"gopkg.in/yaml.v3"
)

// MaxSettingsSize bounds a settings file ReadSettings reads.
const MaxSettingsSize = 1 << 20

// ReadSettings reads a retry settings file: one JSON object of the retry
// settings' keys (SPEC.md §14), applied onto policy.DefaultSettings as
// json.Unmarshal into a policy.Settings applies it, so that the file
// retrysim tune --out writes runs the same under retrysim fleet
// --settings, a fleet file's settings key and retryfsm.Do. The settings
// must be valid (policy.Settings.Validate); errors name the file.
func ReadSettings(path string) (policy.Settings, error) {
	data, tooLarge, err := strictfile.ReadFile(path, MaxSettingsSize)
	if err != nil {
		return policy.Settings{}, err
	}
	if tooLarge {
		return policy.Settings{}, fmt.Errorf("%s: file too large (at most %d bytes)", path, MaxSettingsSize)
	}
	var s policy.Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return policy.Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.Validate(); err != nil {
		return policy.Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// readSettings reads a fleet file's settings mapping (the keys of a
// settings file, in YAML or JSON) onto the default settings.
func readSettings(p *fileParser, v *yaml.Node, path string, t *target) {
	if v.Kind != yaml.MappingNode {
		p.Fail(v, path, "%s (allowed: a mapping of retry settings, e.g. {maxRetries: 5, baseDelayMs: 500})", strictfile.Describe(v))
	}
	var m map[string]any
	if err := v.Decode(&m); err != nil {
		p.Fail(v, path, "%v", err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		p.Fail(v, path, "%v", err)
	}
	s, err := policy.DefaultSettings().Apply(data)
	if err == nil {
		err = s.Validate()
	}
	if err != nil {
		p.Fail(v, path, "%v", err)
	}
	t.c.Settings = &s
}
