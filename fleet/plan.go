package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/policy"
)

// A sweep's plan: its runs as stretches of one configuration over
// consecutive seeds, so that a shard, the sweep's identity and its groups
// are found from the sweep's definition in time and memory proportional to
// the number of stretches (one per file and mix from the command line),
// not to the number of runs.

// stretch is runs of one configuration over the seeds from to to, in order.
type stretch struct {
	cfg      Config // normalized; Seed is from
	from, to int64
	run      int    // the sweep's index of its first run
	key      string // its group's key
}

func (s *stretch) len() int { return int(s.to - s.from + 1) }

// config is the stretch's run of seed seed.
func (s *stretch) config(seed int64) Config {
	c := s.cfg
	c.Seed = seed
	return c
}

// plan is a sweep's stretches in order, adjacent ones merged when they
// continue each other (the same configuration, the next seed), so that a
// sweep has one plan however it is given.
type plan struct {
	stretches []stretch
	runs      int
}

// sameBut reports whether a and b are the same configuration but for the
// seed (as the sweep's identity sees them: their JSON).
func sameBut(a, b *Config) bool {
	x, y := *a, *b
	x.Seed, y.Seed = 0, 0
	if reflect.DeepEqual(x, y) {
		return true
	}
	jx, err1 := json.Marshal(x)
	jy, err2 := json.Marshal(y)
	return err1 == nil && err2 == nil && string(jx) == string(jy)
}

// add appends the runs of c over the seeds from to to.
func (p *plan) add(c Config, from, to int64) {
	if to < from {
		return
	}
	c = c.normalized()
	if from == 0 && to == 0 {
		from, to = 1, 1 // the seed 0 stands for 1
	}
	if n := len(p.stretches); n > 0 {
		last := &p.stretches[n-1]
		if last.to < MaxSeed && last.to+1 == from && sameBut(&last.cfg, &c) {
			last.to = to
			p.runs += int(to - from + 1)
			return
		}
	}
	c.Seed = from
	p.stretches = append(p.stretches, stretch{cfg: c, from: from, to: to, run: p.runs, key: groupKey(&c)})
	p.runs += int(to - from + 1)
}

// planOf is the plan of the sweep cfgs.
func planOf(cfgs []Config) *plan {
	p := &plan{}
	for _, c := range cfgs {
		p.add(c, c.Seed, c.Seed)
	}
	return p
}

// planOfSpecs is the plan of the sweep of every spec's runs in order (each
// spec's mixes, each over its seeds).
func planOfSpecs(specs []*Spec) *plan {
	p := &plan{}
	for _, s := range specs {
		for _, m := range s.Mixes {
			c := s.Config
			c.Profiles = m
			if s.SeedFrom >= 1 { // as Configs: no seed below 1
				p.add(c, s.SeedFrom, s.SeedTo)
			}
		}
	}
	return p
}

// validate checks every run as Config.Validate does: a stretch's runs
// differ in their seed only, valid from the first one on.
func (p *plan) validate() error {
	for i := range p.stretches {
		s := &p.stretches[i]
		if err := s.cfg.Validate(); err != nil {
			return &SweepError{Index: s.run, Name: s.cfg.Name, Err: err}
		}
	}
	return nil
}

// id is the sweep's identity: "sha256:" and the hex SHA-256 of the JSON of
// the partial format's version, every stretch (its configuration, its
// seeds) and the settings of every profile they name.
func (p *plan) id() (string, error) {
	type stretchID struct {
		Config           Config
		SeedFrom, SeedTo int64
	}
	id := struct {
		Format    int
		Stretches []stretchID
		Profiles  map[string]policy.Settings
	}{Format: PartialFormat, Profiles: map[string]policy.Settings{}}
	for _, s := range p.stretches {
		c := s.cfg
		c.Seed = 0
		id.Stretches = append(id.Stretches, stretchID{Config: c, SeedFrom: s.from, SeedTo: s.to})
		names := []string{c.SDK}
		for _, sh := range c.Profiles {
			names = append(names, sh.Profile)
		}
		for _, name := range names {
			if name == "" {
				continue
			}
			pr, err := policy.ProfileByName(name)
			if err != nil {
				return "", &SweepError{Index: s.run, Name: c.Name, Err: err}
			}
			id.Profiles[name] = pr.Settings
		}
	}
	data, err := json.Marshal(id)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// groups are the sweep's groups in the order of their first run, and the
// index of each stretch's group.
func (p *plan) groups() (keys []SweepGroup, of []int) {
	index := map[string]int{}
	for _, s := range p.stretches {
		i, ok := index[s.key]
		if !ok {
			i = len(keys)
			index[s.key] = i
			keys = append(keys, SweepGroup{Fleet: s.cfg.Name, Mix: s.cfg.Profiles.String(), SDK: s.cfg.SDK})
		}
		of = append(of, i)
	}
	return keys, of
}

// firstHeld is the index of the first run from run on that shard sh holds.
func (sh Shard) firstHeld(run int) int {
	return run + ((sh.Index-run)%sh.Count+sh.Count)%sh.Count
}

// shard lists the runs shard sh holds, in order, and the sweep's index of
// each.
func (p *plan) shard(sh Shard) (mine []Config, at []int) {
	for i := range p.stretches {
		s := &p.stretches[i]
		for k := sh.firstHeld(s.run); k < s.run+s.len(); k += sh.Count {
			mine = append(mine, s.config(s.from+int64(k-s.run)))
			at = append(at, k)
		}
	}
	return mine, at
}

// sessions is the number of sessions of the runs shard sh holds.
func (p *plan) sessions(sh Shard) int64 {
	var n int64
	for i := range p.stretches {
		s := &p.stretches[i]
		end := s.run + s.len()
		if k := sh.firstHeld(s.run); k < end {
			n += int64((end-1-k)/sh.Count+1) * int64(s.cfg.Sessions)
		}
	}
	return n
}

// run runs shard sh of the plan.
func (p *plan) runShard(sh Shard, opt SweepOptions) (*Partial, error) {
	if err := sh.validate(); err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	id, err := p.id()
	if err != nil {
		return nil, err
	}
	keys, of := p.groups()
	mine, at := p.shard(sh)
	res, err := SweepWith(mine, opt)
	if err != nil {
		var se *SweepError
		if errors.As(err, &se) {
			se.Index = at[se.Index]
		}
		return nil, err
	}
	part := &Partial{Sweep: id, Runs: p.runs, Groups: len(keys), Shard: sh, Result: *res, SweepGroups: keys}
	index := map[string]int{}
	for i, k := range keys {
		index[k.key()] = i
	}
	for _, g := range res.Groups {
		part.GroupIndex = append(part.GroupIndex, index[g.key()])
	}
	for i := range p.stretches {
		s := &p.stretches[i]
		part.Plan = append(part.Plan, SeedRange{Group: of[i], Run: s.run, From: s.from, To: s.to})
	}
	return part, nil
}

// Validate checks every run of the spec as Config.Validate does, in the
// order of Configs, without expanding them: the first invalid run's error.
func (s *Spec) Validate() error {
	p := planOfSpecs([]*Spec{s})
	for i := range p.stretches {
		if err := p.stretches[i].cfg.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// RunSpecsShard runs shard sh of the sweep of every spec's runs, in order
// (as RunShardWith runs the sweep of their Configs, with the same result
// and identity), in time and memory proportional to the shard's runs and
// the specs' mixes, whatever the sweep's size.
func RunSpecsShard(specs []*Spec, sh Shard, opt SweepOptions) (*Partial, error) {
	return planOfSpecs(specs).runShard(sh, opt)
}

// ShardSessions is the number of sessions the runs of shard sh of the
// specs' sweep hold (for a progress bar), without expanding the sweep.
func ShardSessions(specs []*Spec, sh Shard) int64 {
	if sh.validate() != nil {
		return 0
	}
	return planOfSpecs(specs).sessions(sh)
}

// SweepGroup names one of a sweep's groups (see Group).
type SweepGroup struct {
	Fleet, Mix, SDK string
}

func (g SweepGroup) key() string { return g.Fleet + "\x00" + g.Mix + "\x00" + g.SDK }

// SeedRange is a stretch of a sweep's runs: those of one group over the
// consecutive seeds From to To, the first being the sweep's run Run.
type SeedRange struct {
	Group    int // its group's index in SweepGroups
	Run      int
	From, To int64
}

// maxQuoted is the most bytes of a value an error quotes.
const maxQuoted = 64

// quoteShort quotes s as %q does, at most its first maxQuoted bytes (cut
// at a character boundary) followed by "…(N bytes)".
func quoteShort(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
