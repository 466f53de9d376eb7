package policy_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestPublicSurface keeps policy's public surface small: the top-level
// entries "go doc -short ./policy" lists (constant and variable groups,
// functions and types not grouped under a type) are at most 37.
func TestPublicSurface(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	files := []*ast.File{}
	for _, f := range pkgs["policy"].Files {
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/ohmypi/retryfsm/policy")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range append(p.Consts, p.Vars...) {
		names = append(names, strings.Join(v.Names, ","))
	}
	for _, f := range p.Funcs {
		names = append(names, f.Name)
	}
	for _, ty := range p.Types {
		names = append(names, ty.Name)
	}
	t.Logf("%d top-level entries", len(names))
	if len(names) > 37 {
		t.Errorf("policy has %d top-level public entries, at most 37 allowed: %v", len(names), names)
	}
	if len(names) < 10 {
		t.Errorf("only %d entries found: the parse missed the package? %v", len(names), names)
	}
}
