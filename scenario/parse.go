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
	"github.com/ohmypi/retryfsm/policy/retry"
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

// millis is a duration in whole milliseconds, spelled as in every file
// kind (strictfile.Duration): an integer number of milliseconds, or a Go
// duration such as "1.5s".
func (p *parser) millis(n *yaml.Node, path string) time.Duration {
	return p.Duration(n, path, time.Millisecond, time.Duration(maxMs)*time.Millisecond)
}

func (p *parser) nonNeg(n *yaml.Node, path string, hi int64) int64 {
	if hi == math.MaxInt64 {
		return p.Integer(n, path, 0, hi, "a non-negative integer")
	}
	return p.Integer(n, path, 0, hi, fmt.Sprintf("an integer from 0 to %d", hi))
}

var (
	compactionKeys = []string{"enabled", "succeed"}
	turnKeys       = []string{"stopReason", "errorMessage", "usage", "switchModel", "durationMs", "status", "headers"}
	randomKeys     = []string{"fixed"}
	usageKeys      = []string{"input", "cacheRead"}
	actionKeys     = append([]string{"at", "do", "id"}, argNames()...)
	expectKeys     = []string{"events", "final"}
	finalKeys      = []string{"state", "attempt", "isRetrying", "unresolvedPrompts"}

	variants    = session.VariantNames()
	stopReasons = []string{string(policy.StopReasonStop), string(policy.StopReasonLength),
		string(policy.StopReasonToolUse), string(policy.StopReasonError), string(policy.StopReasonAborted)}
	actionKinds = session.CommandNames()
	finalStates = []string{"idle", "backoff", "continuing", "exhausted", "cancelled"}
)

// maxEpochMs is 9999-12-31T23:59:59.999Z.
const maxEpochMs = int64(253402300799999)

// maxTokens keeps input+cacheRead from overflowing int64.
const maxTokens = math.MaxInt64 / 2

func (p *parser) scenario(root *yaml.Node) *Scenario {
	sc := &Scenario{Path: p.File}
	for i := range topKeys {
		if def := topKeys[i].def; def != nil {
			def(sc)
		}
	}
	if p.File != "" {
		base := filepath.Base(p.File)
		sc.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	r := &reading{sc: sc, src: &fileSource{}}
	r.prof, _ = policy.ProfileByName(policy.DefaultProfile)
	p.Mapping(root, "", topKeyNames, func(e strictfile.Entry) {
		for i := range topKeys {
			if topKeys[i].name == e.Key {
				topKeys[i].read(p, r, e.V, e.Key)
			}
		}
	})
	src, prof, settings := r.src, r.prof, r.settings
	if src.profile != (Pos{}) || src.variant != (Pos{}) || src.settings != (Pos{}) {
		sc.src = src
	}
	if _, _, err := retry.Resolve(sc.Variant, sc.Profile); err != nil {
		p.failAt(src.profile, "profile", err.Error())
	}
	sc.Settings = prof.Settings
	if settings != nil {
		sc.SettingsPatch, sc.Settings = p.settingsPatch(settings, "settings", src, prof.Settings)
	}
	pol, err := checkSettings(p.File, prof, sc.Settings, sc.src)
	if err != nil {
		p.FailErr(strictfile.Pos(err.Pos), err.Field, err.Msg, err.Err)
	}
	sc.pol = pol
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

// An action is a command of session's table (session.Commands): "do" is
// its name, and its arguments are keys, read by their kind. An ArgText
// argument may be left out (the simulated session reads no text); the
// others are required; wire-only ones are no keys.
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
		default:
			p.arg(&a, argKinds[e.Key], e.V, fp)
		}
	})
	if _, ok := fields["at"]; !ok {
		p.Fail(n, strictfile.Join(path, "at"), "missing required key (a non-negative integer number of milliseconds)")
	}
	if _, ok := fields["do"]; !ok {
		p.Fail(n, strictfile.Join(path, "do"), "missing required key (one of: %s)", strings.Join(actionKinds, ", "))
	}
	cmd, _ := session.CommandByName(a.Do)
	for _, key := range actionKeys[3:] {
		if e, ok := fields[key]; ok && !takes(&cmd, key) {
			p.Fail(e.K, strictfile.Join(path, key), "not allowed for do: %s (only for %s)", a.Do, strings.Join(takenBy(key), ", "))
		}
	}
	for _, arg := range cmd.Args {
		if _, ok := fields[arg.Name]; !ok && !arg.Optional && !arg.Kind.WireOnly() && arg.Kind != session.ArgText {
			p.Fail(n, strictfile.Join(path, arg.Name), "missing required key for do: %s (%s)", a.Do, arg.Kind.Want())
		}
	}
	return a
}

// arg reads an action's argument of kind k into a.
func (p *parser) arg(a *Action, k session.ArgKind, v *yaml.Node, path string) {
	switch k {
	case session.ArgBool:
		b := p.Boolean(v, path)
		a.Enabled = &b
	case session.ArgText:
		a.Message = p.Str(v, path)
	case session.ArgSettings:
		if v.Kind != yaml.MappingNode {
			p.Fail(v, path, "expected %s, got %s", k.Want(), strictfile.Describe(v))
		}
		// Keys and types are checked here, ranges when the action runs
		// (merged over the settings in force then, as on the wire).
		a.Settings, _ = p.settingsPatch(v, path, &fileSource{}, policy.DefaultSettings())
	}
}

// argKinds are the kinds of the actions' argument keys (a key has one
// kind in every command that takes it: TestActionKeys).
var argKinds = map[string]session.ArgKind{}

// argNames lists the commands' arguments that are keys of an action, in
// the table's order, once each.
func argNames() []string {
	var names []string
	for _, c := range session.Commands() {
		for _, arg := range c.Args {
			if _, seen := argKinds[arg.Name]; !seen && !arg.Kind.WireOnly() {
				argKinds[arg.Name] = arg.Kind
				names = append(names, arg.Name)
			}
		}
	}
	return names
}

// takes reports whether command c has argument key.
func takes(c *session.Command, key string) bool {
	for _, arg := range c.Args {
		if arg.Name == key {
			return true
		}
	}
	return false
}

// takenBy lists the commands that have argument key.
func takenBy(key string) []string {
	var names []string
	for _, c := range session.Commands() {
		if takes(&c, key) {
			names = append(names, c.Name)
		}
	}
	return names
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

// object fills dst from mapping n (keys must be distinct strings), its
// values as JSON reads them (strictfile.Reader.JSONValue, the one
// conversion), and returns the keys in file order.
func (p *parser) object(n *yaml.Node, path string, dst map[string]any, depth int) ([]string, map[string]any) {
	m, _ := p.JSONValue(n, path, depth, maxValueDepth).(map[string]any)
	keys := make([]string, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i].Value
		keys = append(keys, k)
		dst[k] = m[k]
	}
	return keys, dst
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
