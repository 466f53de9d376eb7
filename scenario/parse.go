package scenario

// The scenario keys: what each means, its type and range, read from the
// decoded file with the one strict reader.

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/internal/termsafe"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/session"
	"github.com/ohmypi/retryfsm/trace"
)

// parser reads a scenario file with the one strict reader.
type parser struct{ strictfile.Reader }

// at is node n's position.
func (p *parser) at(n *yaml.Node) Pos { return Pos(p.Pos(n)) }

// failAt stops the reading with an error at pos, for key path field.
func (p *parser) failAt(pos Pos, field, msg string) { p.FailPos(strictfile.Pos(pos), field, msg) }

// maxMs is the largest millisecond count that fits a time.Duration.
const maxMs = math.MaxInt64 / int64(time.Millisecond)

func (p *parser) millis(n *yaml.Node, path string) time.Duration {
	v := p.Integer(n, path, 0, maxMs, fmt.Sprintf("a non-negative integer number of milliseconds, at most %d", maxMs))
	return time.Duration(v) * time.Millisecond
}

func (p *parser) nonNeg(n *yaml.Node, path string, hi int64) int64 {
	if hi == math.MaxInt64 {
		return p.Integer(n, path, 0, hi, "a non-negative integer")
	}
	return p.Integer(n, path, 0, hi, fmt.Sprintf("an integer from 0 to %d", hi))
}

var (
	topKeys = []string{"name", "description", "variant", "profile", "settings", "contextWindow", "compaction",
		"initialPrompt", "prompt", "epochMs", "provider", "modelId", "baseUrl", "sessionId",
		"seed", "random", "turns", "actions", "expect"}
	compactionKeys = []string{"enabled", "succeed"}
	turnKeys       = []string{"stopReason", "errorMessage", "usage", "switchModel", "durationMs", "status", "headers"}
	randomKeys     = []string{"fixed"}
	usageKeys      = []string{"input", "cacheRead"}
	actionKeys     = []string{"at", "do", "id", "enabled", "message"}
	expectKeys     = []string{"events", "final"}
	finalKeys      = []string{"state", "attempt", "isRetrying", "unresolvedPrompts"}

	variants    = session.VariantNames()
	stopReasons = []string{string(policy.StopReasonStop), string(policy.StopReasonLength),
		string(policy.StopReasonToolUse), string(policy.StopReasonError), string(policy.StopReasonAborted)}
	actionKinds = []string{"abort_retry", "abort", "set_auto_retry", "prompt", "get_state"}
	finalStates = []string{"idle", "backoff", "continuing", "exhausted", "cancelled"}
)

// maxEpochMs is 9999-12-31T23:59:59.999Z.
const maxEpochMs = int64(253402300799999)

// maxTokens keeps input+cacheRead from overflowing int64.
const maxTokens = math.MaxInt64 / 2

func (p *parser) scenario(root *yaml.Node) *Scenario {
	sc := &Scenario{
		Path:          p.File,
		Variant:       defaultVariant,
		Profile:       policy.DefaultProfile,
		ContextWindow: defaultContextWindow,
		Compaction:    Compaction{Enabled: true, Succeed: true},
		InitialPrompt: true,
		Prompt:        defaultPrompt,
		EpochMs:       defaultEpochMs,
		Provider:      defaultProvider,
		ModelID:       defaultModelID,
		BaseURL:       defaultBaseURL,
		SessionID:     defaultSessionID,
		Seed:          defaultSeed,
	}
	if p.File != "" {
		base := filepath.Base(p.File)
		sc.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	src := &fileSource{}
	prof, _ := policy.ProfileByName(policy.DefaultProfile)
	var settings *yaml.Node // read once the profile is known
	p.Mapping(root, "", topKeys, func(e strictfile.Entry) {
		path, v := e.Key, e.V
		switch e.Key {
		case "name":
			sc.Name = p.Str(v, path)
		case "description":
			sc.Description = p.Str(v, path)
		case "variant":
			sc.Variant = p.Enum(v, path, variants)
			src.variant = p.at(v)
		case "profile":
			name := p.Str(v, path)
			var err error
			if prof, err = policy.ProfileByName(name); err != nil || name == "" {
				p.Fail(v, path, "unknown profile %q (allowed: %s)", strictfile.Clip(name), strings.Join(policy.ProfileNames(), ", "))
			}
			sc.Profile = prof.Name
			src.profile = p.at(v)
		case "settings":
			settings = v
			src.settings = p.at(v)
		case "contextWindow":
			sc.ContextWindow = p.nonNeg(v, path, math.MaxInt64)
		case "compaction":
			p.Mapping(v, path, compactionKeys, func(e strictfile.Entry) {
				switch e.Key {
				case "enabled":
					sc.Compaction.Enabled = p.Boolean(e.V, strictfile.Join(path, e.Key))
				case "succeed":
					sc.Compaction.Succeed = p.Boolean(e.V, strictfile.Join(path, e.Key))
				}
			})
		case "initialPrompt":
			sc.InitialPrompt = p.Boolean(v, path)
		case "prompt":
			sc.Prompt = p.Str(v, path)
		case "epochMs":
			sc.EpochMs = p.nonNeg(v, path, maxEpochMs)
		case "provider":
			sc.Provider = p.Str(v, path)
		case "modelId":
			sc.ModelID = p.Str(v, path)
		case "baseUrl":
			sc.BaseURL = p.Str(v, path)
		case "sessionId":
			sc.SessionID = p.Str(v, path)
		case "seed":
			sc.Seed = p.Integer(v, path, 1, math.MaxInt64, fmt.Sprintf("an integer from 1 to %d", int64(math.MaxInt64)))
		case "random":
			fields := p.Mapping(v, path, randomKeys, func(e strictfile.Entry) {
				sc.RandomFixed = p.unitNumber(e.V, strictfile.Join(path, e.Key))
				sc.HasRandomFixed = true
			})
			if _, ok := fields["fixed"]; !ok {
				p.Fail(v, strictfile.Join(path, "fixed"), "missing required key (a number from 0 to 1, 1 excluded: every random draw)")
			}
		case "turns":
			items := p.Seq(v, path, "turns", maxEntries)
			sc.Turns = make([]Turn, 0, len(items))
			for i, item := range items {
				sc.Turns = append(sc.Turns, p.turn(item, strictfile.Index(path, i)))
			}
		case "actions":
			items := p.Seq(v, path, "actions", maxEntries)
			sc.Actions = make([]Action, 0, len(items))
			for i, item := range items {
				sc.Actions = append(sc.Actions, p.action(item, strictfile.Index(path, i)))
			}
		case "expect":
			sc.Expect = p.expect(v, path)
		}
	})
	if src.profile != (Pos{}) || src.variant != (Pos{}) || src.settings != (Pos{}) {
		sc.src = src
	}
	if _, _, err := policy.Resolve(sc.Variant, sc.Profile); err != nil {
		p.failAt(src.profile, "profile", err.Error())
	}
	sc.Settings = prof.Settings
	if settings != nil {
		sc.SettingsPatch, sc.Settings = p.settingsPatch(settings, "settings", src, prof.Settings)
	}
	if err := checkSettings(p.File, prof, sc.Settings, sc.src); err != nil {
		p.FailErr(strictfile.Pos(err.Pos), err.Field, err.Msg, err.Err)
	}
	if sc.Variant == "original" {
		if err := originalSettings(sc); err != nil {
			p.FailErr(strictfile.Pos(err.Pos), err.Field, err.Msg, err.Err)
		}
	}
	return sc
}

func (p *parser) turn(n *yaml.Node, path string) Turn {
	t := Turn{Pos: p.at(n)}
	fields := p.Mapping(n, path, turnKeys, func(e strictfile.Entry) {
		fp := strictfile.Join(path, e.Key)
		switch e.Key {
		case "stopReason":
			t.StopReason = policy.StopReason(p.Enum(e.V, fp, stopReasons))
		case "errorMessage":
			t.ErrorMessage = p.Str(e.V, fp)
		case "usage":
			p.Mapping(e.V, fp, usageKeys, func(u strictfile.Entry) {
				switch u.Key {
				case "input":
					t.Usage.Input = p.nonNeg(u.V, strictfile.Join(fp, u.Key), maxTokens)
				case "cacheRead":
					t.Usage.CacheRead = p.nonNeg(u.V, strictfile.Join(fp, u.Key), maxTokens)
				}
			})
		case "switchModel":
			t.SwitchModel = p.Boolean(e.V, fp)
		case "durationMs":
			t.Duration = p.millis(e.V, fp)
		case "status":
			t.Status = int(p.Integer(e.V, fp, 100, 599, "an HTTP status code, an integer from 100 to 599"))
		case "headers":
			t.Headers = p.headers(e.V, fp)
		}
	})
	if _, ok := fields["stopReason"]; !ok {
		p.Fail(n, strictfile.Join(path, "stopReason"), "missing required key (one of: %s)", strings.Join(stopReasons, ", "))
	}
	return t
}

// headers reads a turn's "headers": a mapping of header names, lower-case
// HTTP tokens (policy.AssistantMessage.ValidateHTTP), to strings; nil when
// empty.
func (p *parser) headers(n *yaml.Node, path string) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.Fail(n, path, "expected a mapping of header names (lower-case) to strings, got %s", strictfile.Describe(n))
	}
	h := make(map[string]string, len(n.Content)/2)
	at := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p.RejectMerge(k, path)
		if k.Kind != yaml.ScalarNode || !strictfile.IsString(k) {
			p.Fail(k, path, "header names must be strings, got %s", strictfile.Describe(k))
		}
		name, fp := k.Value, strictfile.Join(path, k.Value)
		if prev, dup := at[name]; dup {
			p.Fail(k, fp, "duplicate header%s (first at line %d:%d)", strictfile.QuoteKey(name), prev.Line, prev.Column)
		}
		at[name] = k
		if err := (policy.AssistantMessage{Headers: map[string]string{name: ""}}).ValidateHTTP(); err != nil {
			msg := strings.TrimPrefix(err.Error(), "headers: ")
			if len(name) > strictfile.MaxKeyInPath { // the field path shows it, shortened
				msg = "invalid header name (a name is lower-case letters, digits and !#$%&'*+-.^_`|~)"
			}
			p.Fail(k, fp, "%s", msg)
		}
		if v.Kind != yaml.ScalarNode || !strictfile.IsString(v) {
			hint := ""
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
				hint = ` (write "" for an empty value)`
			case v.Kind == yaml.ScalarNode:
				hint = fmt.Sprintf(" (quote it: %s)", jsonw.AppendString(nil, strictfile.Clip(v.Value)))
			}
			p.Fail(v, fp, "expected a string, got %s%s", strictfile.Describe(v), hint)
		}
		h[name] = v.Value
	}
	if len(h) == 0 {
		return nil
	}
	return h
}

// unitNumber reads a number in [0, 1).
func (p *parser) unitNumber(n *yaml.Node, path string) float64 {
	const want = "a number from 0 to 1, 1 excluded"
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || strictfile.IsString(n) {
		p.Fail(n, path, "expected %s, got %s", want, strictfile.Describe(n))
	}
	var f float64
	if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		p.Fail(n, path, "expected %s, got %s", want, strictfile.Describe(n))
	}
	if f < 0 || f >= 1 {
		p.Fail(n, path, "%s is out of range (allowed: %s)", strictfile.Clip(n.Value), want)
	}
	return f
}

func (p *parser) action(n *yaml.Node, path string) Action {
	a := Action{Pos: p.at(n)}
	fields := p.Mapping(n, path, actionKeys, func(e strictfile.Entry) {
		fp := strictfile.Join(path, e.Key)
		switch e.Key {
		case "at":
			a.At = p.millis(e.V, fp)
		case "do":
			a.Do = p.Enum(e.V, fp, actionKinds)
		case "id":
			a.ID = p.Str(e.V, fp)
		case "enabled":
			b := p.Boolean(e.V, fp)
			a.Enabled = &b
		case "message":
			a.Message = p.Str(e.V, fp)
		}
	})
	if _, ok := fields["at"]; !ok {
		p.Fail(n, strictfile.Join(path, "at"), "missing required key (a non-negative integer number of milliseconds)")
	}
	if _, ok := fields["do"]; !ok {
		p.Fail(n, strictfile.Join(path, "do"), "missing required key (one of: %s)", strings.Join(actionKinds, ", "))
	}
	if e, ok := fields["enabled"]; ok && a.Do != "set_auto_retry" {
		p.Fail(e.K, strictfile.Join(path, "enabled"), "not allowed for do: %s (only for set_auto_retry)", a.Do)
	}
	if _, ok := fields["enabled"]; !ok && a.Do == "set_auto_retry" {
		p.Fail(n, strictfile.Join(path, "enabled"), "missing required key for do: set_auto_retry (true or false)")
	}
	if e, ok := fields["message"]; ok && a.Do != "prompt" {
		p.Fail(e.K, strictfile.Join(path, "message"), "not allowed for do: %s (only for prompt)", a.Do)
	}
	return a
}

func (p *parser) expect(n *yaml.Node, path string) *Expect {
	x := &Expect{}
	p.Mapping(n, path, expectKeys, func(e strictfile.Entry) {
		fp := strictfile.Join(path, e.Key)
		switch e.Key {
		case "events":
			items := p.Seq(e.V, fp, "event objects", 0)
			x.Events = make([]ExpectEvent, 0, len(items))
			for i, item := range items {
				x.Events = append(x.Events, p.event(item, strictfile.Index(fp, i)))
			}
		case "final":
			x.Final = p.final(e.V, fp)
		}
	})
	return x
}

func (p *parser) event(n *yaml.Node, path string) ExpectEvent {
	if n.Kind != yaml.MappingNode {
		p.Fail(n, path, "expected a mapping of trace fields, got %s", strictfile.Describe(n))
	}
	ev := ExpectEvent{Fields: make(map[string]any, len(n.Content)/2), Pos: p.at(n)}
	ev.Keys, _ = p.object(n, path, ev.Fields, 1)
	p.checkEvent(n, path, ev.Fields)
	return ev
}

// checkEvent validates an expected event against the trace's schema
// (package trace): a known type, fields of that type (of some type when
// none is given), values of the field's kind. Nested objects are checked
// the same way; a listed subset of fields is fine.
func (p *parser) checkEvent(n *yaml.Node, path string, fields map[string]any) {
	typ := trace.Type(0)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "type" {
			name, ok := fields["type"].(string)
			if !ok {
				p.Fail(v, strictfile.Join(path, "type"), "expected the name of a trace line type, got %s (allowed: %s)", strictfile.Describe(v), trace.TypeNames())
			}
			if typ, ok = trace.ParseType(name); !ok {
				p.Fail(v, strictfile.Join(path, "type"), "unknown trace line type %q (allowed: %s)", termsafe.Short(name, strictfile.MaxKeyInPath), trace.TypeNames())
			}
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		fp := strictfile.Join(path, k.Value)
		if typ != 0 {
			f, ok := trace.Lookup(typ, k.Value)
			if !ok {
				p.Fail(k, fp, "unknown field for type %s (allowed: %s)", typ, trace.Names(trace.Fields(typ)))
			}
			p.checkValue(v, fp, f, fields[k.Value])
			continue
		}
		// No type: the field of some type, with a value of its kind.
		var first *trace.Field
		matched := false
		for _, t := range trace.Types() {
			if f, ok := trace.Lookup(t, k.Value); ok {
				if first == nil {
					first = f
				}
				if p.valueFits(f, fields[k.Value]) {
					matched = true
					break
				}
			}
		}
		switch {
		case first == nil:
			p.Fail(k, fp, "no trace line has this field (give \"type\" to check the fields of one type)")
		case !matched:
			p.checkValue(v, fp, first, fields[k.Value])
		}
	}
}

// checkValue fails unless value (from node v) is of field f's kind.
func (p *parser) checkValue(v *yaml.Node, path string, f *trace.Field, value any) {
	if f.Kind == trace.KindObject {
		m, ok := value.(map[string]any)
		if !ok {
			p.Fail(v, path, "expected %s (the fields %s), got %s", f.Kind, trace.Names(f.Fields), strictfile.Describe(v))
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, sv := v.Content[i], v.Content[i+1]
			sub, ok := f.Sub(k.Value)
			if !ok {
				p.Fail(k, strictfile.Join(path, k.Value), "unknown field of %s (allowed: %s)", f.Name, trace.Names(f.Fields))
			}
			p.checkValue(sv, strictfile.Join(path, k.Value), sub, m[k.Value])
		}
		return
	}
	if !p.valueFits(f, value) {
		p.Fail(v, path, "expected %s, got %s", f.Kind, strictfile.Describe(v))
	}
}

// valueFits reports whether value is of field f's kind (objects: any
// mapping; checkValue looks inside).
func (p *parser) valueFits(f *trace.Field, value any) bool {
	switch f.Kind {
	case trace.KindString:
		_, ok := value.(string)
		return ok
	case trace.KindNumber:
		_, ok := value.(float64)
		return ok
	case trace.KindNumberOrNull:
		_, ok := value.(float64)
		return ok || value == nil
	case trace.KindBool:
		_, ok := value.(bool)
		return ok
	case trace.KindNumbers:
		xs, ok := value.([]any)
		for _, x := range xs {
			if _, isNum := x.(float64); !isNum {
				return false
			}
		}
		return ok
	case trace.KindObject:
		_, ok := value.(map[string]any)
		return ok
	}
	return false
}

// object fills dst from mapping n (keys must be distinct strings) and returns
// the keys in file order.
func (p *parser) object(n *yaml.Node, path string, dst map[string]any, depth int) ([]string, map[string]any) {
	keys := make([]string, 0, len(n.Content)/2)
	at := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p.RejectMerge(k, path)
		if k.Kind != yaml.ScalarNode || !strictfile.IsString(k) {
			p.Fail(k, path, "keys must be strings, got %s", strictfile.Describe(k))
		}
		if prev, dup := at[k.Value]; dup {
			p.Fail(k, strictfile.Join(path, k.Value), "duplicate key%s (first at line %d:%d)", strictfile.QuoteKey(k.Value), prev.Line, prev.Column)
		}
		at[k.Value] = k
		keys = append(keys, k.Value)
		dst[k.Value] = p.jsonValue(v, strictfile.Join(path, k.Value), depth+1)
	}
	return keys, dst
}

// jsonValue converts n to a JSON-typed Go value.
func (p *parser) jsonValue(n *yaml.Node, path string, depth int) any {
	if depth > maxValueDepth {
		p.Fail(n, path, "value nested more than %d levels deep", maxValueDepth)
	}
	switch n.Kind {
	case yaml.MappingNode:
		_, m := p.object(n, path, make(map[string]any, len(n.Content)/2), depth)
		return m
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for i, c := range n.Content {
			list = append(list, p.jsonValue(c, strictfile.Index(path, i), depth+1))
		}
		return list
	case yaml.ScalarNode:
		if strictfile.IsString(n) {
			return n.Value
		}
		switch n.ShortTag() {
		case "!!null":
			return nil
		case "!!bool":
			return p.Boolean(n, path)
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				p.Fail(n, path, "expected a JSON value (string, finite number, boolean, null, list or mapping), got %s", strictfile.Describe(n))
			}
			return f
		}
	}
	p.Fail(n, path, "expected a JSON value (string, finite number, boolean, null, list or mapping), got %s", strictfile.Describe(n))
	return nil
}

func (p *parser) final(n *yaml.Node, path string) *ExpectFinal {
	f := &ExpectFinal{Pos: p.at(n)}
	p.Mapping(n, path, finalKeys, func(e strictfile.Entry) {
		fp := strictfile.Join(path, e.Key)
		switch e.Key {
		case "state":
			s := p.Enum(e.V, fp, finalStates)
			f.State = &s
		case "attempt":
			a := int(p.nonNeg(e.V, fp, math.MaxInt32))
			f.Attempt = &a
		case "isRetrying":
			b := p.Boolean(e.V, fp)
			f.IsRetrying = &b
		case "unresolvedPrompts":
			items := p.Seq(e.V, fp, "non-negative integers", 0)
			f.HasUnresolved = true
			f.UnresolvedPrompts = make([]int, 0, len(items))
			for i, item := range items {
				f.UnresolvedPrompts = append(f.UnresolvedPrompts, int(p.nonNeg(item, strictfile.Index(fp, i), math.MaxInt32)))
			}
		}
	})
	return f
}
