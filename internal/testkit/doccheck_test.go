// The module's own checks, run by this package's tests: every exported
// top-level identifier of the module, and every package, carries a doc
// comment (this file); the layers and links of SPEC.md's package table
// (shape_test.go); the sizes of files and functions (sizes_test.go).

package testkit

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot walks up from the test's working directory to the directory
// holding go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// goFiles lists the non-test .go files under root, skipping testdata,
// hidden and underscore directories (which the go tool ignores too); the
// nested adapters module's files are checked too.
func goFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path == root {
				return nil
			}
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// undocumented returns "file:line: kind Name" for every exported top-level
// identifier in src without a doc comment. A name inside a parenthesised
// const, var or type group is documented if either the group or the spec
// has a doc comment. Methods count only when their receiver type is
// exported.
func undocumented(fset *token.FileSet, file *ast.File) []string {
	var out []string
	report := func(pos token.Pos, kind, name string) {
		p := fset.Position(pos)
		out = append(out, p.Filename+":"+strconv.Itoa(p.Line)+": "+kind+" "+name)
	}
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			kind := "func"
			if d.Recv != nil && len(d.Recv.List) > 0 {
				recv := receiverType(d.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = recv + "." + name
				kind = "method"
			}
			if d.Doc == nil {
				report(d.Pos(), kind, name)
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			groupDoc := d.Doc != nil
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && !groupDoc && s.Doc == nil {
						report(s.Pos(), "type", s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && !groupDoc && s.Doc == nil {
							report(n.Pos(), d.Tok.String(), n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// receiverType names the base type of a method receiver: T, *T, T[P] and
// *T[P] all give T.
func receiverType(expr ast.Expr) string {
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.ParenExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// TestExportedHaveDocComments: every exported top-level identifier of the
// module's non-test files (funcs, methods of exported types, types, consts
// and vars) has a doc comment, and every package has a package comment in
// one of its non-test files. Removing any of them makes it fail, naming
// the file and line.
func TestExportedHaveDocComments(t *testing.T) {
	root := moduleRoot(t)
	files := goFiles(t, root)
	if len(files) == 0 {
		t.Fatalf("no Go files found under %s", root)
	}
	fset := token.NewFileSet()
	var missing []string
	pkgDoc := map[string]bool{} // directory: some file has a package comment
	for _, path := range files {
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		dir := filepath.Dir(path)
		pkgDoc[dir] = pkgDoc[dir] || file.Doc != nil
		for _, m := range undocumented(fset, file) {
			rel, err := filepath.Rel(root, m)
			if err != nil {
				rel = m
			}
			missing = append(missing, rel)
		}
	}
	dirs := make([]string, 0, len(pkgDoc))
	for dir := range pkgDoc {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		if !pkgDoc[dir] {
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				rel = dir
			}
			missing = append(missing, rel+": package comment")
		}
	}
	for _, m := range missing {
		t.Errorf("no doc comment: %s", m)
	}
	if len(missing) > 0 {
		t.Logf("%d doc comments missing (%d files checked)", len(missing), len(files))
	}
}

// TestUndocumentedDetects checks the checker itself on a small source:
// it must report exactly the exported names that lack a doc comment.
func TestUndocumentedDetects(t *testing.T) {
	const src = `package p

// Documented is documented.
func Documented() {}

func Bare() {}

func unexported() {}

// T is documented.
type T struct{}

type U struct{}

type hidden struct{}

func (T) Method() {}

func (hidden) Method() {}

// Doc is documented.
func (*U) Doc() {}

// Group documents both.
const (
	A = 1
	B = 2
)

const (
	// C is documented.
	C = 3
	D = 4
)

var E, f = 1, 2

type (
	// G is documented.
	G int
	H int
)
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	got := undocumented(fset, file)
	want := []string{
		"p.go:6: func Bare",
		"p.go:13: type U",
		"p.go:17: method T.Method",
		"p.go:33: const D",
		"p.go:36: var E",
		"p.go:41: type H",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("undocumented:\n got %q\nwant %q", got, want)
	}
}
