package scenarios

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var (
	scenarioType    = reflect.TypeOf(Scenario{})
	unmarshalerType = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
)

// walker checks a YAML tree against the scenario schema before decoding, so
// that every unknown key, wrong type and missing value is reported with its
// line and dotted field path, and records where each field came from.
type walker struct {
	loader  *loader
	pos     map[string]position
	visited int
	// defaults are the scenario's defaults, which give a behaviour mapping
	// without a kind the kind its field has by default.
	defaults *Scenario
}

func (w *walker) errAt(n *yaml.Node, field, format string, args ...any) *Error {
	return w.loader.errAt(n, field, format, args...)
}

// check verifies that n can be decoded into a value of type t.
func (w *walker) check(n *yaml.Node, t reflect.Type, path string) error {
	if w.visited++; w.visited > maxNodes {
		return &Error{File: w.loader.file, Msg: fmt.Sprintf("scenario too large (more than %d values once aliases are expanded)", maxNodes)}
	}
	n = resolveAlias(n)
	if path != "" {
		w.pos[path] = position{line: n.Line, origin: w.loader.origins[n]}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == algorithmType {
		return w.checkAlgorithm(n, path)
	}
	if f, ok := inlineBehaviour(t); ok {
		return w.checkWithBehaviour(n, t, f, path)
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || t.Kind() != reflect.Struct && t.Kind() != reflect.Slice {
		return w.leaf(n, t, path)
	}
	if t.Kind() == reflect.Slice {
		if n.Kind != yaml.SequenceNode {
			return w.errAt(n, path, "expected %s", describe(t))
		}
		for i, c := range n.Content {
			if err := w.check(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return w.errAt(n, path, "expected a mapping of fields (%s)", strings.Join(fieldNames(t), ", "))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := joinPath(path, k.Value)
		if seen[k.Value] {
			return w.errAt(k, field, "appears twice")
		}
		seen[k.Value] = true
		f, ok := fieldByTag(t, k.Value)
		if !ok {
			return w.errAt(k, field, "unknown field (expected one of: %s)", strings.Join(fieldNames(t), ", "))
		}
		if f.Type == behaviourType {
			rv := resolveAlias(v)
			w.pos[field] = position{line: rv.Line, origin: w.loader.origins[rv]}
			if err := w.checkBehaviour(v, f.Tag.Get("slot"), field); err != nil {
				return err
			}
			continue
		}
		if err := w.check(v, f.Type, field); err != nil {
			return err
		}
	}
	return nil
}

// leaf checks a scalar, range or other self-decoding value.
func (w *walker) leaf(n *yaml.Node, t reflect.Type, path string) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return w.errAt(n, path, "missing value (expected %s)", describe(t))
	}
	if err := decodeLeaf(n, t); err != nil {
		return w.errAt(n, path, "expected %s, got %s", describe(t), gotText(n, t))
	}
	return nil
}

// gotText describes a value that does not decode into type t: its text,
// quoted, and said to be a string where a string is not what was expected.
// A quoted number or boolean ('1', "true"), or one tagged !!str, would
// decode without its quotes or tag, and the text says so.
func gotText(n *yaml.Node, t reflect.Type) string {
	got := nodeText(n)
	if len(got) > 40 {
		got = got[:40] + "…"
	}
	got = strconv.Quote(got)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" || t.Kind() == reflect.String {
		return got
	}
	plain := *n
	plain.Style, plain.Tag = 0, ""
	switch {
	case decodeLeaf(&plain, t) != nil:
		return "the string " + got
	case n.Style&yaml.TaggedStyle != 0:
		return "the string " + got + " (tagged !!str; remove the tag)"
	}
	return "the string " + got + " (quoted; remove the quotes)"
}

// decodeLeaf decodes n into a fresh value of type t, refusing non-integers for
// integer fields (yaml.v3 would silently truncate 2.5 to 2).
func decodeLeaf(n *yaml.Node, t reflect.Type) error {
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		if n.ShortTag() != "!!int" {
			return fmt.Errorf("not an integer")
		}
	}
	return n.Decode(reflect.New(t).Interface())
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// fieldByTag returns the struct field whose yaml tag name is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tagName(f) == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// fieldNames lists the yaml names of t's fields in declaration order.
func fieldNames(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		if n := tagName(t.Field(i)); n != "" && n != "-" {
			names = append(names, n)
		}
	}
	return names
}

// describe says in words what a value of type t looks like in YAML.
func describe(t reflect.Type) string {
	switch t {
	case reflect.TypeOf(IntRange{}):
		return "an integer or a [min, max] pair of integers"
	case reflect.TypeOf(FloatRange{}):
		return "a number or a [min, max] pair of numbers"
	case reflect.TypeOf(Sweep{}):
		return "a mapping from field paths to lists of values"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(describe(t.Elem()), "an "), "a ") + "s"
	case reflect.Map:
		return "a mapping"
	}
	return t.String()
}
