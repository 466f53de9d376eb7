package fleetspec

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/session"
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
	c = c.Normalized()
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

// Validate checks every run of the spec as Config.Validate does, in the
// order of Configs, without expanding the seeds: a mix's runs differ in
// their seed only, valid from the first one on. The error is the first
// invalid run's.
func (s *Spec) Validate() error {
	if s.SeedFrom < 1 || s.SeedTo < s.SeedFrom {
		return nil // no run (as Configs)
	}
	for _, m := range s.Mixes {
		c := s.Config
		c.Profiles, c.Seed = m, s.SeedFrom
		if err := c.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// MaxFileSize is the largest fleet file read, in bytes.
const MaxFileSize = 1 << 20

var (
	capacityKeys     = []string{"rps", "burst", "maxInFlight"}
	overCapacityKeys = []string{"hint", "retryAfter"}
	outageKeys       = []string{"start", "duration", "kind", "retryAfter"}
	promptErrorKeys  = []string{"count", "kind"}
	compactionKeys   = []string{"enabled", "succeed"}
	hintModeNames    = []string{string(HintHeader), string(HintText), string(HintNone)}
)

// Pos is a position in a fleet file; Line and Column are 1-based, 0 when
// unknown.
type Pos struct {
	File         string
	Line, Column int
}

// String gives "file:line:col", leaving out what is unknown.
func (p Pos) String() string { return strictfile.Pos(p).String() }

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
	return (&strictfile.Error{Pos: strictfile.Pos(e.Pos), Field: e.Field, Msg: e.Msg}).Error()
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// Load reads the fleet file path (YAML).
func Load(path string) (*Spec, error) {
	data, tooLarge, err := strictfile.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, &FileError{Pos: Pos{File: path}, Msg: err.Error(), Err: err}
	}
	if tooLarge {
		return nil, &FileError{Pos: Pos{File: path}, Msg: fmt.Sprintf("file too large (at most %d bytes)", MaxFileSize)}
	}
	return Parse(path, data)
}

// Parse reads a fleet file's text (YAML, or JSON); name is the file's
// path, for errors and the fleet's default name (its base name without
// the extension).
func Parse(name string, data []byte) (*Spec, error) {
	p := &fileParser{strictfile.Reader{File: name, What: "fleet", At: map[string]*yaml.Node{}}}
	var spec *Spec
	if err := p.Read(func() { spec = p.parse(data) }); err != nil {
		return nil, &FileError{Pos: Pos(err.Pos), Field: err.Field, Msg: err.Msg, Err: err.Err}
	}
	if err := spec.Validate(); err != nil { // every run, without expanding the seeds
		var fe *FieldError
		if errors.As(err, &fe) {
			return nil, &FileError{Pos: Pos(p.PosOf(fe.Field)), Field: fe.Field, Msg: fe.Msg}
		}
		return nil, &FileError{Pos: Pos{File: name}, Msg: err.Error()}
	}
	return spec, nil
}

// fileParser reads a fleet file with the one strict reader.
type fileParser struct{ strictfile.Reader }

func (p *fileParser) parse(data []byte) *Spec {
	root := p.Decode(data)
	base := filepath.Base(p.File)
	spec := &Spec{}
	t := &target{spec: spec, c: &spec.Config}
	*t.c = Config{Name: strings.TrimSuffix(base, filepath.Ext(base)), Compaction: Compaction{Enabled: true, Succeed: true}}
	p.Mapping(root, "", FileKeys, func(e strictfile.Entry) {
		for i := range fileKeys {
			if k := &fileKeys[i]; k.name == e.Key {
				k.read(p, e.V, e.Key, t)
			}
		}
	})
	if _, ok := p.At["sessions"]; !ok {
		p.Fail(root, "sessions", "missing: the number of sessions is required")
	}
	c := spec.Config
	if len(spec.Mixes) > 0 {
		c.Profiles = spec.Mixes[0]
	}
	c = c.Normalized()
	if len(spec.Mixes) == 0 {
		spec.Mixes = []Mix{c.Profiles}
	}
	if !t.seedsSet {
		spec.SeedFrom, spec.SeedTo = c.Seed, c.Seed
	} else {
		c.Seed = spec.SeedFrom
	}
	spec.Config = c
	return spec
}

func readCapacity(p *fileParser, v *yaml.Node, key string, t *target) {
	c := t.c
	p.Mapping(v, key, capacityKeys, func(e strictfile.Entry) {
		path := key + "." + e.Key
		switch e.Key {
		case "rps":
			c.Capacity.RPS = p.Number(e.V, path)
		case "burst":
			c.Capacity.Burst = int(p.integer(e.V, path, 0, 1e9))
		case "maxInFlight":
			c.Capacity.MaxInFlight = int(p.integer(e.V, path, 0, 1e9))
		}
	})
}

func readOverCapacity(p *fileParser, v *yaml.Node, key string, t *target) {
	c := t.c
	p.Mapping(v, key, overCapacityKeys, func(e strictfile.Entry) {
		path := key + "." + e.Key
		switch e.Key {
		case "hint":
			c.OverCapacity.Hint = HintMode(p.Enum(e.V, path, hintModeNames))
		case "retryAfter":
			c.OverCapacity.RetryAfter = p.duration(e.V, path)
		}
	})
}

func readOutages(p *fileParser, v *yaml.Node, key string, t *target) {
	for i, o := range p.Seq(v, key, "outage windows {"+strings.Join(outageKeys, ", ")+"}", 0) {
		path := strictfile.Index(key, i)
		p.At[path] = o
		var w Outage
		fields := p.Mapping(o, path, outageKeys, func(e strictfile.Entry) {
			path2 := path + "." + e.Key
			switch e.Key {
			case "start":
				w.Start = p.duration(e.V, path2)
			case "duration":
				w.Duration = p.duration(e.V, path2)
			case "kind":
				w.Kind = p.kind(e.V, path2, OutageKinds)
			case "retryAfter":
				w.RetryAfter = p.duration(e.V, path2)
			}
		})
		_, hasKind := fields["kind"]
		if _, hasDur := fields["duration"]; !hasKind || !hasDur {
			p.Fail(o, path, "an outage window needs duration and kind (keys: %s)", strings.Join(outageKeys, ", "))
		}
		t.c.Outages = append(t.c.Outages, w)
	}
}

func readErrors(p *fileParser, v *yaml.Node, key string, t *target) {
	kinds := ErrorKinds[:len(ErrorKinds)-1]
	if v.Kind != yaml.MappingNode {
		p.Fail(v, key, "expected a mapping KIND: RATE (kinds: %s), got %s", kindList(kinds), strictfile.Describe(v))
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k2, v2 := v.Content[i], v.Content[i+1]
		kind := p.kind(k2, key, kinds)
		path := key + "." + k2.Value
		p.At[path] = v2
		for _, r := range t.c.Errors {
			if r.Kind == kind {
				p.Fail(k2, path, "duplicate key")
			}
		}
		t.c.Errors = append(t.c.Errors, Rate{Kind: kind, P: p.Number(v2, path)})
	}
}

func readPromptErrors(p *fileParser, v *yaml.Node, key string, t *target) {
	c := t.c
	p.Mapping(v, key, promptErrorKeys, func(e strictfile.Entry) {
		path := key + "." + e.Key
		switch e.Key {
		case "count":
			c.PromptErrors.Count = int(p.integer(e.V, path, 0, MaxCalls))
		case "kind":
			c.PromptErrors.Kind = p.kind(e.V, path, ErrorKinds)
		}
	})
}

func readProfile(p *fileParser, v *yaml.Node, key string, t *target) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
		if len(items) == 0 {
			p.Fail(v, key, "an empty list (allowed: a profile mix, or a list of them, one run each)")
		}
	}
	for i, it := range items {
		path := key
		if v.Kind == yaml.SequenceNode {
			path = strictfile.Index(key, i)
		}
		m, err := ParseMix(p.Str(it, path))
		if err != nil {
			p.Fail(it, path, "%v", err)
		}
		t.spec.Mixes = append(t.spec.Mixes, m)
	}
}

// readCompaction reads on, off or fail (session.CompactionModes), or
// {enabled, succeed}.
func readCompaction(p *fileParser, v *yaml.Node, key string, t *target) {
	c := &t.c.Compaction
	if v.Kind == yaml.ScalarNode { // Enum has checked the mode
		c.Enabled, c.Succeed, _ = session.ParseCompaction(p.Enum(v, key, session.CompactionModes))
		return
	}
	p.Mapping(v, key, compactionKeys, func(e strictfile.Entry) {
		b := p.Boolean(e.V, key+"."+e.Key)
		if e.Key == "enabled" {
			c.Enabled = b
		} else {
			c.Succeed = b
		}
	})
}

// integer is an integer from lo to hi.
func (p *fileParser) integer(n *yaml.Node, path string, lo, hi int64) int64 {
	return p.Integer(n, path, lo, hi, fmt.Sprintf("an integer from %d to %d", lo, hi))
}

// duration is a duration from 0 to MaxDuration (strictfile.Duration: a Go
// duration or an integer number of milliseconds).
func (p *fileParser) duration(n *yaml.Node, path string) time.Duration {
	return p.Duration(n, path, time.Nanosecond, MaxDuration)
}

func (p *fileParser) dist(n *yaml.Node, path string, count bool) Dist {
	d, err := parseDist(p.Scalar(n, path), count)
	if err != nil {
		p.Fail(n, path, "%v", err)
	}
	return d
}

func (p *fileParser) kind(n *yaml.Node, path string, allowed []Kind) Kind {
	k, err := ParseKind(p.Scalar(n, path), allowed)
	if err != nil {
		p.Fail(n, path, "%v", err)
	}
	return k
}
