package fleet

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/suggest"
	"gopkg.in/yaml.v3"
)

// Spec is a fleet file: the fleet and its sweep dimensions.
type Spec struct {
	// Config is the fleet (Config.Profiles is the first mix; Config.Seed
	// the first seed).
	Config Config
	// Description is the file's description.
	Description string
	// Mixes are the profile mixes to run, one run each (the key profile,
	// a mix or a list of mixes); at least one.
	Mixes []Mix
	// SeedFrom and SeedTo are the seeds to run, one run each (the key
	// seeds, "A-B"; else the key seed alone).
	SeedFrom, SeedTo int64
}

// NewSpec is the spec of c alone: its mix and its seed.
func NewSpec(c Config) *Spec {
	c = c.normalized()
	return &Spec{Config: c, Mixes: []Mix{c.Profiles}, SeedFrom: c.Seed, SeedTo: c.Seed}
}

// Configs expands the spec: for each mix, for each seed, one Config.
func (s *Spec) Configs() []Config {
	var out []Config
	for _, m := range s.Mixes {
		for seed := s.SeedFrom; seed <= s.SeedTo && seed >= 1; seed++ {
			c := s.Config
			c.Profiles, c.Seed = m, seed
			out = append(out, c)
		}
	}
	return out
}

// MaxFileSize is the largest fleet file read, in bytes.
const MaxFileSize = 1 << 20

// FileKeys are a fleet file's top-level keys, in SPEC.md §15.3's order.
var FileKeys = []string{"name", "description", "sessions", "rate", "prompts", "think", "calls", "latency", "errorLatency",
	"capacity", "overCapacity", "outages", "errors", "overflow", "promptErrors", "profile", "sdk", "horizon", "recovery",
	"compaction", "seed", "seeds"}

var (
	capacityKeys     = []string{"rps", "burst", "maxInFlight"}
	overCapacityKeys = []string{"hint", "retryAfter"}
	outageKeys       = []string{"start", "duration", "kind", "retryAfter"}
	promptErrorKeys  = []string{"count", "kind"}
	compactionKeys   = []string{"enabled", "succeed"}
)

// Pos is a position in a fleet file; Line and Column are 1-based, 0 when
// unknown.
type Pos struct {
	File         string
	Line, Column int
}

// String gives "file:line:col", leaving out what is unknown.
func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
		if p.Column > 0 {
			s += ":" + strconv.Itoa(p.Column)
		}
	}
	return s
}

// FileError is an invalid fleet file: where, which key, and what is wrong
// and allowed.
type FileError struct {
	Pos   Pos
	Field string // the key path, e.g. "outages[0].kind"; "" for the file
	Msg   string
	Err   error // the underlying error (I/O), if any
}

// Error gives "file:3:14: outages[0].kind: ...".
func (e *FileError) Error() string {
	s := e.Pos.String()
	if e.Field != "" {
		if s != "" {
			s += ": "
		}
		s += e.Field
	}
	if s != "" {
		s += ": "
	}
	return s + e.Msg
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// Load reads the fleet file path (YAML).
func Load(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &FileError{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	if len(data) > MaxFileSize {
		return nil, &FileError{Pos: Pos{File: path}, Msg: fmt.Sprintf("file too large (at most %d bytes)", MaxFileSize)}
	}
	return Parse(path, data)
}

// Parse reads a fleet file's text; name is the file's path, for errors and
// the fleet's default name (its base name without the extension).
func Parse(name string, data []byte) (*Spec, error) {
	p := &fileParser{file: name, at: map[string]*yaml.Node{}}
	spec, err := p.parse(data)
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil { // every run, without expanding the seeds
		var fe *FieldError
		if errors.As(err, &fe) {
			return nil, &FileError{Pos: p.posOf(fe.Field), Field: fe.Field, Msg: fe.Msg}
		}
		return nil, &FileError{Pos: Pos{File: name}, Msg: err.Error()}
	}
	return spec, nil
}

type fileParser struct {
	file string
	// at holds the node of each key path read, to place Validate's errors.
	at  map[string]*yaml.Node
	err *FileError
}

func (p *fileParser) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: p.file}
	}
	return Pos{File: p.file, Line: n.Line, Column: n.Column}
}

// posOf is where key path field (or its nearest parent read) is.
func (p *fileParser) posOf(field string) Pos {
	for f := field; f != ""; {
		if n := p.at[f]; n != nil {
			return p.pos(n)
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	return Pos{File: p.file}
}

// fail records the first error.
func (p *fileParser) fail(n *yaml.Node, field, format string, a ...any) {
	if p.err == nil {
		p.err = &FileError{Pos: p.pos(n), Field: field, Msg: fmt.Sprintf(format, a...)}
	}
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *fileParser) parse(data []byte) (*Spec, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FileError{Pos: Pos{File: p.file}, Msg: "empty file: expected a mapping with the fleet keys"}
		}
		msg, pos := err.Error(), Pos{File: p.file}
		if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
			pos.Line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		return nil, &FileError{Pos: pos, Msg: "YAML: " + strings.TrimPrefix(msg, "yaml: ")}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &FileError{Pos: p.pos(&extra), Msg: "more than one YAML document (one fleet per file)"}
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, &FileError{Pos: p.pos(&doc), Msg: "the top level must be a mapping with the fleet keys (" + strings.Join(FileKeys, ", ") + ")"}
	}
	root := doc.Content[0]
	if n := findAlias(root); n != nil {
		return nil, &FileError{Pos: p.pos(n), Msg: "YAML aliases are not supported; write the value out"}
	}
	base := filepath.Base(p.file)
	c := Config{Name: strings.TrimSuffix(base, filepath.Ext(base)), Compaction: Compaction{Enabled: true, Succeed: true}}
	spec := &Spec{}
	var seedsSet bool
	p.mapping(root, "", FileKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "name":
			c.Name = p.str(v, key)
		case "description":
			spec.Description = p.str(v, key)
		case "sessions":
			c.Sessions = int(p.integer(v, key, 1, MaxSessions))
		case "rate":
			c.Rate = p.number(v, key)
		case "prompts":
			c.Prompts = int(p.integer(v, key, 1, MaxPrompts))
		case "think":
			c.Think = p.dist(v, key, false)
		case "calls":
			c.Calls = p.dist(v, key, true)
		case "latency":
			c.Latency = p.dist(v, key, false)
		case "errorLatency":
			c.ErrorLatency = p.dist(v, key, false)
		case "capacity":
			p.mapping(v, key, capacityKeys, func(key2 string, _, v2 *yaml.Node) {
				path := key + "." + key2
				switch key2 {
				case "rps":
					c.Capacity.RPS = p.number(v2, path)
				case "burst":
					c.Capacity.Burst = int(p.integer(v2, path, 0, 1e9))
				case "maxInFlight":
					c.Capacity.MaxInFlight = int(p.integer(v2, path, 0, 1e9))
				}
			})
		case "overCapacity":
			p.mapping(v, key, overCapacityKeys, func(key2 string, _, v2 *yaml.Node) {
				path := key + "." + key2
				switch key2 {
				case "hint":
					c.OverCapacity.Hint = HintMode(p.enum(v2, path, "header", "text", "none"))
				case "retryAfter":
					c.OverCapacity.RetryAfter = p.duration(v2, path)
				}
			})
		case "outages":
			if v.Kind != yaml.SequenceNode {
				p.fail(v, key, "expected a list of outage windows {start, duration, kind, retryAfter}, got %s", describe(v))
				return
			}
			for i, o := range v.Content {
				path := key + "[" + strconv.Itoa(i) + "]"
				p.at[path] = o
				var w Outage
				var hasKind, hasDur bool
				p.mapping(o, path, outageKeys, func(key2 string, _, v2 *yaml.Node) {
					path2 := path + "." + key2
					switch key2 {
					case "start":
						w.Start = p.duration(v2, path2)
					case "duration":
						w.Duration, hasDur = p.duration(v2, path2), true
					case "kind":
						w.Kind, hasKind = p.kind(v2, path2, OutageKinds), true
					case "retryAfter":
						w.RetryAfter = p.duration(v2, path2)
					}
				})
				if p.err == nil && (!hasKind || !hasDur) {
					p.fail(o, path, "an outage window needs duration and kind (keys: %s)", strings.Join(outageKeys, ", "))
				}
				c.Outages = append(c.Outages, w)
			}
		case "errors":
			if v.Kind != yaml.MappingNode {
				p.fail(v, key, "expected a mapping KIND: RATE (kinds: %s), got %s", kindList(ErrorKinds[:len(ErrorKinds)-1]), describe(v))
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k2, v2 := v.Content[i], v.Content[i+1]
				kind := p.kind(k2, key, ErrorKinds[:len(ErrorKinds)-1])
				path := key + "." + k2.Value
				p.at[path] = v2
				for _, r := range c.Errors {
					if r.Kind == kind && p.err == nil {
						p.fail(k2, path, "duplicate key")
					}
				}
				c.Errors = append(c.Errors, Rate{Kind: kind, P: p.number(v2, path)})
			}
		case "overflow":
			c.Overflow = p.number(v, key)
		case "promptErrors":
			p.mapping(v, key, promptErrorKeys, func(key2 string, _, v2 *yaml.Node) {
				path := key + "." + key2
				switch key2 {
				case "count":
					c.PromptErrors.Count = int(p.integer(v2, path, 0, MaxCalls))
				case "kind":
					c.PromptErrors.Kind = p.kind(v2, path, ErrorKinds)
				}
			})
		case "profile":
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
				if len(items) == 0 {
					p.fail(v, key, "an empty list (allowed: a profile mix, or a list of them, one run each)")
				}
			}
			for i, it := range items {
				path := key
				if v.Kind == yaml.SequenceNode {
					path += "[" + strconv.Itoa(i) + "]"
				}
				m, err := ParseMix(p.str(it, path))
				if err != nil && p.err == nil {
					p.fail(it, path, "%v", err)
				}
				spec.Mixes = append(spec.Mixes, m)
			}
		case "sdk":
			c.SDK = p.str(v, key)
		case "horizon":
			c.Horizon = p.duration(v, key)
		case "recovery":
			c.Recovery = p.duration(v, key)
		case "compaction":
			p.mapping(v, key, compactionKeys, func(key2 string, _, v2 *yaml.Node) {
				b := p.boolean(v2, key+"."+key2)
				if key2 == "enabled" {
					c.Compaction.Enabled = b
				} else {
					c.Compaction.Succeed = b
				}
			})
		case "seed":
			c.Seed = p.integer(v, key, 1, MaxSeed)
		case "seeds":
			var err error
			spec.SeedFrom, spec.SeedTo, err = ParseSeeds(p.scalar(v, key))
			if err != nil && p.err == nil {
				p.fail(v, key, "%v", err)
			}
			seedsSet = true
		}
	})
	if p.err != nil {
		return nil, p.err
	}
	if _, ok := p.at["sessions"]; !ok {
		return nil, &FileError{Pos: p.pos(root), Field: "sessions", Msg: "missing: the number of sessions is required"}
	}
	if len(spec.Mixes) > 0 {
		c.Profiles = spec.Mixes[0]
	}
	c = c.normalized()
	if len(spec.Mixes) == 0 {
		spec.Mixes = []Mix{c.Profiles}
	}
	if !seedsSet {
		spec.SeedFrom, spec.SeedTo = c.Seed, c.Seed
	} else {
		c.Seed = spec.SeedFrom
	}
	spec.Config = c
	return spec, nil
}

func findAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode {
		return n
	}
	for _, c := range n.Content {
		if a := findAlias(c); a != nil {
			return a
		}
	}
	return nil
}

// mapping checks that n is a mapping of distinct keys out of allowed and
// calls fn for each pair in file order.
func (p *fileParser) mapping(n *yaml.Node, path string, allowed []string, fn func(key string, k, v *yaml.Node)) {
	if p.err != nil {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, path, "expected a mapping with keys %s, got %s", strings.Join(allowed, ", "), describe(n))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content) && p.err == nil; i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		field := key
		if path != "" {
			field = path + "." + key
		}
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			p.fail(k, path, "keys must be plain strings (allowed keys: %s)", strings.Join(allowed, ", "))
			return
		}
		if prev := seen[key]; prev != nil {
			p.fail(k, field, "duplicate key (first at line %d:%d)", prev.Line, prev.Column)
			return
		}
		if !contains(allowed, key) {
			p.fail(k, field, "unknown key %q (allowed: %s)%s", key, strings.Join(allowed, ", "), suggest.Key(key, allowed))
			return
		}
		seen[key] = k
		p.at[field] = v
		fn(key, k, v)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// describe names a node's kind for an error.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		switch n.ShortTag() {
		case "!!null":
			return "null"
		case "!!str":
			return strconv.Quote(v)
		}
		return v
	}
	return "an alias"
}

// scalar is a scalar's text, whatever its tag.
func (p *fileParser) scalar(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		p.fail(n, path, "expected a value, got %s", describe(n))
		return ""
	}
	return n.Value
}

func (p *fileParser) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.fail(n, path, "expected a string, got %s", describe(n))
		return ""
	}
	return n.Value
}

func (p *fileParser) enum(n *yaml.Node, path string, allowed ...string) string {
	s := p.str(n, path)
	if p.err == nil && !contains(allowed, s) {
		p.fail(n, path, "unknown value %q (allowed: %s)", s, strings.Join(allowed, ", "))
	}
	return s
}

func (p *fileParser) boolean(n *yaml.Node, path string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		p.fail(n, path, "expected a boolean (true or false), got %s", describe(n))
	}
	return b
}

func (p *fileParser) integer(n *yaml.Node, path string, lo, hi int64) int64 {
	var v int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&v) != nil || v < lo || v > hi {
		p.fail(n, path, "expected an integer from %d to %d, got %s", lo, hi, describe(n))
	}
	return v
}

func (p *fileParser) number(n *yaml.Node, path string) float64 {
	var v float64
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") || n.Decode(&v) != nil ||
		math.IsNaN(v) || math.IsInf(v, 0) {
		p.fail(n, path, "expected a number, got %s", describe(n))
	}
	return v
}

func (p *fileParser) duration(n *yaml.Node, path string) time.Duration {
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int" && n.Value == "0" {
		return 0
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.fail(n, path, `expected a duration such as "60s", "1.5s", "100ms" or "3h", got %s`, describe(n))
		return 0
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d < 0 || d > MaxDuration {
		p.fail(n, path, `expected a duration from 0s to %v such as "60s", "100ms" or "3h", got %s`, MaxDuration, describe(n))
	}
	return d
}

func (p *fileParser) dist(n *yaml.Node, path string, count bool) Dist {
	s := p.scalar(n, path)
	if p.err != nil {
		return Dist{}
	}
	d, err := parseDist(s, count)
	if err != nil {
		p.fail(n, path, "%v", err)
	}
	return d
}

func (p *fileParser) kind(n *yaml.Node, path string, allowed []Kind) Kind {
	s := p.scalar(n, path)
	if p.err != nil {
		return KindNone
	}
	k, err := ParseKind(s, allowed)
	if err != nil {
		p.fail(n, path, "%v", err)
	}
	return k
}
