package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"maple/internal/fileio"
)

// Bounds on what the loader accepts, so that no input can make it read,
// expand or print without limit. A scenario is a few hundred bytes of
// settings; these leave room for three orders of magnitude more.
const (
	// MaxFileBytes is the largest scenario file read (`maple run /dev/zero`
	// stops here).
	MaxFileBytes = 1 << 20
	// maxNodes bounds the YAML values of a document once its aliases are
	// expanded: a few hundred bytes of nested anchors (an "alias bomb")
	// otherwise expand to billions.
	maxNodes = 100000
	// maxExpandedBytes bounds the scalar text of a document once its aliases
	// are expanded, for the same reason.
	maxExpandedBytes = 8 << 20
	// maxNameRunes and maxLabelRunes bound a scenario's name (it names the
	// run directory) and a curve's label (it is repeated on every row of
	// metrics.csv and in the legends).
	maxNameRunes  = 100
	maxLabelRunes = 200
)

// readScenarioFile reads the regular file at path, of at most MaxFileBytes:
// a named pipe, which would block the read, and a device, which may never
// end, are refused by name.
func readScenarioFile(path string) ([]byte, error) {
	data, err := fileio.ReadFile(path, MaxFileBytes)
	switch {
	case errors.Is(err, fileio.ErrTooLarge):
		return nil, &Error{File: path, Msg: fmt.Sprintf("scenario file larger than %d bytes: not a scenario", MaxFileBytes)}
	case err != nil:
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read scenario: %v", errUnwrapPath(err))}
	}
	return data, nil
}

// expansion measures the size of YAML trees with their aliases expanded,
// without expanding them: each node's size is computed once.
type expansion struct {
	sizes  map[*yaml.Node]treeSize
	active map[*yaml.Node]bool // nodes whose size is being computed
}

// treeSize is the number of values and scalar bytes of an expanded tree,
// saturating above the limits.
type treeSize struct{ nodes, bytes int }

func (s treeSize) over() bool { return s.nodes > maxNodes || s.bytes > maxExpandedBytes }

// errTooLarge and errSelfAlias describe the two ways a tree fails the check.
var (
	errTooLarge  = fmt.Errorf("scenario too large once its aliases are expanded (more than %d values or %d bytes)", maxNodes, maxExpandedBytes)
	errSelfAlias = fmt.Errorf("an alias refers to a value that contains it")
)

// checkExpansion reports whether the tree under n, aliases expanded, stays
// within maxNodes values and maxExpandedBytes bytes of text.
func checkExpansion(n *yaml.Node) error {
	e := &expansion{sizes: map[*yaml.Node]treeSize{}, active: map[*yaml.Node]bool{}}
	s, err := e.size(n)
	if err == nil && s.over() {
		err = errTooLarge
	}
	return err
}

func (e *expansion) size(n *yaml.Node) (treeSize, error) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if s, ok := e.sizes[n]; ok {
		return s, nil
	}
	if e.active[n] {
		return treeSize{}, errSelfAlias
	}
	e.active[n] = true
	s := treeSize{nodes: 1, bytes: len(n.Value)}
	for _, c := range n.Content {
		cs, err := e.size(c)
		if err != nil {
			return s, err
		}
		s.nodes += cs.nodes
		s.bytes += cs.bytes
		if s.over() {
			return s, errTooLarge // stop early: the sums could overflow
		}
	}
	delete(e.active, n)
	e.sizes[n] = s
	return s, nil
}

// checkText reports a problem with a one-line text that names things
// (a scenario name, a curve label): control characters (a newline would
// break every line-oriented output), invalid UTF-8, or more than maxRunes.
func checkText(s string, maxRunes int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("must be one line of text without control characters, got %q", s)
		}
	}
	if n := utf8.RuneCountInString(s); n > maxRunes {
		return fmt.Errorf("has %d characters, more than the %d allowed", n, maxRunes)
	}
	return nil
}

// coreTags are the tags of YAML's core schema, which a scenario may write
// explicitly (!!str 1, !!float 2). Any other tag — a language's type such as
// !!python/object:…, a local !tag, !!binary — asks for a kind of value that
// no scenario field has; yaml.v3 would decode the value and drop the tag, so
// the loader refuses it instead.
var coreTags = []string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq"}

// checkTags refuses explicit tags outside the core schema in the tree under
// n, whose dotted field path is path, naming the field they are on. Aliases
// are not followed: the values they refer to are checked where they are
// written.
func (l *loader) checkTags(n *yaml.Node, path string) error {
	if n.Style&yaml.TaggedStyle != 0 && !slices.Contains(coreTags, n.Tag) {
		return l.errAt(n, path, "the YAML tag %s is not supported: scenario values are plain YAML (strings, numbers, booleans, lists and mappings); remove the tag", n.Tag)
	}
	for i, c := range n.Content {
		child := path
		switch n.Kind {
		case yaml.MappingNode:
			child = joinPath(path, n.Content[i&^1].Value)
		case yaml.SequenceNode:
			child = fmt.Sprintf("%s[%d]", path, i)
		}
		if err := l.checkTags(c, child); err != nil {
			return err
		}
	}
	return nil
}
