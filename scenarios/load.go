package scenarios

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Plan is a loaded scenario: the resolved base scenario and the curves it
// expands into.
type Plan struct {
	// File names the scenario in messages; Dir is the directory relative
	// file paths inside the scenario are resolved against.
	File, Dir string
	// Base is the resolved scenario with the command-line overrides applied,
	// before any curve or sweep setting. It is what run directories record.
	Base *Scenario
	// Overrides are the command-line overrides (--set), in order. They are
	// part of Base and of every curve, and every curve's label ends with
	// those that change its numbers.
	Overrides []Setting
	// Curves are the resolved scenarios of the curves, in order. A scenario
	// without curves or sweep has one curve, labelled with its name.
	Curves []*CurveSpec
	// Source is the scenario's text and Sets the overrides as given: Parse
	// of the same Source, File, Dir and Sets gives the same plan (a cluster
	// worker rebuilds its coordinator's plan so).
	Source []byte
	Sets   []string
}

// CurveSpec is one curve of a plan.
type CurveSpec struct {
	// Label names the curve in outputs.
	Label string
	// Settings are the field assignments that distinguish the curve from
	// the base scenario, in the order they were applied.
	Settings []Setting
	// Scenario is the curve's resolved scenario.
	Scenario *Scenario

	file    string
	pos     map[string]position
	omitted []string // fields its resolved copy leaves out (Validator.Unused, Derived)
}

// Setting is one field assignment of a curve.
type Setting struct {
	// Field is the dotted path set and Value the value, in YAML flow style.
	Field string `json:"field"`
	Value string `json:"value"`
}

type position struct {
	line   int
	origin string
}

// Errorf returns an Error about field of the curve's scenario, located at the
// line (or override) the field came from, or at its closest enclosing field.
func (c *CurveSpec) Errorf(field, format string, args ...any) *Error {
	e := &Error{File: c.file, Field: field, Msg: fmt.Sprintf(format, args...)}
	for path := field; path != ""; path = parentPath(path) {
		if p, ok := c.pos[path]; ok {
			e.Line, e.Origin = p.line, p.origin
			break
		}
	}
	return e
}

func parentPath(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

// LoadFile reads the scenario at path and applies the overrides, each of the
// form field.path=value with a YAML value (as given to --set).
// The file may hold at most MaxFileBytes.
func LoadFile(path string, overrides []string) (*Plan, error) {
	data, err := readScenarioFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, filepath.Dir(path), overrides)
}

func errUnwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Parse loads a scenario from data. name labels it in messages and dir is the
// directory its relative file paths are resolved against.
func Parse(data []byte, name, dir string, overrides []string) (*Plan, error) {
	l := &loader{file: name, origins: map[*yaml.Node]string{}}
	root, err := l.parseDocument(data)
	if err != nil {
		return nil, err
	}
	var applied []Setting
	for _, o := range overrides {
		s, err := l.applyOverride(root, o)
		if err != nil {
			return nil, err
		}
		applied = append(applied, s)
	}
	curves, err := l.takeCurves(root)
	if err != nil {
		return nil, err
	}
	sweep, err := l.takeSweep(root)
	if err != nil {
		return nil, err
	}
	if err := l.checkOverrides(applied, curves, sweep); err != nil {
		return nil, err
	}
	if n := curveCount(curves, sweep); n > maxCurves {
		return nil, &Error{File: name, Field: "sweep", Msg: fmt.Sprintf("curves × sweep expand to %d curves, more than the %d a plan may have", n, maxCurves)}
	}
	base, err := l.resolve(root, nil, name)
	if err != nil {
		return nil, err
	}
	plan := &Plan{File: name, Dir: dir, Base: base.Scenario, Overrides: applied, Source: data, Sets: overrides}
	for _, v := range expand(curves, sweep) {
		tree := l.clone(root)
		var settings []Setting
		for _, a := range v.assignments {
			if err := l.set(tree, a.field, l.clone(a.value), a.origin); err != nil {
				return nil, err
			}
			settings = append(settings, Setting{Field: a.field, Value: nodeText(a.value)})
		}
		c, err := l.resolve(tree, settings, v.label)
		if err != nil {
			return nil, err
		}
		plan.Curves = append(plan.Curves, c)
	}
	if len(plan.Curves) == 0 {
		base.Label = base.Scenario.Name
		plan.Curves = []*CurveSpec{base}
	}
	for _, c := range curves {
		plan.Base.Curves = append(plan.Base.Curves, c.curve)
	}
	plan.Base.Sweep = sweep
	if err := checkLabels(plan); err != nil {
		return nil, err
	}
	if err := checkComparisons(plan); err != nil {
		return nil, err
	}
	if err := checkGroupBy(plan); err != nil {
		return nil, err
	}
	suffix := overrideLabel(applied)
	for _, c := range plan.Curves {
		c.Label = joinLabel(c.Label, suffix)
	}
	return plan, nil
}

type loader struct {
	file    string
	origins map[*yaml.Node]string // nodes that came from --set, by origin
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseDocument parses data, which must hold one YAML document, into the
// root mapping node, refusing documents whose aliases expand beyond the
// loader's bounds.
func (l *loader) parseDocument(data []byte) (*yaml.Node, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: l.file, Msg: "empty scenario: expected a YAML mapping with at least name, data and algorithm"}
	}
	if len(data) > MaxFileBytes {
		return nil, &Error{File: l.file, Msg: fmt.Sprintf("scenario larger than %d bytes: not a scenario", MaxFileBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && err != io.EOF {
		return nil, l.yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, &Error{File: l.file, Msg: "empty scenario: expected a YAML mapping"}
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, &Error{File: l.file, Line: next.Line, Msg: "a second YAML document starts here: a scenario file holds one document (remove the ---)"}
	case err != io.EOF:
		return nil, l.yamlError(err)
	}
	root := doc.Content[0]
	if err := checkExpansion(root); err != nil {
		return nil, &Error{File: l.file, Msg: err.Error()}
	}
	if err := l.checkTags(root, ""); err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: l.file, Line: root.Line, Msg: "expected a mapping of scenario fields at the top level"}
	}
	return root, nil
}

// yamlError turns a yaml.v3 parse error into a scenario error at its line.
func (l *loader) yamlError(err error) *Error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: l.file, Line: line, Msg: "malformed YAML: " + m[2]}
	}
	return &Error{File: l.file, Msg: "malformed YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// applyOverride applies one --set field.path=value and returns it.
func (l *loader) applyOverride(root *yaml.Node, o string) (Setting, error) {
	origin := overrideOrigin(o)
	field, value, ok := strings.Cut(o, "=")
	if !ok || field == "" {
		return Setting{}, &Error{Origin: origin, Msg: "expected field.path=value"}
	}
	if len(value) > MaxFileBytes {
		return Setting{}, &Error{Origin: origin, Field: field, Msg: fmt.Sprintf("value larger than %d bytes", MaxFileBytes)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(value), &doc); err != nil || len(doc.Content) == 0 {
		return Setting{}, &Error{Origin: origin, Field: field, Msg: fmt.Sprintf("cannot parse value %q as YAML", value)}
	}
	if err := checkExpansion(doc.Content[0]); err != nil {
		return Setting{}, &Error{Origin: origin, Field: field, Msg: err.Error()}
	}
	markOrigin(l.origins, doc.Content[0], origin)
	if err := l.checkTags(doc.Content[0], field); err != nil {
		return Setting{}, err
	}
	return Setting{Field: field, Value: nodeText(doc.Content[0])}, l.set(root, field, doc.Content[0], origin)
}

// checkOverrides refuses an override of a field that a curve or the sweep
// of the scenario file also sets to another value (or a field inside it, or
// a section around it): the curve's or the sweep's value would silently
// replace the override. Curves or a sweep given by --set themselves refine
// the other overrides on purpose, and are not checked.
func (l *loader) checkOverrides(overrides []Setting, curves []parsedCurve, sweep Sweep) error {
	curvesSet := slices.ContainsFunc(overrides, func(o Setting) bool { return overlaps("curves", o.Field) })
	sweepSet := slices.ContainsFunc(overrides, func(o Setting) bool { return overlaps("sweep", o.Field) })
	for _, o := range overrides {
		if isPlanField(o.Field) {
			continue
		}
		conflict := func(field, by string, value *yaml.Node) error {
			if !overlaps(o.Field, field) || field == o.Field && nodeText(value) == o.Value {
				return nil
			}
			return &Error{Origin: overrideOrigin(o.Field + "=" + o.Value), Field: o.Field, Msg: fmt.Sprintf(
				"%s sets %s too (%s:%d) and would replace the override in its curves: change the scenario, or replace its curves or sweep with --set curves=… or --set sweep=…",
				by, field, l.file, value.Line)}
		}
		for _, c := range curves {
			for _, a := range c.assignments {
				if curvesSet {
					break
				}
				if err := conflict(a.field, fmt.Sprintf("curve %q", c.curve.Label), a.value); err != nil {
					return err
				}
			}
		}
		for _, axis := range sweep {
			for _, v := range axis.Values {
				if sweepSet {
					break
				}
				if err := conflict(axis.Field, "the sweep", v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// isPlanField reports whether field is curves or sweep, or inside them.
func isPlanField(field string) bool {
	for _, p := range []string{"curves", "sweep"} {
		if field == p || strings.HasPrefix(field, p+".") || strings.HasPrefix(field, p+"[") {
			return true
		}
	}
	return false
}

// overlaps reports whether setting one dotted path changes the other: they
// are equal or one is a section containing the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(b, a+".") || strings.HasPrefix(a, b+".")
}

// unlabelled are the fields whose overrides change how results are shown or
// how long and how often a curve is measured, not what it is: they stay
// out of curve labels (summary.json and scenario.yaml record them).
var unlabelled = []string{"name", "description", "trace", "output", "seed", "runs", "iterations"}

// maxLabelValue bounds the characters of an override's value in a label;
// longer values (whole sections, lists) are cut with an ellipsis.
const maxLabelValue = 24

// overrideLabel returns what the overrides add to every curve label: the
// last part of each overridden field (the whole path when two share it) and
// its value, as a sweep labels its curves (step_size=0.05), except the
// unlabelled fields. It is added after
// the labels are checked, so that it counts against no limit.
func overrideLabel(overrides []Setting) string {
	var parts []string
	for _, o := range overrides {
		if isPlanField(o.Field) || slices.ContainsFunc(unlabelled, func(p string) bool { return overlaps(p, o.Field) }) {
			continue
		}
		v := []rune(o.Value)
		if len(v) > maxLabelValue {
			v = append(v[:maxLabelValue-1], '…')
		}
		name := lastPart(o.Field)
		if slices.ContainsFunc(overrides, func(p Setting) bool { return p.Field != o.Field && lastPart(p.Field) == name }) {
			name = o.Field // data.kind and loss.kind, say
		}
		parts = append(parts, name+"="+string(v))
	}
	return strings.Join(parts, ", ")
}

// joinLabel appends the part suffix to a curve label.
func joinLabel(label, suffix string) string {
	switch {
	case suffix == "":
		return label
	case label == "":
		return suffix
	}
	return label + ", " + suffix
}

// overrideOrigin names an override in messages: "--set " and the override,
// shortened to 80 characters and quoted if it spans lines, so that every
// error stays one line.
func overrideOrigin(o string) string {
	const max = 80
	if len(o) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(o[cut]) {
			cut--
		}
		o = o[:cut] + "…"
	}
	if strings.ContainsFunc(o, unicode.IsControl) {
		o = strconv.Quote(o)
	}
	return "--set " + o
}

// set stores value at the dotted path under root, creating mappings on the
// way, and remembers where the value came from: the override origin, or
// else the value's line in the scenario file (a curve's set, a sweep), which
// the keys and mappings it creates take too, so that every error about the
// path names that line.
func (l *loader) set(root *yaml.Node, field string, value *yaml.Node, origin string) error {
	fail := func(field, msg string) error {
		e := &Error{Origin: origin, Field: field, Msg: msg}
		if origin == "" {
			e.File, e.Line = l.file, value.Line
		}
		return e
	}
	parts := strings.Split(field, ".")
	n := root
	for i, part := range parts {
		if part == "" {
			return fail(field, "empty component in field path")
		}
		if n.Kind != yaml.MappingNode {
			return fail(strings.Join(parts[:i], "."), "is not a mapping, cannot set a field inside it")
		}
		idx := mappingIndex(n, part)
		if i == len(parts)-1 {
			markOrigin(l.origins, value, origin)
			if idx >= 0 {
				n.Content[idx+1] = value
			} else {
				n.Content = append(n.Content, l.keyNode(part, origin, value.Line), value)
			}
			return nil
		}
		if idx < 0 {
			child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: value.Line}
			markOrigin(l.origins, child, origin)
			n.Content = append(n.Content, l.keyNode(part, origin, value.Line), child)
			n = child
		} else {
			n = n.Content[idx+1]
			if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
				// A behaviour given by name (server: median) whose
				// parameter is set: it becomes {kind: median}.
				kind := *n
				*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: kind.Line, Column: kind.Column,
					Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "kind", Line: kind.Line}, &kind}}
			}
		}
	}
	return nil
}

// keyNode returns a new mapping key at line, remembered as coming from
// origin.
func (l *loader) keyNode(key, origin string, line int) *yaml.Node {
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line}
	markOrigin(l.origins, k, origin)
	return k
}

func markOrigin(origins map[*yaml.Node]string, n *yaml.Node, origin string) {
	if origin == "" {
		return
	}
	origins[n] = origin
	for _, c := range n.Content {
		markOrigin(origins, c, origin)
	}
}

// mappingIndex returns the index of key in mapping n's Content, or -1.
func mappingIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// take removes key from the mapping and returns its value node, or nil.
func take(root *yaml.Node, key string) (k, v *yaml.Node) {
	i := mappingIndex(root, key)
	if i < 0 {
		return nil, nil
	}
	k, v = root.Content[i], root.Content[i+1]
	root.Content = append(root.Content[:i:i], root.Content[i+2:]...)
	return k, v
}

// parsedCurve is an entry of curves: with its assignments still as nodes.
type parsedCurve struct {
	curve       Curve
	assignments []assignment
}

type assignment struct {
	field  string
	value  *yaml.Node
	origin string
}

func (l *loader) errAt(n *yaml.Node, field, format string, args ...any) *Error {
	return &Error{File: l.file, Line: n.Line, Origin: l.origins[n], Field: field, Msg: fmt.Sprintf(format, args...)}
}

// takeCurves removes and parses the curves section.
func (l *loader) takeCurves(root *yaml.Node) ([]parsedCurve, error) {
	_, n := take(root, "curves")
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, l.errAt(n, "curves", "expected a list of {label, set} entries")
	}
	var out []parsedCurve
	for i, item := range n.Content {
		path := fmt.Sprintf("curves[%d]", i)
		if item.Kind != yaml.MappingNode {
			return nil, l.errAt(item, path, "expected a mapping with label and set")
		}
		var pc parsedCurve
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			switch k.Value {
			case "label":
				if v.Kind != yaml.ScalarNode || v.Value == "" {
					return nil, l.errAt(v, path+".label", "expected a non-empty string")
				}
				pc.curve.Label = v.Value
			case "set":
				if v.Kind != yaml.MappingNode {
					return nil, l.errAt(v, path+".set", "expected a mapping from field paths to values")
				}
				pc.curve.Set = map[string]any{}
				for m := 0; m+1 < len(v.Content); m += 2 {
					fk, fv := v.Content[m], v.Content[m+1]
					pc.assignments = append(pc.assignments, assignment{field: fk.Value, value: fv, origin: l.origins[fv]})
					var decoded any
					_ = fv.Decode(&decoded)
					pc.curve.Set[fk.Value] = decoded
				}
			default:
				return nil, l.errAt(k, path+"."+k.Value, "unknown field (expected label or set)")
			}
		}
		if pc.curve.Label == "" {
			return nil, l.errAt(item, path+".label", "missing: every curve needs a label")
		}
		out = append(out, pc)
	}
	return out, nil
}

// takeSweep removes and parses the sweep section.
func (l *loader) takeSweep(root *yaml.Node) (Sweep, error) {
	_, n := take(root, "sweep")
	if n == nil {
		return nil, nil
	}
	var s Sweep
	if err := s.UnmarshalYAML(n); err != nil {
		return nil, l.errAt(n, "sweep", "%v", err)
	}
	return s, nil
}

// maxCurves bounds the curves one plan may expand into: beyond it a figure is
// unreadable, and a typo in a sweep should not exhaust memory.
const maxCurves = 1000

// curveCount returns the number of curves curves × sweep expands into,
// saturating at maxCurves+1.
func curveCount(curves []parsedCurve, sweep Sweep) int {
	n := max(1, len(curves))
	for _, a := range sweep {
		n *= len(a.Values)
		if n > maxCurves {
			return maxCurves + 1
		}
	}
	return n
}

// variant is one curve of the expansion: its label and assignments.
type variant struct {
	label       string
	assignments []assignment
}

// expand forms the curves × sweep product.
func expand(curves []parsedCurve, sweep Sweep) []variant {
	vs := []variant{{}}
	if len(curves) > 0 {
		vs = nil
		for _, c := range curves {
			vs = append(vs, variant{label: c.curve.Label, assignments: c.assignments})
		}
	}
	for _, axis := range sweep {
		var next []variant
		for _, v := range vs {
			for _, val := range axis.Values {
				part := lastPart(axis.Field) + "=" + nodeText(val)
				label := part
				if v.label != "" {
					label = v.label + ", " + part
				}
				as := append(append([]assignment(nil), v.assignments...), assignment{field: axis.Field, value: val})
				next = append(next, variant{label: label, assignments: as})
			}
		}
		vs = next
	}
	if len(curves) == 0 && len(sweep) == 0 {
		return nil
	}
	return vs
}

func lastPart(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// nodeText renders a value node compactly, as it would be written in flow
// style (0.1, atc, [1, 5]).
func nodeText(n *yaml.Node) string {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	parts := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		parts = append(parts, nodeText(c))
	}
	if n.Kind == yaml.MappingNode {
		kv := make([]string, 0, len(parts)/2)
		for i := 0; i+1 < len(parts); i += 2 {
			kv = append(kv, parts[i]+": "+parts[i+1])
		}
		return "{" + strings.Join(kv, ", ") + "}"
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// clone deep-copies a tree, carrying over where each node came from, so that
// errors in a curve still name the --set override a value came from.
func (l *loader) clone(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = l.clone(k)
	}
	if origin, ok := l.origins[n]; ok {
		l.origins[&c] = origin
	}
	return &c
}

// resolve checks a scenario tree, decodes it over the defaults of its kinds
// and validates the result.
func (l *loader) resolve(root *yaml.Node, settings []Setting, label string) (*CurveSpec, error) {
	c := &CurveSpec{Label: label, Settings: settings, file: l.file, pos: map[string]position{}}
	sc := defaults(scalarAt(root, "algorithm", "kind"), scalarAt(root, "data", "kind"))
	w := walker{loader: l, pos: c.pos, defaults: sc}
	if err := w.check(root, scenarioType, ""); err != nil {
		return nil, err
	}
	if err := root.Decode(sc); err != nil {
		return nil, &Error{File: l.file, Msg: err.Error()}
	}
	if sc.Name == "" {
		if _, set := c.pos["name"]; set {
			return nil, c.Errorf("name", "must not be empty (leave the field out to name the scenario after its file)")
		}
		sc.Name = strings.TrimSuffix(filepath.Base(l.file), filepath.Ext(l.file))
	}
	c.Scenario = sc
	if err := validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

// scalarAt returns the scalar at the given mapping path, or "".
func scalarAt(root *yaml.Node, path ...string) string {
	n := root
	for _, p := range path {
		if n.Kind != yaml.MappingNode {
			return ""
		}
		i := mappingIndex(n, p)
		if i < 0 {
			return ""
		}
		n = n.Content[i+1]
	}
	if n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// checkComparisons checks that output.baseline names a listed curve and that
// output.claims are about curves of the plan.
func checkComparisons(p *Plan) error {
	out := p.Base.Output
	first := p.Curves[0]
	if out.Baseline != "" && !slices.ContainsFunc(p.Base.Curves, func(c Curve) bool { return c.Label == out.Baseline }) {
		return first.Errorf("output.baseline", "names no curve listed under curves: %q", out.Baseline)
	}
	labels := map[string]bool{}
	for _, c := range p.Curves {
		labels[c.Label] = true
	}
	for _, label := range slices.Sorted(maps.Keys(out.Claims)) {
		if !labels[label] {
			return first.Errorf("output.claims", "names no curve of the plan: %q", label)
		}
	}
	return nil
}

// checkGroupBy checks that output.group_by names a field that curves or the
// sweep set: the figures are split by the value each curve sets it to, so a
// field that no curve sets (misspelt, or left over after the curves were
// replaced) would split nothing and be silently ignored.
func checkGroupBy(p *Plan) error {
	field := p.Base.Output.GroupBy
	if field == "" {
		return nil
	}
	var set []string
	for _, c := range p.Curves {
		for _, s := range c.Settings {
			if !slices.Contains(set, s.Field) {
				set = append(set, s.Field)
			}
		}
	}
	switch {
	case slices.Contains(set, field):
		return nil
	case len(set) == 0:
		return p.Curves[0].Errorf("output.group_by", "names %s, but the plan has no curves or sweep setting a field: group_by draws one figure per value of a field that they set", field)
	}
	return p.Curves[0].Errorf("output.group_by", "names %s, which no curve or sweep sets (they set %s)", field, strings.Join(set, ", "))
}

// checkLabels rejects two curves with the same label, which would merge in
// the outputs, and labels that are not one short line of text.
func checkLabels(p *Plan) error {
	seen := map[string]bool{}
	for _, c := range p.Curves {
		if err := checkText(c.Label, maxLabelRunes); err != nil {
			return &Error{File: p.File, Field: "curves", Msg: fmt.Sprintf("curve label %v", err)}
		}
		if seen[c.Label] {
			return &Error{File: p.File, Field: "curves", Msg: fmt.Sprintf("two curves are labelled %q; labels must be distinct", c.Label)}
		}
		seen[c.Label] = true
	}
	return nil
}
