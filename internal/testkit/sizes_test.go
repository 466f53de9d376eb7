package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// Size limits of the code (not of tests or generated tables): a file a
// reader can hold, a function that fits a screen or two.
const (
	maxFileLines = 800
	maxFuncLines = 100
)

// TestSizes: no non-test file over maxFileLines lines and no function (a
// declared one or a literal) over maxFuncLines, except generated files
// ("Code generated ... DO NOT EDIT.").
func TestSizes(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, file := range goFiles(t, root) {
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		rel, _ := filepath.Rel(root, file)
		if n := fset.File(f.Pos()).LineCount(); n > maxFileLines {
			t.Errorf("%s: %d lines (at most %d)", rel, n, maxFileLines)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var body *ast.BlockStmt
			name := ""
			switch fn := n.(type) {
			case *ast.FuncDecl:
				body, name = fn.Body, fn.Name.Name
			case *ast.FuncLit:
				body, name = fn.Body, "func literal"
			}
			if body == nil {
				return true
			}
			if l := fset.Position(body.Rbrace).Line - fset.Position(n.Pos()).Line + 1; l > maxFuncLines {
				t.Errorf("%s:%d: %s is %d lines (at most %d)", rel, fset.Position(n.Pos()).Line, name, l, maxFuncLines)
			}
			return true
		})
	}
}
