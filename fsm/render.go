package fsm

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// The diagrams are rendered from the Machine's own table, not with looplab's
// visualizers (which read the live state without a lock and order edges by
// map iteration). Output depends only on the Definition: states in display
// order, then edges grouped by source in display order, then by event name,
// then by destination in display order.

// diagramEdges returns the edges in diagram order.
func (m *Machine) diagramEdges() []Edge {
	edges := slices.Clone(m.edges)
	slices.SortStableFunc(edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(m.index[a.From], m.index[b.From]),
			strings.Compare(a.Event, b.Event),
			cmp.Compare(m.index[a.To], m.index[b.To]))
	})
	return edges
}

// freshName returns base, prefixed with underscores until it is no state.
func (m *Machine) freshName(base string, taken map[string]bool) string {
	for m.HasState(base) || taken[base] {
		base = "_" + base
	}
	return base
}

// DOT renders the machine as a Graphviz digraph. Every state is a node
// (the initial one bold, and pointed at by an arrow from a point-shaped
// start node), every edge is labelled with its event. The output is
// deterministic: the same Machine always renders the same bytes.
func (m *Machine) DOT() string {
	var b strings.Builder
	name := m.name
	if name == "" {
		name = "fsm"
	}
	start := m.freshName("__start", nil)
	b.WriteString("digraph " + dotID(name) + " {\n")
	b.WriteString("\trankdir=LR;\n")
	b.WriteString("\tnode [shape=ellipse];\n")
	b.WriteString("\t" + dotID(start) + " [shape=point, label=\"\"];\n")
	for _, s := range m.states {
		if s == m.initial {
			b.WriteString("\t" + dotID(s) + " [style=bold];\n")
		} else {
			b.WriteString("\t" + dotID(s) + ";\n")
		}
	}
	b.WriteString("\t" + dotID(start) + " -> " + dotID(m.initial) + ";\n")
	for _, e := range m.diagramEdges() {
		b.WriteString("\t" + dotID(e.From) + " -> " + dotID(e.To) + " [label=" + dotID(e.Event) + "];\n")
	}
	b.WriteString("}\n")
	return b.String()
}

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// dotID quotes s as a DOT ID.
func dotID(s string) string { return `"` + dotEscaper.Replace(s) + `"` }

// Mermaid renders the machine as a mermaid stateDiagram-v2: "[*] --> initial",
// every state declared in display order, then one "from --> to: event" line
// per edge. A state whose name is not a plain identifier (or is a mermaid
// keyword) is declared as `state "name" as <alias>`. Deterministic, like DOT.
func (m *Machine) Mermaid() string {
	ids := make(map[string]string, len(m.states))
	taken := make(map[string]bool, len(m.states))
	for _, s := range m.states {
		if mermaidPlain(s) {
			ids[s] = s
			taken[s] = true
		}
	}
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for i, s := range m.states {
		if id, ok := ids[s]; ok {
			b.WriteString("    " + id + "\n")
			continue
		}
		id := m.freshName("s"+strconv.Itoa(i), taken)
		ids[s], taken[id] = id, true
		b.WriteString("    state \"" + mermaidText(s) + "\" as " + id + "\n")
	}
	b.WriteString("    [*] --> " + ids[m.initial] + "\n")
	for _, e := range m.diagramEdges() {
		b.WriteString("    " + ids[e.From] + " --> " + ids[e.To] + ": " + mermaidText(e.Event) + "\n")
	}
	return b.String()
}

// mermaidKeywords cannot be bare state ids in a stateDiagram.
var mermaidKeywords = map[string]bool{
	"state": true, "note": true, "direction": true, "class": true, "classDef": true,
	"style": true, "end": true, "as": true, "click": true, "left": true, "right": true, "of": true,
}

// mermaidPlain reports whether s can be used as a bare mermaid state id.
func mermaidPlain(s string) bool {
	if s == "" || mermaidKeywords[s] {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

var mermaidEscaper = strings.NewReplacer(`"`, "#quot;", ";", "#59;", "\n", " ", "\r", " ")

// mermaidText makes s safe inside a quoted name or after "-->...: ".
func mermaidText(s string) string { return mermaidEscaper.Replace(s) }
