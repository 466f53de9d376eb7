package scenario

// The top-level keys of a scenario file, each declared once: its default,
// how Parse reads it and how Format writes it. A new key is a field of
// Scenario and a row here.

import (
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ohmypi/retryfsm/internal/jsonw"
	"github.com/ohmypi/retryfsm/internal/strictfile"
	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
	"github.com/ohmypi/retryfsm/session"
)

// topKey is a top-level key of a scenario file.
type topKey struct {
	name string
	// def sets the key's default, before the file is read (nil: the zero
	// value).
	def func(sc *Scenario)
	// read reads the key's value v (at path) into the scenario being read.
	read func(p *parser, r *reading, v *yaml.Node, path string)
	// write writes the key as Format does: nothing when it is at its
	// default (or at Go's zero value, which stands for it).
	write func(b *strings.Builder, sc *Scenario)
}

// reading is a scenario being read: where its profile, variant and
// settings are in the file, its profile, and its settings' node, read
// once the profile is known.
type reading struct {
	sc       *Scenario
	src      *fileSource
	prof     policy.Profile
	settings *yaml.Node
}

// topKeys are the top-level keys, in the order Format writes them and
// errors list them.
var topKeys = []topKey{
	{name: "name", read: func(p *parser, r *reading, v *yaml.Node, path string) { r.sc.Name = p.Str(v, path) },
		write: func(b *strings.Builder, sc *Scenario) {
			if sc.Name != "" {
				fmt.Fprintf(b, "name: %s\n", yamlString(sc.Name))
			}
		}},
	{name: "description", read: func(p *parser, r *reading, v *yaml.Node, path string) { r.sc.Description = p.Str(v, path) },
		write: writeDescription},
	{name: "variant", def: func(sc *Scenario) { sc.Variant = defaultVariant },
		read: func(p *parser, r *reading, v *yaml.Node, path string) {
			r.sc.Variant = p.Enum(v, path, variants)
			r.src.variant = p.at(v)
		},
		write: func(b *strings.Builder, sc *Scenario) {
			variant := sc.Variant
			if variant == "" {
				variant = defaultVariant
			}
			fmt.Fprintf(b, "variant: %s\n", variant)
		}},
	{name: "profile", def: func(sc *Scenario) { sc.Profile = policy.DefaultProfile }, read: readProfile,
		write: func(b *strings.Builder, sc *Scenario) {
			if sc.Profile != "" && sc.Profile != policy.DefaultProfile {
				fmt.Fprintf(b, "profile: %s\n", yamlString(sc.Profile))
			}
		}},
	{name: "settings", read: func(p *parser, r *reading, v *yaml.Node, _ string) { r.settings, r.src.settings = v, p.at(v) },
		write: func(b *strings.Builder, sc *Scenario) { fmt.Fprintf(b, "settings: %s\n", settingsText(sc)) }},
	{name: "contextWindow", def: func(sc *Scenario) { sc.ContextWindow = defaultContextWindow },
		read: func(p *parser, r *reading, v *yaml.Node, path string) {
			r.sc.ContextWindow = p.nonNeg(v, path, math.MaxInt64)
		},
		write: func(b *strings.Builder, sc *Scenario) {
			if sc.ContextWindow != defaultContextWindow {
				fmt.Fprintf(b, "contextWindow: %d\n", sc.ContextWindow)
			}
		}},
	{name: "compaction", def: func(sc *Scenario) { sc.Compaction = Compaction{Enabled: true, Succeed: true} },
		read: func(p *parser, r *reading, v *yaml.Node, path string) {
			if v.Kind == yaml.ScalarNode { // on, off or fail, as the fleet's flag and files
				r.sc.Compaction.Enabled, r.sc.Compaction.Succeed, _ = session.ParseCompaction(p.Enum(v, path, session.CompactionModes))
				return
			}
			p.Mapping(v, path, compactionKeys, func(e strictfile.Entry) {
				switch e.Key {
				case "enabled":
					r.sc.Compaction.Enabled = p.Boolean(e.V, strictfile.Join(path, e.Key))
				case "succeed":
					r.sc.Compaction.Succeed = p.Boolean(e.V, strictfile.Join(path, e.Key))
				}
			})
		},
		write: func(b *strings.Builder, sc *Scenario) {
			if !sc.Compaction.Enabled || !sc.Compaction.Succeed {
				fmt.Fprintf(b, "compaction: {enabled: %t, succeed: %t}\n", sc.Compaction.Enabled, sc.Compaction.Succeed)
			}
		}},
	{name: "initialPrompt", def: func(sc *Scenario) { sc.InitialPrompt = true },
		read: func(p *parser, r *reading, v *yaml.Node, path string) { r.sc.InitialPrompt = p.Boolean(v, path) },
		write: func(b *strings.Builder, sc *Scenario) {
			if !sc.InitialPrompt {
				b.WriteString("initialPrompt: false\n")
			}
		}},
	text("prompt", func(sc *Scenario) *string { return &sc.Prompt }, defaultPrompt),
	text("provider", func(sc *Scenario) *string { return &sc.Provider }, defaultProvider),
	text("modelId", func(sc *Scenario) *string { return &sc.ModelID }, defaultModelID),
	text("baseUrl", func(sc *Scenario) *string { return &sc.BaseURL }, defaultBaseURL),
	text("sessionId", func(sc *Scenario) *string { return &sc.SessionID }, defaultSessionID),
	integer("epochMs", func(sc *Scenario) *int64 { return &sc.EpochMs }, defaultEpochMs, 0, maxEpochMs),
	integer("seed", func(sc *Scenario) *int64 { return &sc.Seed }, defaultSeed, 1, math.MaxInt64),
	{name: "random", read: readRandom,
		write: func(b *strings.Builder, sc *Scenario) {
			if sc.HasRandomFixed {
				fmt.Fprintf(b, "random: {fixed: %s}\n", flowValue(sc.RandomFixed))
			}
		}},
	list("turns", func(sc *Scenario) *[]Turn { return &sc.Turns }, (*parser).turn, turnFlow),
	list("actions", func(sc *Scenario) *[]Action { return &sc.Actions }, (*parser).action, actionFlow),
	{name: "expect", read: func(p *parser, r *reading, v *yaml.Node, path string) { r.sc.Expect = p.expect(v, path) },
		write: writeExpect},
}

// topKeyNames are the top-level keys' names, in the table's order.
var topKeyNames = func() []string {
	names := make([]string, len(topKeys))
	for i := range topKeys {
		names[i] = topKeys[i].name
	}
	return names
}()

// text is a string key with a default; Format leaves it out at its
// default or empty.
func text(name string, field func(*Scenario) *string, def string) topKey {
	return topKey{name: name, def: func(sc *Scenario) { *field(sc) = def },
		read: func(p *parser, r *reading, v *yaml.Node, path string) { *field(r.sc) = p.Str(v, path) },
		write: func(b *strings.Builder, sc *Scenario) {
			if v := *field(sc); v != def && v != "" {
				fmt.Fprintf(b, "%s: %s\n", name, yamlString(v))
			}
		}}
}

// integer is an integer key from lo to hi with a default; Format leaves
// it out at its default or 0.
func integer(name string, field func(*Scenario) *int64, def, lo, hi int64) topKey {
	return topKey{name: name, def: func(sc *Scenario) { *field(sc) = def },
		read: func(p *parser, r *reading, v *yaml.Node, path string) {
			if lo == 0 {
				*field(r.sc) = p.nonNeg(v, path, hi)
				return
			}
			*field(r.sc) = p.Integer(v, path, lo, hi, fmt.Sprintf("an integer from %d to %d", lo, hi))
		},
		write: func(b *strings.Builder, sc *Scenario) {
			if v := *field(sc); v != def && v != 0 {
				fmt.Fprintf(b, "%s: %d\n", name, v)
			}
		}}
}

// list is a list key: at most maxEntries items, each read by item and
// written by flow as one flow mapping; Format writes [] for none.
func list[T any](name string, field func(*Scenario) *[]T, item func(*parser, *yaml.Node, string) T, flow func(*T) string) topKey {
	return topKey{name: name,
		read: func(p *parser, r *reading, v *yaml.Node, path string) {
			nodes := p.Seq(v, path, name, maxEntries)
			items := make([]T, 0, len(nodes))
			for i, n := range nodes {
				items = append(items, item(p, n, strictfile.Index(path, i)))
			}
			*field(r.sc) = items
		},
		write: func(b *strings.Builder, sc *Scenario) {
			items := *field(sc)
			b.WriteString(name + ":")
			if len(items) == 0 {
				b.WriteString(" []")
			}
			b.WriteByte('\n')
			for i := range items {
				fmt.Fprintf(b, "  - %s\n", flow(&items[i]))
			}
		}}
}

func readProfile(p *parser, r *reading, v *yaml.Node, path string) {
	name := p.Str(v, path)
	var err error
	if r.prof, err = policy.ProfileByName(name); err != nil || name == "" {
		p.Fail(v, path, "unknown profile %q (allowed: %s)", strictfile.Clip(name), strings.Join(retry.ProfileNames(), ", "))
	}
	r.sc.Profile = r.prof.Name
	r.src.profile = p.at(v)
}

func readRandom(p *parser, r *reading, v *yaml.Node, path string) {
	fields := p.Mapping(v, path, randomKeys, func(e strictfile.Entry) {
		r.sc.RandomFixed = p.unitNumber(e.V, strictfile.Join(path, e.Key))
		r.sc.HasRandomFixed = true
	})
	if _, ok := fields["fixed"]; !ok {
		p.Fail(v, strictfile.Join(path, "fixed"), "missing required key (a number from 0 to 1, 1 excluded: every random draw)")
	}
}

// writeDescription writes the description folded, or quoted when folding
// would change it.
func writeDescription(b *strings.Builder, sc *Scenario) {
	d := sc.Description
	if d == "" {
		return
	}
	body, nl := strings.CutSuffix(d, "\n")
	if strings.Contains(body, "\n") || strings.Contains(body, "  ") || strings.TrimSpace(body) != body {
		fmt.Fprintf(b, "description: %s\n", jsonw.AppendString(nil, d))
		return
	}
	b.WriteString("description: >")
	if !nl {
		b.WriteByte('-')
	}
	b.WriteByte('\n')
	for _, l := range wrap(body, 76) {
		fmt.Fprintf(b, "  %s\n", l)
	}
}

func writeExpect(b *strings.Builder, sc *Scenario) {
	x := sc.Expect
	if x == nil {
		return
	}
	b.WriteString("expect:\n")
	if len(x.Events) > 0 {
		b.WriteString("  events:\n")
		for i := range x.Events {
			fmt.Fprintf(b, "    - %s\n", eventFlow(&x.Events[i]))
		}
	}
	if f := x.Final; f != nil {
		fmt.Fprintf(b, "  final: %s\n", finalFlow(f))
	}
}
