package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// codeBlocks returns the fenced code blocks of a Markdown file, without
// their fences.
func codeBlocks(t *testing.T, path string) []string {
	t.Helper()
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(string(read(t, path)), "\n") {
		if strings.HasPrefix(line, "```") {
			if in {
				blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			}
			in, cur = !in, nil
			continue
		}
		if in {
			cur = append(cur, line)
		}
	}
	return blocks
}

// blockAfter returns the code block that follows the block whose first line
// starts with command.
func blockAfter(t *testing.T, blocks []string, command string) string {
	t.Helper()
	for i, b := range blocks[:len(blocks)-1] {
		if strings.HasPrefix(b, command) {
			return blocks[i+1]
		}
	}
	t.Fatalf("no code block starting with %q", command)
	return ""
}

var runDirLine = regexp.MustCompile(`(?m)^run directory: .*$`)

// The sample outputs of the README and the quick start are what the commands
// print today: the default run (up to the run directory's name, which holds
// the time) and the filtered trace of the tiny run.
func TestDocsShowWhatTheCommandsPrint(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "quickstart")
	code, got, errOut := maple(t, "run", "--out", dir)
	if code != 0 {
		t.Fatalf("maple run: exit %d\n%s", code, errOut)
	}
	got = runDirLine.ReplaceAllString(got, "run directory: DIR")
	readme := codeBlocks(t, "README.md")
	quick := codeBlocks(t, "docs/quickstart.md")
	samples := map[string]string{
		"README.md":          blockAfter(t, readme, "go run . run "),
		"docs/quickstart.md": blockAfter(t, quick, "./maple run\n"),
	}
	for doc, want := range samples {
		if want = runDirLine.ReplaceAllString(want, "run directory: DIR"); want != got {
			t.Errorf("%s shows\n%s\nmaple run prints\n%s", doc, want, got)
		}
	}

	// The tiny traced run: the commands as the quick start writes them,
	// with its run directory in the test's.
	const commands = "./maple run --trace"
	var script string
	for _, b := range quick {
		if strings.HasPrefix(b, commands) {
			script = b
		}
	}
	tiny := filepath.Join(t.TempDir(), "tiny")
	var out string
	for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
		args := strings.Fields(strings.ReplaceAll(line, "runs/tiny", tiny))[1:]
		var errOut string
		if code, out, errOut = maple(t, args...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", line, code, errOut)
		}
	}
	if want := blockAfter(t, quick, commands); out != want {
		t.Errorf("docs/quickstart.md shows\n%s\nthe commands print\n%s", want, out)
	}
}
