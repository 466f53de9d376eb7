package fleet

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/ohmypi/retryfsm/fleet/fleetspec"
	"github.com/ohmypi/retryfsm/policy"
)

// stretch is runs of one configuration over the seeds from to to, in order.
type stretch struct {
	cfg      fleetspec.Config // normalized; Seed is from
	from, to int64
	run      int    // the sweep's index of its first run
	key      string // its group's key
}

func (s *stretch) len() int { return int(s.to - s.from + 1) }

// config is the stretch's run of seed seed.
func (s *stretch) config(seed int64) fleetspec.Config {
	c := s.cfg
	c.Seed = seed
	return c
}

// A Plan is what Run runs: a sweep, its runs in order (fleets, each over
// its profile mixes, each over its seeds). It holds its runs as stretches
// of one configuration over consecutive seeds, adjacent ones merged when
// they continue each other, so that a sweep has one plan however it is
// given, and a shard, the sweep's identity and its groups are found in
// time and memory proportional to the stretches, not to the runs. Build
// one with PlanOf or PlanOfSpecs; a Plan is read-only once built, and may
// be run any number of times, at once too.
type Plan struct {
	stretches []stretch
	runs      int
}

// sameBut reports whether a and b are the same configuration but for the
// seed (as the sweep's identity sees them: their JSON).
func sameBut(a, b *fleetspec.Config) bool {
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
func (p *Plan) add(c fleetspec.Config, from, to int64) {
	if to < from {
		return
	}
	c = c.Normalized()
	if from == 0 && to == 0 {
		from, to = 1, 1 // the seed 0 stands for 1
	}
	if n := len(p.stretches); n > 0 {
		last := &p.stretches[n-1]
		if last.to < fleetspec.MaxSeed && last.to+1 == from && sameBut(&last.cfg, &c) {
			last.to = to
			p.runs += int(to - from + 1)
			return
		}
	}
	c.Seed = from
	p.stretches = append(p.stretches, stretch{cfg: c, from: from, to: to, run: p.runs, key: groupKey(&c)})
	p.runs += int(to - from + 1)
}

// PlanOf is the plan of the runs cfgs, in order: each configuration once,
// with its seed (0 stands for 1).
func PlanOf(cfgs ...fleetspec.Config) *Plan {
	p := &Plan{}
	for _, c := range cfgs {
		p.add(c, c.Seed, c.Seed)
	}
	return p
}

// PlanOfSpecs is the plan of every spec's runs in order: each spec's
// mixes, each over its seeds, as Spec.Configs lists them.
func PlanOfSpecs(specs ...*fleetspec.Spec) *Plan {
	p := &Plan{}
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
func (p *Plan) validate() error {
	for i := range p.stretches {
		s := &p.stretches[i]
		if err := s.cfg.Validate(); err != nil {
			return &SweepError{Index: s.run, Name: s.cfg.Name, Err: err}
		}
	}
	return nil
}

// Runs is the number of the plan's runs.
func (p *Plan) Runs() int { return p.runs }

// ID is the plan's identity, the Sweep of its partial results: "sha256:"
// and the hex SHA-256 of the JSON of the partial format's version, every
// stretch (its configuration, normalized, over consecutive seeds) and the
// settings of every profile they name. Plans of the same runs carry the
// same identity however they were built (Configs or Specs); plans that
// differ in any run, in their order, or in a profile's settings do not.
func (p *Plan) ID() (string, error) {
	type stretchID struct {
		Config           fleetspec.Config
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
func (p *Plan) groups() (keys []SweepGroup, of []int) {
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
func (p *Plan) shard(sh Shard) (mine []fleetspec.Config, at []int) {
	for i := range p.stretches {
		s := &p.stretches[i]
		for k := sh.firstHeld(s.run); k < s.run+s.len(); k += sh.Count {
			mine = append(mine, s.config(s.from+int64(k-s.run)))
			at = append(at, k)
		}
	}
	return mine, at
}

// Sessions is the number of sessions of the runs shard sh holds (the zero
// Shard: of every run), for a progress bar; 0 for an invalid shard.
func (p *Plan) Sessions(sh Shard) int64 {
	sh = sh.orWhole()
	if sh.validate() != nil {
		return 0
	}
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
