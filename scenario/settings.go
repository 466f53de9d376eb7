package scenario

// Profiles and retry settings. A scenario's settings are its profile's
// (policy.ProfileByName) with the file's "settings" merged over them key by
// key. The rules of each key, its type and its range, are policy's:
// the file's mapping is converted to JSON and given to
// policy.Settings.Apply and Validate, and their errors are placed at the
// file's line and column.

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

// fileSource records where a scenario's profile, variant and settings are
// in its file, so that SetProfile and SetVariant can place their errors.
type fileSource struct {
	profile, variant, settings Pos // where each key's value is (zero: not in the file)
	// fields maps a settings field path as policy names it ("maxRetries",
	// "jitter.ratio", "fallback[1]") to the position of its value.
	fields map[string]Pos
}

// SetProfile makes name (one of policy.Profiles; "" is
// policy.DefaultProfile) the scenario's profile, as --profile does:
// Settings becomes that profile's settings with SettingsPatch merged over
// them. Settings changed by hand since are lost; a scenario built in Go
// without SettingsPatch gets the profile's settings as they are. It is an
// error, and sc is left as it was, when name is unknown, when the variant is
// "original" and name is not the default profile, or when the merged
// settings fail Validate (the error then names the field and, when the file
// has it, its position).
func (sc *Scenario) SetProfile(name string) error {
	_, prof, err := retry.Resolve(sc.Variant, name)
	var pair *retry.PairError
	switch {
	case errors.As(err, &pair):
		return &Error{Pos: sc.srcPos(func(s *fileSource) Pos { return s.variant }), Field: "variant", Msg: err.Error(), Err: err}
	case err != nil:
		return &Error{Pos: Pos{File: sc.Path}, Field: "profile", Msg: err.Error(), Err: err} // the name is the caller's, not the file's
	}
	pol, serr := mergeSettings(sc.Path, prof, sc.SettingsPatch, sc.src)
	if serr != nil {
		return serr
	}
	sc.Profile, sc.Settings, sc.pol = prof.Name, pol.Settings(), pol
	return nil
}

// SetVariant makes name ("sound" or "original") the scenario's variant, as
// --variant does. It is an error, and sc is left as it was, when name is
// unknown, or when name is "original" and the profile is not
// policy.DefaultProfile (the original has no other policy).
func (sc *Scenario) SetVariant(name string) error {
	if !strictfile.Contains(variants, name) {
		return &Error{Pos: Pos{File: sc.Path}, Field: "variant",
			Msg: fmt.Sprintf("unknown value %q (allowed: %s)", strictfile.Clip(name), strings.Join(variants, ", "))}
	}
	if _, _, err := retry.Resolve(name, sc.Profile); err != nil {
		return &Error{Pos: sc.srcPos(func(s *fileSource) Pos { return s.profile }), Field: "profile", Msg: err.Error(), Err: err}
	}
	if name == "original" {
		if err := originalSettings(sc); err != nil {
			return err
		}
	}
	sc.Variant = name
	return nil
}

// originalSettings refuses, for the original variant, settings the
// original does not have (any opt-in key of SPEC §1 set to other than its
// default): its table has no rule for them.
func originalSettings(sc *Scenario) *Error {
	if err := policy.Original().CheckSettings(&sc.Settings); err != nil {
		return &Error{Pos: sc.srcPos(func(s *fileSource) Pos { return s.settings }), Field: "settings", Msg: err.Error()}
	}
	return nil
}

// srcPos is the position at picks from sc's source, or the file alone.
func (sc *Scenario) srcPos(at func(*fileSource) Pos) Pos {
	if sc.src != nil {
		if p := at(sc.src); p.Line > 0 {
			return p
		}
	}
	return Pos{File: sc.Path}
}

// mergeSettings is prof's settings with patch merged over them,
// compiled (checkSettings).
func mergeSettings(file string, prof policy.Profile, patch json.RawMessage, src *fileSource) (*policy.Policy, *Error) {
	set, err := prof.Settings, error(nil)
	if len(patch) > 0 {
		set, err = set.Apply(patch)
	}
	if err != nil { // the loader checked every key: not expected
		at := Pos{File: file}
		if src != nil && src.settings.Line > 0 {
			at = src.settings
		}
		return nil, &Error{Pos: at, Field: "settings", Msg: settingsMsg(err, "", nil), Err: err}
	}
	return checkSettings(file, prof, set, src)
}

// checkSettings checks set, prof's settings with the file's merged over
// them, by compiling it (policy.Compile: the one check, whose Policy the
// scenario keeps for Policy): an error names the field, and its position
// from src when the file has it (else the settings mapping's, else the
// file's).
func checkSettings(file string, prof policy.Profile, set policy.Settings, src *fileSource) (*policy.Policy, *Error) {
	at := Pos{File: file}
	if src != nil && src.settings.Line > 0 {
		at = src.settings
	}
	pol, err := policy.Compile(set)
	if err == nil {
		return pol, nil
	}
	var se *policy.SettingsError
	if !errors.As(err, &se) {
		return nil, &Error{Pos: at, Field: "settings", Msg: err.Error(), Err: err}
	}
	value := strictfile.Clip(se.Value) // a value from the file may be long
	found := false
	if src != nil {
		// The field itself, or the key (jitter, fallback) it is part of.
		for f := se.Field; f != ""; f = parentField(f) {
			if p, ok := src.fields[f]; ok {
				at, found = p, f == se.Field
				break
			}
		}
	}
	if !found {
		value += " (from profile " + prof.Name + ")"
	}
	return nil, &Error{Pos: at, Field: "settings." + se.Field,
		Msg: fmt.Sprintf("%s is out of range (allowed: %s)", value, se.Allowed), Err: err}
}

// Policy is the scenario's Settings compiled (policy.Compile): the one
// the loader made when it checked them (Parse, Load and SetProfile check
// the settings by compiling them, and keep the result), so that running
// a loaded scenario checks nothing again; for a scenario built in Go, or
// whose Settings were changed since, they are compiled now. The error is
// Compile's (a *policy.SettingsError naming the field).
func (sc *Scenario) Policy() (*policy.Policy, error) {
	if sc.pol != nil && reflect.DeepEqual(sc.pol.Settings(), sc.Settings) {
		return sc.pol, nil
	}
	return policy.Compile(sc.Settings)
}

// parentField is the field a settings field path is part of: "jitter"
// for "jitter.ratio", "fallback" for "fallback[1]", "" for a top-level key.
func parentField(f string) string {
	if i := strings.LastIndexAny(f, ".["); i >= 0 {
		return f[:i]
	}
	return ""
}

// settingsMsg is the message of an error of policy.Settings.Apply for
// field path key (of node n, when known): without its "retry settings: "
// prefix nor the "key = " or "key: " that the error's field path already
// says, and "want a JSON object with keys K, got X" said as for the other
// mappings of the file ("expected a mapping with keys K, got a list").
func settingsMsg(err error, key string, n *yaml.Node) string {
	msg := strings.TrimPrefix(err.Error(), "retry settings: ")
	if key != "" {
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, key+" = "), key+": ")
	}
	if rest, ok := strings.CutPrefix(msg, "want a JSON object with keys "); ok && n != nil {
		if i := strings.LastIndex(rest, ", got "); i >= 0 {
			msg = fmt.Sprintf("expected a mapping with keys %s, got %s", rest[:i], strictfile.Describe(n))
		}
	}
	return msg
}

// settingsApply applies one key's JSON to the default settings: its
// error, if any, is about that key alone.
func settingsApply(patch []byte) error {
	_, err := policy.DefaultSettings().Apply(patch)
	return err
}

// jsonObject is the JSON object {key: value}.
func jsonObject(key string, value []byte) []byte {
	b := append(jsonw.AppendString([]byte{'{'}, key), ':')
	return append(append(b, value...), '}')
}

// settingsPatch reads the file's "settings" node n, with policy's rules,
// and returns it as a JSON object, keys in file order (nil for null), and
// base with it merged over; it records the position of every field in src.
// When the merge fails, the keys are tried alone, so that the error is
// placed at its key or value (inside jitter and retryAfter too). Ranges
// are not checked here (checkSettings).
func (p *parser) settingsPatch(n *yaml.Node, path string, src *fileSource, base policy.Settings) (json.RawMessage, policy.Settings) {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" && !strictfile.IsString(n) {
		return nil, base
	}
	if n.Kind != yaml.MappingNode {
		msg := "expected a mapping of retry settings, got " + strictfile.Describe(n)
		if err := settingsApply(p.toJSON(n, path, 1)); err != nil {
			msg = settingsMsg(err, "", n)
		}
		p.Fail(n, path, "%s", msg)
	}
	raw := p.toJSON(n, path, 1) // checks keys: strings, no duplicates
	set, err := base.Apply(raw)
	check := err != nil // then the keys one by one, to find the one
	if src.fields == nil {
		src.fields = make(map[string]Pos, len(n.Content)/2)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if check {
			fp := strictfile.Join(path, k.Value)
			try := func(value []byte) error { return settingsApply(jsonObject(k.Value, value)) }
			if err := try([]byte("null")); err != nil { // an unknown key
				p.failErr(k, fp, settingsKeyMsg(err, k.Value, nil), err)
			}
			if err := try(p.toJSON(v, fp, 2)); err != nil {
				at, atPath, key, err := p.blame(v, fp, k.Value, try, err)
				p.failErr(at, atPath, settingsKeyMsg(err, key, at), err)
			}
		}
		src.fields[k.Value] = p.at(v)
		switch v.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(v.Content); j += 2 {
				src.fields[k.Value+"."+v.Content[j].Value] = p.at(v.Content[j+1])
			}
		case yaml.SequenceNode:
			for j, item := range v.Content {
				src.fields[k.Value+"["+strconv.Itoa(j)+"]"] = p.at(item)
			}
		}
	}
	if check { // no key fails alone: not expected
		p.failErr(n, path, settingsMsg(err, "", n), err)
	}
	return raw, set
}

// blame finds, inside the value v of a settings key (path, key) that
// fails with err, the innermost mapping entry that fails alone (try
// applies a value of v's place); it returns that node (a key when the key
// is unknown), its path, its policy key path and its error.
func (p *parser) blame(v *yaml.Node, path, key string, try func([]byte) error, err error) (*yaml.Node, string, string, error) {
	if v.Kind != yaml.MappingNode {
		return v, path, key, err
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, sv := v.Content[i], v.Content[i+1]
		sub := func(value []byte) error { return try(jsonObject(k.Value, value)) }
		fp, fk := strictfile.Join(path, k.Value), key+"."+k.Value
		if e := sub([]byte("null")); e != nil {
			return k, fp, fk, e
		}
		if e := sub(p.toJSON(sv, fp, 3)); e != nil {
			return p.blame(sv, fp, fk, sub, e)
		}
	}
	return v, path, key, err
}

// settingsKeyMsg is settingsMsg for key, a key from the file too
// long to be quoted in full left out of the message, as strictfile.QuoteKey does.
func settingsKeyMsg(err error, key string, n *yaml.Node) string {
	msg := settingsMsg(err, key, n)
	if len(key) > strictfile.MaxKeyInPath {
		msg = strings.Replace(msg, " "+strconv.Quote(key), "", 1)
	}
	if len(msg) > 512 { // whatever the value: one bounded line
		msg = msg[:512] + "…"
	}
	return msg
}

func (p *parser) failErr(n *yaml.Node, field, msg string, err error) {
	p.FailErr(p.Pos(n), field, msg, err)
}

// toJSON converts node n (a value of the file) to JSON text: the one
// conversion, strictfile.Reader.AppendJSON.
func (p *parser) toJSON(n *yaml.Node, path string, depth int) []byte {
	return p.AppendJSON(nil, n, path, depth, maxValueDepth)
}
