package fsm_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmypi/retryfsm/fsm"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./fsm -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run go test ./fsm -update if the change is intended)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

func TestDiagrams(t *testing.T) {
	m := fsm.MustNew(doorDef())
	tests := []struct {
		name        string
		render      func() string
		golden      string
		state       func(s string) string   // how a state appears
		edge        func(e fsm.Edge) string // how an edge appears
		initialMark []string                // lines marking the initial state
	}{
		{
			name: "DOT", render: m.DOT, golden: "door.dot.golden",
			state: func(s string) string { return "\t\"" + s + "\"" },
			edge: func(e fsm.Edge) string {
				return "\t\"" + e.From + "\" -> \"" + e.To + "\" [label=\"" + e.Event + "\"];\n"
			},
			initialMark: []string{"\t\"__start\" [shape=point, label=\"\"];\n", "\t\"__start\" -> \"closed\";\n", "\t\"closed\" [style=bold];\n"},
		},
		{
			name: "Mermaid", render: m.Mermaid, golden: "door.mmd.golden",
			state:       func(s string) string { return "    " + s + "\n" },
			edge:        func(e fsm.Edge) string { return "    " + e.From + " --> " + e.To + ": " + e.Event + "\n" },
			initialMark: []string{"stateDiagram-v2\n", "    [*] --> closed\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := tt.render()
			for _, s := range m.States() {
				if !strings.Contains(out, tt.state(s)) {
					t.Errorf("state %q missing (want %q)", s, tt.state(s))
				}
			}
			for _, e := range m.Edges() {
				if strings.Count(out, tt.edge(e)) != 1 {
					t.Errorf("edge %v missing or repeated (want one %q)", e, tt.edge(e))
				}
			}
			for _, mark := range tt.initialMark {
				if !strings.Contains(out, mark) {
					t.Errorf("initial-state mark %q missing", mark)
				}
			}
			for i := range 100 {
				if again := tt.render(); again != out {
					t.Fatalf("call %d rendered different bytes:\n%s\nfirst:\n%s", i, again, out)
				}
			}
			golden(t, tt.golden, out)
		})
	}
}

// Names that are not identifiers must still produce valid diagrams, and the
// synthetic start node / aliases must not collide with a real state.
func TestDiagramsQuoteAwkwardNames(t *testing.T) {
	m := fsm.MustNew(fsm.Definition{
		Name:    `say "hi"`,
		Initial: "waiting for retry",
		States:  []string{"waiting for retry", "__start", "state", "s0", `a"b`},
		Transitions: []fsm.Transition{
			{Event: "go; now", Src: []string{"waiting for retry"}, Dst: "__start"},
			{Event: "x", Src: []string{"__start"}, Dst: "state"},
			{Event: "y", Src: []string{"state"}, Dst: "s0"},
			{Event: "z", Src: []string{"s0"}, Dst: `a"b`},
		},
	})
	dot := m.DOT()
	for _, want := range []string{
		"digraph \"say \\\"hi\\\"\" {\n",
		"\t\"___start\" [shape=point, label=\"\"];\n",
		"\t\"___start\" -> \"waiting for retry\";\n",
		"\t\"waiting for retry\" -> \"__start\" [label=\"go; now\"];\n",
		"\t\"s0\" -> \"a\\\"b\" [label=\"z\"];\n",
	} {
		if !strings.Contains(dot, want) {
			t.Errorf("DOT lacks %q:\n%s", want, dot)
		}
	}
	mmd := m.Mermaid()
	for _, want := range []string{
		"    state \"waiting for retry\" as _s0\n",
		"    __start\n",
		"    state \"state\" as s2\n",
		"    s0\n",
		"    state \"a#quot;b\" as s4\n",
		"    [*] --> _s0\n",
		"    _s0 --> __start: go#59; now\n",
		"    __start --> s2: x\n",
		"    s2 --> s0: y\n",
		"    s0 --> s4: z\n",
	} {
		if !strings.Contains(mmd, want) {
			t.Errorf("Mermaid lacks %q:\n%s", want, mmd)
		}
	}
}
