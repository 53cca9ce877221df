package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"maple/scenarios"
)

// layers lists maple's package trees from the bottom up, as docs/design.md
// draws them: a package may import the packages of lower layers and of its
// own tree, never those of a layer above it nor those of another tree in its
// own layer (privacy and topology know nothing of each other, nor do the
// runner and the report). A tree is a directory and everything below it,
// except the trees listed separately (scenarios/inputs and scenarios/run
// are not part of scenarios); "." is the command's own package in the repository root.
// Tests may borrow helpers (random streams, say) from elsewhere, and link
// the families in, and are not checked.
var layers = [][]string{
	{"internal"},
	{"privacy", "topology"},
	{"algorithms"},
	{"actors"},
	{"scenarios"},
	{"rundir"},
	{"figures", "scenarios/inputs"},
	{"scenarios/run", "report"},
	{"families", "cluster"},
	{"cli"},
	{"."},
}

// treeOf returns the tree a package directory (slash-separated, relative
// to the repository root) belongs to and its layer, or false for a
// directory outside every tree.
func treeOf(dir string) (string, int, bool) {
	tree, layer := "", -1
	for l, trees := range layers {
		for _, t := range trees {
			if (dir == t || t != "." && strings.HasPrefix(dir, t+"/")) && len(t) > len(tree) {
				tree, layer = t, l
			}
		}
	}
	return tree, layer, layer >= 0
}

// imports calls fn with every non-test Go file of the repository (its
// directory, slash-separated) and each maple package it imports (without
// the module prefix).
func imports(t *testing.T, fn func(file, dir, imp string)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, "maple/"); ok {
				fn(path, dir, rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImportsRunDownTheLayers(t *testing.T) {
	imports(t, func(file, dir, imp string) {
		tree, layer, ok := treeOf(dir)
		if !ok {
			t.Errorf("%s: directory %s is in no layer of layers_test.go: add it", file, dir)
			return
		}
		impTree, impLayer, ok := treeOf(imp)
		switch {
		case !ok:
			t.Errorf("%s imports maple/%s, which is in no layer of layers_test.go", file, imp)
		case impLayer > layer:
			t.Errorf("%s imports maple/%s: %s/ must not import %s/, a layer above it", file, imp, tree, impTree)
		case impLayer == layer && impTree != tree:
			t.Errorf("%s imports maple/%s: %s/ and %s/ are beside each other and must not import each other", file, imp, tree, impTree)
		}
	})
}

// familyOf returns the family a package directory belongs to
// (families/NAME/…), or "" for the shared packages families/all and
// families/internal and for directories outside families.
func familyOf(dir string) string {
	rest, ok := strings.CutPrefix(dir, "families/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	if name == "all" || name == "internal" {
		return ""
	}
	return name
}

// families lists the family packages (families/NAME).
func families(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("families")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && familyOf("families/"+e.Name()) != "" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no family packages under families/")
	}
	return names
}

// A family's glue never imports another family's: what two families share
// lives below them (the runner, families/internal).
func TestFamiliesImportNoOtherFamily(t *testing.T) {
	imports(t, func(file, dir, imp string) {
		if f, g := familyOf(dir), familyOf(imp); f != "" && g != "" && f != g {
			t.Errorf("%s imports maple/%s: family %s must not import family %s", file, imp, f, g)
		}
	})
}

// The runner knows no family: no file of scenarios/run or of the inputs it
// builds (scenarios/inputs), tests included, imports a family's glue, actors
// or algorithms (maple/families/NAME, maple/actors/NAME,
// maple/algorithms/NAME for each family package NAME), nor names a
// registered algorithm kind.
func TestRunnerKnowsNoFamily(t *testing.T) {
	names := families(t)
	kinds := scenarios.FamilyKinds()
	if len(kinds) == 0 {
		t.Fatal("no family is registered")
	}
	var words []string
	for _, k := range kinds {
		words = append(words, regexp.QuoteMeta(k))
	}
	kind := regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)\b`)
	var files []string
	for _, dir := range []string{"scenarios/run", "scenarios/inputs"} {
		matches, err := filepath.Glob(dir + "/*.go")
		if err != nil || len(matches) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		files = append(files, matches...)
	}
	fset := token.NewFileSet()
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, file, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, tree := range []string{"families", "actors", "algorithms"} {
				rest, ok := strings.CutPrefix(p, "maple/"+tree+"/")
				name, _, _ := strings.Cut(rest, "/")
				if ok && (tree == "families" || slices.Contains(names, name)) {
					t.Errorf("%s imports %s: the runner must not import a family", file, p)
				}
			}
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := kind.FindString(line); m != "" {
				t.Errorf("%s:%d names the family %s: the runner must not know the families", file, i+1, m)
			}
		}
	}
}
