package policy_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"
)

// TestAgentLoopInSync: the agent loop in the package documentation is
// ExampleController's, to the byte (the methods run, Continue and Prompt of
// its toy agent, with their comments), so the documented loop is the one
// that runs.
func TestAgentLoopInSync(t *testing.T) {
	fset := token.NewFileSet()
	doc, err := parser.ParseFile(fset, "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for _, line := range strings.Split(doc.Doc.Text(), "\n") {
		if strings.HasPrefix(line, "\t") || (line == "" && len(block) > 0) {
			block = append(block, strings.TrimPrefix(line, "\t"))
			continue
		}
		if len(block) > 0 {
			break
		}
	}
	documented := strings.TrimSpace(strings.Join(block, "\n"))

	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := parser.ParseFile(fset, "example_test.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, name := range []string{"run", "Continue", "Prompt"} {
		found := false
		for _, d := range ex.Decls {
			f, ok := d.(*ast.FuncDecl)
			if !ok || f.Name.Name != name || f.Recv == nil {
				continue
			}
			from, to := fset.Position(f.Doc.Pos()).Offset, fset.Position(f.End()).Offset
			parts = append(parts, string(src[from:to]))
			found = true
		}
		if !found {
			t.Fatalf("example_test.go has no method %s", name)
		}
	}
	example := strings.Join(parts, "\n\n")
	if documented != example {
		t.Errorf("the package doc's agent loop differs from ExampleController's:\n--- doc.go\n%s\n--- example_test.go\n%s", documented, example)
	}
	embedding, err := os.ReadFile("../docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(embedding), "```go\n"+example+"\n```\n") {
		t.Errorf("docs/embedding.md lacks ExampleController's agent loop as a Go block:\n%s", example)
	}
}
