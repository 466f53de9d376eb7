package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ohmypi/retryfsm/policy"
	"github.com/ohmypi/retryfsm/policy/retry"
)

func init() {
	register(&command{
		name:  "graph",
		short: "print the retry machine as a Graphviz or mermaid diagram",
		long: `Prints the retry state machine of a policy variant (default: sound) as a
Graphviz digraph (--format dot) or a mermaid state diagram (--format mermaid),
drawn from the variant's transition table (SPEC.md §3.1, §9.1). Each arrow
is labelled with the rules it stands for, one per line, as "input [guard] /
event" ("agent_end:retryable [enabled && attempt < maxRetries] / retry");
rules that only declare a pair ignored draw nothing. Rules from one state to
another are merged into one arrow, self-loops included, and the rest states
(idle, exhausted, cancelled) are drawn apart: in a cluster of their own in
dot, with the class "rest" in mermaid.

Exit status: 0 when the diagram was printed, 2 on invalid flags.`,
		options: func(fs *flag.FlagSet) runner {
			o := &graphOptions{}
			variantFlag(fs, &o.variant, "draw the machine of the policy variant `NAME` instead of sound")
			fs.StringVar(&o.format, "format", "dot", "draw the machine as `FORMAT`: dot (Graphviz) or mermaid")
			return o
		},
	})
}

// graphOptions are graph's flags.
type graphOptions struct{ variant, format string }

func (o *graphOptions) run(args []string, stdout, stderr io.Writer) int {
	c := lookup("graph")
	if len(args) != 0 {
		return usageError(c, stderr, "unexpected arguments: %s", strings.Join(args, " "))
	}
	name, ok := checkVariant(c, o.variant, stderr)
	if !ok {
		return exitUsage
	}
	format, ok := checkFormat(c, o.format, stderr, "dot", "mermaid")
	if !ok {
		return exitUsage
	}
	v, err := policy.VariantByName(name)
	if err != nil { // checked above
		fmt.Fprintf(stderr, "retrysim graph: %v\n", err)
		return exitUsage
	}
	out := graphDOT(v)
	if format == "mermaid" {
		out = graphMermaid(v)
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		fmt.Fprintf(stderr, "retrysim graph: %v\n", err)
		return exitFail
	}
	return exitOK
}

// graphEdge is one arrow of the diagram: every rule of the table from one
// state to another, as label lines in table order.
type graphEdge struct {
	from, to policy.State
	labels   []string
}

// ruleLabel is how a rule labels its arrow: "input [guard] / event", or
// "input / event" when the rule has no guard.
func ruleLabel(r *retry.Rule) string {
	s := r.Input.String()
	if r.Guard.Name != "" {
		s += " [" + r.Guard.Name + "]"
	}
	return s + " / " + r.Event
}

// graphEdges returns the arrows of v's table, ordered by source state, then
// by target state (display order): one per pair of states, whatever the
// number of rules between them. Ignored pairs draw nothing.
func graphEdges(v *policy.Variant) []graphEdge {
	var edges []graphEdge
	index := map[[2]policy.State]int{}
	for _, r := range v.Rules() {
		if r.Ignored() {
			continue
		}
		label := ruleLabel(&r)
		for _, from := range r.From {
			k := [2]policy.State{from, r.To}
			i, ok := index[k]
			if !ok {
				i = len(edges)
				index[k] = i
				edges = append(edges, graphEdge{from: from, to: r.To})
			}
			if !slices.Contains(edges[i].labels, label) {
				edges[i].labels = append(edges[i].labels, label)
			}
		}
	}
	slices.SortStableFunc(edges, func(a, b graphEdge) int {
		if d := a.from.Index() - b.from.Index(); d != 0 {
			return d
		}
		return a.to.Index() - b.to.Index()
	})
	return edges
}

// restStates and chainStates are the states in display order, apart.
func restStates() (rest, chain []policy.State) {
	for _, s := range policy.States() {
		if s.AtRest() {
			rest = append(rest, s)
		} else {
			chain = append(chain, s)
		}
	}
	return rest, chain
}

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func dotQuote(s string) string { return `"` + dotEscaper.Replace(s) + `"` }

// graphDOT draws v as a Graphviz digraph: the rest states in a dashed
// cluster of their own, the initial state bold and pointed at from a point,
// each arrow's rules as left-justified label lines.
func graphDOT(v *policy.Variant) string {
	var b strings.Builder
	rest, chain := restStates()
	b.WriteString("digraph " + dotQuote("retry_"+v.Name) + " {\n")
	b.WriteString("\trankdir=LR;\n")
	b.WriteString("\tnode [shape=ellipse];\n")
	b.WriteString("\t\"__start\" [shape=point, label=\"\"];\n")
	node := func(indent string, s policy.State) {
		b.WriteString(indent + dotQuote(string(s)))
		if s == policy.StateIdle {
			b.WriteString(" [style=bold]")
		}
		b.WriteString(";\n")
	}
	b.WriteString("\tsubgraph \"cluster_rest\" {\n\t\tlabel=\"rest states\";\n\t\tstyle=dashed;\n")
	for _, s := range rest {
		node("\t\t", s)
	}
	b.WriteString("\t}\n")
	for _, s := range chain {
		node("\t", s)
	}
	b.WriteString("\t\"__start\" -> " + dotQuote(string(policy.StateIdle)) + ";\n")
	for _, e := range graphEdges(v) {
		label := ""
		for _, l := range e.labels {
			label += dotEscaper.Replace(l) + `\l`
		}
		b.WriteString("\t" + dotQuote(string(e.from)) + " -> " + dotQuote(string(e.to)) + " [label=\"" + label + "\"];\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// mermaidEscaper writes label text with mermaid's entity codes where the
// state diagram's syntax or HTML would read a character: a transition's
// text ends at ':' or ';', and '<' and '>' would be read as markup.
var mermaidEscaper = strings.NewReplacer("#", "#35;", `"`, "#quot;", ";", "#59;", ":", "#58;",
	"<", "#lt;", ">", "#gt;", "\n", " ", "\r", " ")

// graphMermaid draws v as a mermaid stateDiagram-v2: the states in display
// order, "[*] --> idle", one transition per arrow with its rules as lines
// (joined by <br>), and the rest states in the class "rest", drawn dashed.
func graphMermaid(v *policy.Variant) string {
	var b strings.Builder
	rest, _ := restStates()
	b.WriteString("stateDiagram-v2\n")
	b.WriteString("    classDef rest stroke-dasharray:4 4\n")
	for _, s := range policy.States() {
		b.WriteString("    " + string(s) + "\n")
	}
	b.WriteString("    [*] --> " + string(policy.StateIdle) + "\n")
	for _, e := range graphEdges(v) {
		labels := make([]string, len(e.labels))
		for i, l := range e.labels {
			labels[i] = mermaidEscaper.Replace(l)
		}
		b.WriteString("    " + string(e.from) + " --> " + string(e.to) + ": " + strings.Join(labels, "<br>") + "\n")
	}
	names := make([]string, len(rest))
	for i, s := range rest {
		names[i] = string(s)
	}
	b.WriteString("    class " + strings.Join(names, ",") + " rest\n")
	return b.String()
}
