package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// layers maps a package tree to the maple trees it must not import: imports
// run down the layering of docs/design.md (scenarios → actors → algorithms →
// privacy, topology → internal), never back up. Tests may borrow helpers
// (random streams, say) from elsewhere and are not checked.
var layers = map[string][]string{
	"internal":   {"algorithms", "privacy", "topology", "actors", "scenarios"},
	"privacy":    {"algorithms", "topology", "actors", "scenarios"},
	"topology":   {"algorithms", "privacy", "actors", "scenarios"},
	"algorithms": {"actors", "scenarios"},
	"actors":     {"scenarios"},
}

func TestImportsRunDownTheLayers(t *testing.T) {
	fset := token.NewFileSet()
	for tree, forbidden := range layers {
		err := filepath.WalkDir(tree, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, up := range forbidden {
					if p == "maple/"+up || strings.HasPrefix(p, "maple/"+up+"/") {
						t.Errorf("%s imports %s: %s/ must not import %s/", path, p, tree, up)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
