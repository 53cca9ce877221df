package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// markdownLink matches an inline link or image, [text](target) or
// ![alt](target), capturing the target.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve checks every relative link of the README and of
// docs/*.md: the file or directory it names exists, and a #fragment names a
// heading of the Markdown file it points into, as GitHub renders the
// heading's anchor (headingAnchors). A renamed heading or a moved file
// otherwise leaves links that lead nowhere.
func TestDocLinksResolve(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files := append([]string{"README.md"}, docs...)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a, err := headingAnchors(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = a
		return a
	}
	links := 0
	for _, file := range files {
		for _, l := range markdownLinks(t, file) {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, fragment, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", file, l.line, target)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(resolved, ".md") && !anchorsOf(resolved)[fragment] {
				t.Errorf("%s:%d: link to %s: %s has no heading with the anchor %q", file, l.line, target, resolved, fragment)
			}
		}
	}
	if links < 100 {
		t.Errorf("found %d relative links in the docs; the link pattern no longer matches them", links)
	}
}

// TestHeadingAnchorsFollowGitHub pins the anchor rule on examples of what
// GitHub keeps and drops: punctuation and an em dash dropped (two spaces
// around it give two hyphens), hyphens, underscores and non-ASCII letters
// and digits kept.
func TestHeadingAnchorsFollowGitHub(t *testing.T) {
	for heading, want := range map[string]string{
		"Two commands": "two-commands",
		"Dense kernels against PyTorch (issue 32)":                                "dense-kernels-against-pytorch-issue-32",
		"`krum.yaml` — Krum, multi-Krum and Bulyan against sign-flip adversaries": "krumyaml--krum-multi-krum-and-bulyan-against-sign-flip-adversaries",
		"Graph federated learning (seed 002, thesis ch. 3)":                       "graph-federated-learning-seed-002-thesis-ch-3",
		"Secure aggregation at 1 000 clients":                                     "secure-aggregation-at-1-000-clients",
		"Privacy accounting: ε, δ and the neighbouring relation":                  "privacy-accounting-ε-δ-and-the-neighbouring-relation",
		"snake_case fields": "snake_case-fields",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// docLink is a link target and the line it is on.
type docLink struct {
	target string
	line   int
}

// codeSpan matches an inline code span on one line, its text between one
// or two backquotes on each side: what is inside is code, never a link.
var codeSpan = regexp.MustCompile("``[^`]*``|`[^`]*`")

// markdownLinks returns the links of a Markdown file outside fenced code
// blocks and code spans.
func markdownLinks(t *testing.T, path string) []docLink {
	t.Helper()
	lines, err := proseLines(path)
	if err != nil {
		t.Fatal(err)
	}
	var links []docLink
	for i, line := range lines {
		for _, m := range markdownLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			links = append(links, docLink{target: m[1], line: i + 1})
		}
	}
	return links
}

// headingAnchors returns the anchors of the headings of a Markdown file
// (ATX headings, outside fenced code blocks), the second and later
// headings with the same anchor numbered -1, -2, … as GitHub numbers them.
func headingAnchors(path string) (map[string]bool, error) {
	lines, err := proseLines(path)
	if err != nil {
		return nil, err
	}
	anchors, seen := map[string]bool{}, map[string]int{}
	for _, line := range lines {
		text, ok := strings.CutPrefix(line, "#")
		if text = strings.TrimLeft(text, "#"); !ok || !strings.HasPrefix(text, " ") {
			continue
		}
		base := anchor(text)
		a := base
		if n := seen[base]; n > 0 {
			a = fmt.Sprintf("%s-%d", base, n)
		}
		seen[base]++
		anchors[a] = true
	}
	return anchors, nil
}

// proseLines returns the lines of a Markdown file, those of fenced code
// blocks (and their fences) emptied, so that line i+1 of the file is
// lines[i].
func proseLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	fenced := false
	for i, line := range lines {
		fence := strings.HasPrefix(strings.TrimSpace(line), "```")
		if fence {
			fenced = !fenced
		}
		if fence || fenced {
			lines[i] = ""
		}
	}
	return lines, nil
}

// anchor is GitHub's anchor of a heading: lower case, every character but
// letters, digits, marks, '_', '-' and spaces dropped, spaces turned into
// hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
