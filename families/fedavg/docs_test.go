package fedavg

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docPage is the page whose examples the tests build.
const docPage = "../../docs/writing-behaviours.md"

// A page's Go blocks are either a whole file ("The whole of [path](…):") or
// an excerpt of one ("from [path](…)" just before the block).
var (
	wholeFile = regexp.MustCompile("(?s)The whole of\\s+\\[([^\\]]+)\\]\\([^)]*\\):\\s*```go\n(.*?)```")
	excerpt   = regexp.MustCompile("(?s)from\\s+\\[([^\\]]+)\\]\\([^)]*\\)[^`]*?:\\s*```go\n(.*?)\n```")
)

// docBlocks returns the page's whole files and excerpts, by the path they
// name (relative to the module root).
func docBlocks(t *testing.T) (whole, parts map[string][]string) {
	t.Helper()
	text, err := os.ReadFile(docPage)
	if err != nil {
		t.Fatal(err)
	}
	whole, parts = map[string][]string{}, map[string][]string{}
	for _, m := range wholeFile.FindAllStringSubmatch(string(text), -1) {
		whole[m[1]] = append(whole[m[1]], m[2])
	}
	for _, m := range excerpt.FindAllStringSubmatch(string(text), -1) {
		parts[m[1]] = append(parts[m[1]], m[2])
	}
	return whole, parts
}

// The page's whole files are the files, and its excerpts are in them, to
// the byte: the page cannot drift from the code.
func TestDocExamplesAreTheCode(t *testing.T) {
	whole, parts := docBlocks(t)
	if len(whole) < 2 || len(parts) < 2 {
		t.Fatalf("the page shows %d whole files and excerpts of %d: it should show a server and a client with their tests", len(whole), len(parts))
	}
	for path, texts := range whole {
		file, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			if text != string(file) {
				t.Errorf("the page's %s is not the file", path)
			}
		}
	}
	for path, texts := range parts {
		file, err := os.ReadFile(filepath.Join("../..", path))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range texts {
			if !strings.Contains(string(file), text) {
				t.Errorf("the page's excerpt of %s is not in the file:\n%s", path, text)
			}
		}
	}
}

// TestDocExamplesBuildFromTheDoc builds the page's whole files from its
// text as new files — the tree's copies deleted, the page's added under new
// names (go test -overlay) — and runs on them the tests that enumerate the
// registries on both engines, in Go and from scenario files, with the
// behaviours' own tests and the loader's: a server and a client, each added
// in one new file with no other file changed, run from YAML on both engines
// with byte-identical outputs. It compiles and runs a test binary of three
// packages, so -short skips it.
func TestDocExamplesBuildFromTheDoc(t *testing.T) {
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
	whole, _ := docBlocks(t)
	dir := t.TempDir()
	replace := map[string]string{}
	for path, texts := range whole {
		real := filepath.Join(root, path)
		replace[real] = "" // deleted
		added := filepath.Join(filepath.Dir(real), "doc_"+filepath.Base(path))
		if _, err := os.Stat(added); err == nil {
			t.Fatalf("%s exists: the overlay would replace it", added)
		}
		tmp := filepath.Join(dir, "doc_"+filepath.Base(path))
		if err := os.WriteFile(tmp, []byte(texts[0]), 0o644); err != nil {
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
	cmd := exec.Command(goTool, "test", "-overlay", overlayFile, "-count=1",
		"-run", "^(TestEveryRegisteredBehaviourRunsAlikeOnBothEngines|TestActorOnlyServersAreDeclared|TestKrum.*|TestFedProx.*|TestEveryBehaviourFromYAMLIsTheSameOnBothEngines|TestBadScenariosGiveOneClearLine|TestBundledScenariosAreValid)$",
		"maple/actors/fedavg", "maple/families/fedavg", "maple/scenarios")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "MAPLE_DOC_OVERLAY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test with the page's examples as new files: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
