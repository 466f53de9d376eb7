package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/policy"
)

// Format writes sc as a scenario file that Parse reads back to the same
// scenario (positions aside): top-level keys in block style, each turn,
// action and expectation as one flow mapping, strings quoted as JSON does
// (which YAML reads alike) unless they are plain words, objects and lists
// as JSON (which is YAML too). Keys at their
// default are left out, except variant, settings, turns and actions.
// The settings are the scenario's SettingsPatch when it has one that still
// gives its Settings, else its Settings spelled out (see settingsFlow).
func Format(sc *Scenario) []byte {
	var b strings.Builder
	for i := range topKeys {
		topKeys[i].write(&b, sc)
	}
	return []byte(b.String())
}

// plainWord is a string YAML reads back as itself without quotes.
var plainWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_./-]*$`)

func yamlString(s string) string {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~":
		return string(jsonw.AppendString(nil, s))
	}
	if plainWord.MatchString(s) {
		return s
	}
	return string(jsonw.AppendString(nil, s))
}

func msString(d time.Duration) string {
	return string(jsonw.AppendNumber(nil, float64(d)/float64(time.Millisecond)))
}

// settingsText writes the "settings" of sc as one flow mapping: its
// SettingsPatch as the file had it, when there is one and it still gives
// sc.Settings over the profile's settings; otherwise sc.Settings spelled
// out over the profile's (settingsFlow).
func settingsText(sc *Scenario) string {
	prof, err := policy.ProfileByName(sc.Profile)
	if err != nil {
		prof, _ = policy.ProfileByName(policy.DefaultProfile)
	}
	if len(sc.SettingsPatch) > 0 {
		if set, err := prof.Settings.Apply(sc.SettingsPatch); err == nil && set.Equal(sc.Settings) {
			if out, err := jsonFlow(sc.SettingsPatch); err == nil {
				return out
			}
		}
	}
	return settingsFlow(sc.Settings, prof.Settings)
}

// jsonFlow writes a JSON value as a YAML flow value: mappings and lists in
// flow style, keys and strings as yamlString writes them, numbers as the
// JSON has them.
func jsonFlow(raw []byte) (string, error) {
	var b strings.Builder
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if err := jsonFlowValue(&b, dec); err != nil {
		return "", err
	}
	return b.String(), nil
}

func jsonFlowValue(b *strings.Builder, dec *jsontext.Decoder) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch k := tok.Kind(); k {
	case '{', '[':
		end := jsontext.Kind('}')
		if k == '[' {
			end = ']'
		}
		b.WriteByte(byte(k))
		for i := 0; dec.PeekKind() != end; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if k == '{' {
				name, err := dec.ReadToken()
				if err != nil {
					return err
				}
				b.WriteString(yamlString(name.String()) + ": ")
			}
			if err := jsonFlowValue(b, dec); err != nil {
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		b.WriteByte(byte(end))
	case '"':
		b.WriteString(yamlString(tok.String()))
	default: // numbers as written, true, false, null
		b.WriteString(tok.String())
	}
	return nil
}

// settingsFlow writes set as one flow mapping: the original's three keys,
// then every other key whose value differs from base's (a profile's
// settings; for the default profile, the keys not at their default).
func settingsFlow(set, base policy.Settings) string {
	s, o := set.Normalized(), base.Normalized()
	parts := []string{"enabled: " + strconv.FormatBool(s.Enabled), "maxRetries: " + strconv.Itoa(s.MaxRetries), "baseDelayMs: " + msString(s.BaseDelay)}
	if s.BackoffFactor != o.BackoffFactor {
		parts = append(parts, "backoffFactor: "+flowValue(s.BackoffFactor))
	}
	if s.MaxBackoff != o.MaxBackoff {
		parts = append(parts, "maxBackoffMs: "+msString(s.MaxBackoff))
	}
	if s.Jitter != o.Jitter {
		parts = append(parts, fmt.Sprintf("jitter: {mode: %s, ratio: %s}", yamlString(s.Jitter.Mode), flowValue(s.Jitter.Ratio)))
	}
	if ra := s.RetryAfter; ra != o.RetryAfter {
		parts = append(parts, fmt.Sprintf("retryAfter: {use: %s, maxHintMs: %s, maxWaitMs: %s}", yamlString(ra.Use), msString(ra.MaxHint), msString(ra.MaxWait)))
	}
	if s.Classify != o.Classify {
		parts = append(parts, "classify: "+yamlString(s.Classify))
	}
	for _, l := range []struct {
		k      string
		vs, ov []string
	}{{"retryablePatterns", s.RetryablePatterns, o.RetryablePatterns}, {"nonRetryablePatterns", s.NonRetryablePatterns, o.NonRetryablePatterns}} {
		if !slices.Equal(l.vs, l.ov) {
			parts = append(parts, l.k+": "+stringsFlow(l.vs))
		}
	}
	if s.Persistent != o.Persistent {
		parts = append(parts, "persistent: "+strconv.FormatBool(s.Persistent))
	}
	if !slices.Equal(s.Fallback, o.Fallback) {
		parts = append(parts, "fallback: "+stringsFlow(s.Fallback))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// stringsFlow writes a list of strings as a flow list.
func stringsFlow(vs []string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = yamlString(v)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func turnFlow(t *Turn) string {
	parts := []string{"stopReason: " + string(t.StopReason)}
	if t.ErrorMessage != "" {
		parts = append(parts, "errorMessage: "+string(jsonw.AppendString(nil, t.ErrorMessage)))
	}
	if t.Usage != (Usage{}) {
		parts = append(parts, fmt.Sprintf("usage: {input: %d, cacheRead: %d}", t.Usage.Input, t.Usage.CacheRead))
	}
	if t.SwitchModel {
		parts = append(parts, "switchModel: true")
	}
	if t.Duration != 0 {
		parts = append(parts, "durationMs: "+msString(t.Duration))
	}
	if t.Status != 0 {
		parts = append(parts, "status: "+strconv.Itoa(t.Status))
	}
	if len(t.Headers) > 0 {
		hs := make([]string, 0, len(t.Headers))
		for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
			hs = append(hs, yamlString(name)+": "+yamlString(t.Headers[name]))
		}
		parts = append(parts, "headers: {"+strings.Join(hs, ", ")+"}")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func actionFlow(a *Action) string {
	parts := []string{"at: " + msString(a.At), "do: " + a.Do}
	if a.ID != "" {
		parts = append(parts, "id: "+yamlString(a.ID))
	}
	if a.Enabled != nil {
		parts = append(parts, "enabled: "+strconv.FormatBool(*a.Enabled))
	}
	if a.Message != "" {
		parts = append(parts, "message: "+string(jsonw.AppendString(nil, a.Message)))
	}
	if a.Settings != nil {
		parts = append(parts, "settings: "+string(a.Settings)) // JSON: a YAML flow mapping
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// FormatEvent writes one expected event as a flow mapping, its keys in
// file order.
func FormatEvent(ev *ExpectEvent) []byte { return []byte(eventFlow(ev)) }

func eventFlow(ev *ExpectEvent) string {
	keys := slices.Clone(ev.Keys)
	for k := range ev.Fields {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) > len(ev.Keys) {
		slices.Sort(keys[len(ev.Keys):])
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+flowValue(ev.Fields[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func flowValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return yamlString(v)
	case bool:
		return strconv.FormatBool(v)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return strconv.FormatInt(int64(v), 10)
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	raw, err := json.Marshal(v) // objects and lists: JSON is YAML
	if err != nil {
		return "null"
	}
	return string(raw)
}

func finalFlow(f *ExpectFinal) string {
	var parts []string
	if f.State != nil {
		parts = append(parts, "state: "+*f.State)
	}
	if f.Attempt != nil {
		parts = append(parts, "attempt: "+strconv.Itoa(*f.Attempt))
	}
	if f.IsRetrying != nil {
		parts = append(parts, "isRetrying: "+strconv.FormatBool(*f.IsRetrying))
	}
	if f.HasUnresolved || f.UnresolvedPrompts != nil {
		ps := make([]string, len(f.UnresolvedPrompts))
		for i, p := range f.UnresolvedPrompts {
			ps[i] = strconv.Itoa(p)
		}
		parts = append(parts, "unresolvedPrompts: ["+strings.Join(ps, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// wrap breaks s into lines of at most width characters, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
