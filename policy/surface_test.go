package policy_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// maxSurface bounds the top-level entries of "go doc -short ./policy".
const maxSurface = 25

// machinery matches the names of the retry machine's internals, which live
// in package policy/retry (for the session core, the simulator, the
// explorer, the trace and the CLI) and must not come back to policy's
// page: the table's rows and guards, the inputs, the effect templates, the
// decisions and their effects, the snapshot, the table's builder and
// pairing helpers.
var machinery = regexp.MustCompile(`^(Decision|Effect|Applier|Rule|Guard|Input(s|[A-Z]\w*)?|EndInput|Step(|[A-Z]\w*)|Final(Error|[A-Z]\w*)|Snapshot|NewVariant|TableMarkdown|Decide\w*|Resolve|PairError|ProfileNames)$`)

// TestPublicSurface keeps policy's public surface an embedder's: the
// top-level entries "go doc -short ./policy" lists (constant and variable
// groups, functions and types not grouped under a type) are at most
// maxSurface, and no exported name of the package (top level, or grouped
// under a type: its constants and functions) is one of the retry
// machine's. (Methods are not names of the package: Controller.Snapshot
// returns the machine's retry.Snapshot.)
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
	var entries, all []string
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			all = append(all, v.Names...)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			all = append(all, f.Name)
		}
	}
	for _, v := range append(p.Consts, p.Vars...) {
		entries = append(entries, strings.Join(v.Names, ","))
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, f := range p.Funcs {
		entries = append(entries, f.Name)
	}
	for _, ty := range p.Types {
		entries = append(entries, ty.Name)
		all = append(all, ty.Name)
		values(ty.Consts)
		values(ty.Vars)
		funcs(ty.Funcs)
	}
	t.Logf("%d top-level entries", len(entries))
	if len(entries) > maxSurface {
		t.Errorf("policy has %d top-level public entries, at most %d allowed: %v", len(entries), maxSurface, entries)
	}
	if len(entries) < 10 {
		t.Errorf("only %d entries found: the parse missed the package? %v", len(entries), entries)
	}
	for _, n := range all {
		if machinery.MatchString(n) {
			t.Errorf("policy exports %s, the retry machine's (package policy/retry holds it)", n)
		}
	}
}
