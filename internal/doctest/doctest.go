// Package doctest keeps a documentation page's Go examples true to the
// code: it reads the page's code blocks, checks them against the files they
// name, and builds the page's files in place of the tree's with
// `go test -overlay`, so that a test of the example runs on the text of the
// page itself.
//
// A page's Go block is either a whole file, introduced by
// "The whole of [path](…):", or an excerpt of one, introduced by
// "from [path](…) …:"; paths are relative to the module root.
package doctest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	wholeFile = regexp.MustCompile("(?s)The whole of\\s+\\[([^\\]]+)\\]\\([^)]*\\):\\s*```go\n(.*?)```")
	excerpt   = regexp.MustCompile("(?s)from\\s+\\[([^\\]]+)\\]\\([^)]*\\)[^`]*?:\\s*```go\n(.*?)\n```")
)

// Blocks returns the whole files and the excerpts the page at path shows,
// by the path they name, keeping those whose path keep accepts (nil keeps
// every one).
func Blocks(t testing.TB, page string, keep func(path string) bool) (whole, parts map[string][]string) {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	gather := func(re *regexp.Regexp) map[string][]string {
		out := map[string][]string{}
		for _, m := range re.FindAllStringSubmatch(string(text), -1) {
			if keep == nil || keep(m[1]) {
				out[m[1]] = append(out[m[1]], m[2])
			}
		}
		return out
	}
	return gather(wholeFile), gather(excerpt)
}

// CheckAgainstTree reports, as test errors, a whole file of the page that is
// not the file of the tree under root to the byte, and an excerpt that is
// not in its file.
func CheckAgainstTree(t testing.TB, root string, whole, parts map[string][]string) {
	t.Helper()
	read := func(path string) string {
		file, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		return string(file)
	}
	for path, texts := range whole {
		file := read(path)
		for _, text := range texts {
			if text != file {
				t.Errorf("the page's %s is not the file", path)
			}
		}
	}
	for path, texts := range parts {
		file := read(path)
		for _, text := range texts {
			if !strings.Contains(file, text) {
				t.Errorf("the page's excerpt of %s is not in the file:\n%s", path, text)
			}
		}
	}
}

// overlayEnv marks the go test that RunOverlay starts, whose own doc tests
// skip themselves.
const overlayEnv = "MAPLE_DOC_OVERLAY"

// RunOverlay runs `go test -overlay … -count=1 args…` in the module at root
// with the page's whole files (the first text of each path) added as new
// files named doc_<name> beside the tree's, which are deleted: the example
// then builds from the page alone. It returns the output, and fails the
// test if go test fails. It skips under -short (it builds test binaries),
// inside another overlay run and without a go command.
func RunOverlay(t testing.TB, root string, whole map[string][]string, args ...string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("builds test binaries with go test -overlay")
	}
	if os.Getenv(overlayEnv) != "" {
		t.Skip("already inside the overlay build")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build with")
	}
	root, err = filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
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
	cmd := exec.Command(goTool, append([]string{"test", "-overlay", overlayFile, "-count=1"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), overlayEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test with the page's files as new files: %v\n%s", err, out)
	}
	return out
}
