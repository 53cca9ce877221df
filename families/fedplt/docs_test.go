package fedplt

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPage is the page whose Fed-PLT solver example the tests build.
const docPage = "../../docs/writing-behaviours.md"

// A page's Go blocks are either a whole file ("The whole of [path](…):") or
// an excerpt of one ("from [path](…)" just before the block); the Fed-PLT
// ones name files under a fedplt directory.
var (
	wholeFile = regexp.MustCompile("(?s)The whole of\\s+\\[([^\\]]+)\\]\\([^)]*\\):\\s*```go\n(.*?)```")
	excerpt   = regexp.MustCompile("(?s)from\\s+\\[([^\\]]+)\\]\\([^)]*\\)[^`]*?:\\s*```go\n(.*?)\n```")
)

// solverBlocks returns the page's whole Fed-PLT files and excerpts, by the
// path they name (relative to the module root).
func solverBlocks(t *testing.T) (whole, parts map[string]string) {
	t.Helper()
	text, err := os.ReadFile(docPage)
	if err != nil {
		t.Fatal(err)
	}
	whole, parts = map[string]string{}, map[string]string{}
	for _, m := range wholeFile.FindAllStringSubmatch(string(text), -1) {
		if strings.Contains(m[1], "fedplt/") {
			whole[m[1]] = m[2]
		}
	}
	for _, m := range excerpt.FindAllStringSubmatch(string(text), -1) {
		if strings.Contains(m[1], "fedplt/") {
			parts[m[1]] = m[2]
		}
	}
	return whole, parts
}

// The page's Fed-PLT solver file is the file, and its test excerpt is in
// the test file, to the byte: the page cannot drift from the code.
func TestSolverDocExampleIsTheCode(t *testing.T) {
	whole, parts := solverBlocks(t)
	if len(whole) != 1 || len(parts) != 1 {
		t.Fatalf("the page shows %d whole Fed-PLT files and excerpts of %d: it should show one solver and its test", len(whole), len(parts))
	}
	for path, text := range whole {
		file, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		if text != string(file) {
			t.Errorf("the page's %s is not the file", path)
		}
	}
	for path, text := range parts {
		file, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(file), text) {
			t.Errorf("the page's excerpt of %s is not in the file:\n%s", path, text)
		}
	}
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
	if testing.Short() {
		t.Skip("builds test binaries with go test -overlay")
	}
	if os.Getenv("MAPLE_DOC_OVERLAY") != "" {
		t.Skip("already inside the overlay build")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := solverBlocks(t)
	if len(whole) != 1 {
		t.Fatalf("the page shows %d whole Fed-PLT files, want the solver's", len(whole))
	}
	dir := t.TempDir()
	replace := map[string]string{}
	for path, text := range whole {
		real := filepath.Join(root, path)
		replace[real] = "" // deleted
		added := filepath.Join(filepath.Dir(real), "doc_"+filepath.Base(path))
		if _, err := os.Stat(added); err == nil {
			t.Fatalf("%s exists: the overlay would replace it", added)
		}
		tmp := filepath.Join(dir, "doc_"+filepath.Base(path))
		if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		replace[added] = tmp
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "test", "-overlay", overlayFile, "-count=1", "-v",
		"-run", "^(TestEverySolverFromYAMLIsTheSameOnBothEngines|TestHeavyBall.*|TestBadScenariosGiveOneClearLine|TestBundledScenariosAreValid)$",
		"maple/actors/fedplt", "maple/families/fedplt", "maple/scenarios")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MAPLE_DOC_OVERLAY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test with the page's solver as a new file: %v\n%s", err, out)
	}
	for _, want := range []string{"--- PASS: TestHeavyBallConvergesToTheLocalMinimizer", "--- PASS: TestEverySolverFromYAMLIsTheSameOnBothEngines/heavy-ball"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the overlay build did not show %q:\n%s", want, out)
		}
	}
}
