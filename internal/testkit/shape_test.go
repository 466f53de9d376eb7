package testkit

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// modulePath is the root module's import path; the adapters module's
// packages are under it too.
const modulePath = "github.com/ohmypi/retryfsm"

// specPackages reads SPEC.md's "### Packages" table: the packages of each
// row, in the table's order (a package's row: the first column's
// backquoted names; "retryfsm" is the module's root).
func specPackages(t *testing.T, root string) (order []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "SPEC.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "### Packages\n")
	if !ok {
		t.Fatal("SPEC.md has no ### Packages section")
	}
	name := regexp.MustCompile("`([^`]+)`")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		if !strings.HasPrefix(line, "| `") {
			if rows > 0 && !strings.HasPrefix(line, "|") {
				break
			}
			continue
		}
		rows++
		first := strings.Split(line, "|")[1]
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			p := m[1]
			if p == "retryfsm" {
				p = "."
			}
			order = append(order, p)
		}
	}
	if len(order) == 0 {
		t.Fatal("SPEC.md's package table has no rows")
	}
	return order
}

// packageImports maps each package folder (relative to root, "." the
// root) with non-test Go files to the module packages it imports.
func packageImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	fset := token.NewFileSet()
	for _, file := range goFiles(t, root) {
		rel, _ := filepath.Rel(root, filepath.Dir(file))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pkgs[rel]; !ok {
			pkgs[rel] = nil
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			var dep string
			switch {
			case p == modulePath:
				dep = "."
			case strings.HasPrefix(p, modulePath+"/"):
				dep = strings.TrimPrefix(p, modulePath+"/")
			default:
				continue
			}
			if !slices.Contains(pkgs[rel], dep) {
				pkgs[rel] = append(pkgs[rel], dep)
			}
		}
	}
	return pkgs
}

// TestLayers: every package with code is in SPEC.md's package table, and
// imports only packages of rows above its own: the table is the layering,
// read from the ground up, so no import runs from a lower layer to a
// higher one and none goes round in a circle.
func TestLayers(t *testing.T) {
	root := moduleRoot(t)
	order := specPackages(t, root)
	rank := map[string]int{}
	for i, p := range order {
		rank[p] = i
	}
	for pkg, deps := range packageImports(t, root) {
		if strings.HasPrefix(pkg, "cmd/") && pkg != "cmd/internal/cli" || strings.Contains(pkg, "/examples/") {
			continue // programs: nothing imports them
		}
		r, ok := rank[pkg]
		if !ok {
			t.Errorf("%s: not in SPEC.md's package table (### Packages)", pkg)
			continue
		}
		for _, d := range deps {
			if dr, ok := rank[d]; ok && dr >= r {
				t.Errorf("%s imports %s, which SPEC.md's package table lists at or below it: an import from a lower layer up", pkg, d)
			}
		}
	}
}

// TestProxyLinksNoSimulator: the proxy reaches none of the simulators
// (fleet, sim, explore, tune), directly or through another package: the
// provider's model it runs (fleetspec.Provider, its config and the fleet
// file) is below both it and the fleet simulator, so that the rules of a
// provider are written once and the proxy's program links no event loop.
func TestProxyLinksNoSimulator(t *testing.T) {
	imports := packageImports(t, moduleRoot(t))
	if _, ok := imports["proxy"]; !ok {
		t.Fatal("no package proxy: the check would see nothing")
	}
	via := map[string]string{"proxy": ""} // each package reached, and the one importing it
	queue := []string{"proxy"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, d := range imports[p] {
			if _, seen := via[d]; !seen {
				via[d] = p
				queue = append(queue, d)
			}
		}
	}
	if _, ok := via["fleet/fleetspec"]; !ok {
		t.Error("proxy does not reach fleet/fleetspec: its fault model moved elsewhere, and this check should follow it")
	}
	for _, sim := range []string{"fleet", "sim", "explore", "tune"} {
		if _, ok := via[sim]; ok {
			path := sim
			for p := via[sim]; p != ""; p = via[p] {
				path = p + " -> " + path
			}
			t.Errorf("proxy reaches the simulator %s (%s): what it needs belongs below both (fleet/fleetspec)", sim, path)
		}
	}
}

// TestCoreLinksOnlyItsEngines: what an embedder links for retryfsm.Do and
// the Controller (the root and policy, and every module package they reach)
// imports, outside the standard library, only looplab/fsm and benbjohnson's
// clock. So the settings' JSON is read in the core by Settings.Apply, the one
// reader of a settings object, which every file kind and the RPC command use;
// strictfile, on yaml.v3's nodes, reads files around it.
func TestCoreLinksOnlyItsEngines(t *testing.T) {
	root := moduleRoot(t)
	imports := packageImports(t, root)
	allowed := []string{"github.com/looplab/fsm", "github.com/benbjohnson/clock"}
	seen := map[string]bool{}
	queue := []string{".", "policy"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		queue = append(queue, imports[p]...)
		files, err := filepath.Glob(filepath.Join(root, p, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", p, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				first, _, _ := strings.Cut(path, "/")
				if strings.Contains(first, ".") && !strings.HasPrefix(path, modulePath) && !slices.Contains(allowed, path) {
					t.Errorf("%s imports %s: the core links only %v", file, path, allowed)
				}
			}
		}
	}
	if !seen["policy/retry"] || !seen["fsm"] {
		t.Errorf("the core reached %v, without policy/retry or fsm: the walk is wrong", seen)
	}
}
