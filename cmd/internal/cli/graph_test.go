package cli

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/policy"
)

var fiveStates = []string{"idle", "backoff", "continuing", "exhausted", "cancelled"}

func TestGraph(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		prefix string
		state  func(s string) string // how a state appears
	}{
		{"dot by default", []string{"graph"}, "digraph ", func(s string) string { return `"` + s + `"` }},
		{"--format dot", []string{"graph", "--format", "dot"}, "digraph ", func(s string) string { return `"` + s + `"` }},
		{"--format=mermaid", []string{"graph", "--format=mermaid"}, "stateDiagram-v2\n", func(s string) string { return "    " + s + "\n" }},
		{"--variant sound", []string{"graph", "--variant", "sound", "-format", "mermaid"}, "stateDiagram-v2\n", func(s string) string { return "    " + s + "\n" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitOK || errOut != "" {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			if !strings.HasPrefix(out, tt.prefix) || !strings.HasSuffix(out, "\n") {
				t.Fatalf("output does not start with %q and end in a newline:\n%s", tt.prefix, out)
			}
			for _, s := range fiveStates {
				if !strings.Contains(out, tt.state(s)) {
					t.Errorf("no state %s (%q) in:\n%s", s, tt.state(s), out)
				}
			}
			_, again, _ := runMain(t, tt.args...)
			if again != out {
				t.Fatal("two runs differ")
			}
		})
	}
}

func TestGraphUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown format", []string{"graph", "--format", "png"}, `unknown format "png" (allowed: dot, mermaid)`},
		{"unknown variant", []string{"graph", "--variant", "nope"}, `unknown variant "nope"`},
		{"positional argument", []string{"graph", "extra"}, "unexpected arguments: extra"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runMain(t, tt.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and stderr with %q", code, out, errOut, tt.want)
			}
		})
	}
}

// graphArrow is one arrow read back from graph's output.
type graphArrow struct{ from, to string }

var (
	dotArrowRE     = regexp.MustCompile(`(?m)^\t"([a-z_]+)" -> "([a-z_]+)" \[label="(.*)"\];$`)
	mermaidArrowRE = regexp.MustCompile(`(?m)^    ([a-z_]+) --> ([a-z_]+): (.*)$`)
	entityCode     = regexp.MustCompile(`#\w+;`)
	mermaidEntity  = strings.NewReplacer("#58;", ":", "#59;", ";", "#lt;", "<", "#gt;", ">", "#quot;", `"`, "#35;", "#")
)

// readArrows parses graph's output into its arrows and their label lines.
func readArrows(t *testing.T, format, out string) map[graphArrow][]string {
	t.Helper()
	arrows := map[graphArrow][]string{}
	add := func(from, to string, labels []string) {
		k := graphArrow{from, to}
		if _, dup := arrows[k]; dup {
			t.Errorf("two arrows %s -> %s: parallel arrows are not merged\n%s", from, to, out)
		}
		arrows[k] = labels
	}
	if format == "dot" {
		for _, m := range dotArrowRE.FindAllStringSubmatch(out, -1) {
			if !strings.HasSuffix(m[3], `\l`) {
				t.Errorf("label %q does not end its last line", m[3])
			}
			add(m[1], m[2], strings.Split(strings.TrimSuffix(m[3], `\l`), `\l`))
		}
		return arrows
	}
	for _, m := range mermaidArrowRE.FindAllStringSubmatch(out, -1) {
		var labels []string
		for _, l := range strings.Split(m[3], "<br>") {
			// mermaid replaces its entity codes (#58;) before it parses.
			if strings.ContainsAny(entityCode.ReplaceAllString(l, ""), ":;<>\"") {
				t.Errorf("label line %q holds a character that ends or breaks a mermaid transition", l)
			}
			labels = append(labels, mermaidEntity.Replace(l))
		}
		add(m[1], m[2], labels)
	}
	return arrows
}

// TestGraphLabelsInputAndGuard: every transition rule of a variant's
// table is one label line "input [guard] / event" on the one arrow from
// its state to its target (parallel arrows, self-loops included, are
// merged), in both formats and both variants; ignored rules draw nothing;
// the rest states are drawn apart.
func TestGraphLabelsInputAndGuard(t *testing.T) {
	for _, variant := range []string{"sound", "original"} {
		v, err := policy.VariantByName(variant)
		if err != nil {
			t.Fatal(err)
		}
		want := map[graphArrow][]string{}
		for _, r := range v.Rules() {
			if r.Ignored() {
				continue
			}
			label := r.Input.String()
			if r.Guard.Name != "" {
				label += " [" + r.Guard.Name + "]"
			}
			label += " / " + r.Event
			for _, from := range r.From {
				k := graphArrow{string(from), string(r.To)}
				if !slices.Contains(want[k], label) {
					want[k] = append(want[k], label)
				}
			}
		}
		for _, format := range []string{"dot", "mermaid"} {
			t.Run(variant+"/"+format, func(t *testing.T) {
				code, out, errOut := runMain(t, "graph", "--variant", variant, "--format", format)
				if code != exitOK || errOut != "" {
					t.Fatalf("exit %d, stderr:\n%s", code, errOut)
				}
				got := readArrows(t, format, out)
				if len(got) != len(want) {
					t.Errorf("%d arrows, want %d (one per pair of states with a rule):\n%s", len(got), len(want), out)
				}
				for k, labels := range want {
					if !slices.Equal(got[k], labels) {
						t.Errorf("arrow %s -> %s: labels\n  %q\nwant\n  %q", k.from, k.to, got[k], labels)
					}
				}
				switch format {
				case "dot":
					cluster := regexp.MustCompile(`(?s)subgraph "cluster_rest" \{[^}]*\}`).FindString(out)
					for _, s := range fiveStates {
						if strings.Contains(cluster, `"`+s+`"`) != policy.State(s).AtRest() {
							t.Errorf("state %s: in the rest cluster %v, at rest %v:\n%s", s, !policy.State(s).AtRest(), policy.State(s).AtRest(), out)
						}
					}
				case "mermaid":
					if !strings.Contains(out, "\n    class idle,exhausted,cancelled rest\n") || !strings.Contains(out, "\n    classDef rest ") {
						t.Errorf("the rest states are not drawn apart:\n%s", out)
					}
				}
			})
		}
	}
	// The example, as printed.
	_, dot, _ := runMain(t, "graph")
	if !strings.Contains(dot, `"idle" -> "backoff" [label="agent_end:retryable [enabled && attempt < maxRetries] / retry\l`) {
		t.Errorf("no labelled retry arrow from idle:\n%s", dot)
	}
	// The original's backoff self-loops: one arrow holding all of them.
	_, mer, _ := runMain(t, "graph", "--variant", "original", "--format", "mermaid")
	loops := readArrows(t, "mermaid", mer)[graphArrow{"backoff", "backoff"}]
	events := map[string]bool{}
	for _, l := range loops {
		events[l[strings.LastIndex(l, "/ ")+2:]] = true
	}
	if len(events) != 6 {
		t.Errorf("backoff's self-loop holds the events %v, want the six of the original's table", events)
	}
}
