package fedplt

import (
	"strings"
	"testing"

	"maple/internal/doctest"
)

// docPage is the page whose Fed-PLT solver example the tests build.
const docPage = "../../docs/writing-behaviours.md"

// solverBlocks returns the page's whole Fed-PLT files and excerpts (those
// naming files under a fedplt directory), by the path they name.
func solverBlocks(t *testing.T) (whole, parts map[string][]string) {
	t.Helper()
	return doctest.Blocks(t, docPage, func(path string) bool { return strings.Contains(path, "fedplt/") })
}

// The page's Fed-PLT solver file is the file, and its test excerpt is in
// the test file, to the byte: the page cannot drift from the code.
func TestSolverDocExampleIsTheCode(t *testing.T) {
	whole, parts := solverBlocks(t)
	if len(whole) != 1 || len(parts) != 1 {
		t.Fatalf("the page shows %d whole Fed-PLT files and excerpts of %d: it should show one solver and its test", len(whole), len(parts))
	}
	doctest.CheckAgainstTree(t, "../..", whole, parts)
}

// TestSolverDocExampleBuildsFromTheDoc builds the page's solver file from
// its text as a new file — the tree's copy deleted, the page's added under a
// new name (go test -overlay) — and runs on it the test that enumerates the
// registry of solvers from scenario files on both engines, the solver's own
// tests and the loader's: a solver added in one new file, with no other
// file changed, runs from YAML on both engines with byte-identical outputs.
// The enumeration must have run the page's solver. It compiles and runs
// test binaries of three packages, so -short skips it.
func TestSolverDocExampleBuildsFromTheDoc(t *testing.T) {
	whole, _ := solverBlocks(t)
	if len(whole) != 1 {
		t.Fatalf("the page shows %d whole Fed-PLT files, want the solver's", len(whole))
	}
	out := doctest.RunOverlay(t, "../..", whole, "-v",
		"-run", "^(TestEverySolverFromYAMLIsTheSameOnBothEngines|TestHeavyBall.*|TestBadScenariosGiveOneClearLine|TestBundledScenariosAreValid)$",
		"maple/actors/fedplt", "maple/families/fedplt", "maple/scenarios")
	for _, want := range []string{"--- PASS: TestHeavyBallConvergesToTheLocalMinimizer", "--- PASS: TestEverySolverFromYAMLIsTheSameOnBothEngines/heavy-ball"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the overlay build did not show %q:\n%s", want, out)
		}
	}
}
