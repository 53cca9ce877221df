package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"maple/internal/params"
)

// Behaviour is a scenario field that selects a registered behaviour and sets
// its parameters (package internal/params). The struct field declares the
// slot it selects from with a tag, for example
//
//	Server scenarios.Behaviour `yaml:"server" slot:"fedavg.server"`
//
// and the family's Defaults sets it with NewBehaviour. In a file it is the
// behaviour's name (server: median, every parameter at its default) or a
// mapping of its kind and parameters (server: {kind: trimmed-mean, trim:
// 0.2}); the loader checks the name, each parameter's type and range, and
// unknown keys, at their lines.
type Behaviour struct {
	// Kind is the name of the selected behaviour.
	Kind string
	// Params holds every parameter of the behaviour, set or defaulted.
	Params params.Values

	slot string
}

var behaviourType = reflect.TypeOf(Behaviour{})

// NewBehaviour returns the behaviour kind of slot with its default
// parameters: the default of a Behaviour field.
func NewBehaviour(slot, kind string) Behaviour {
	b := Behaviour{Kind: kind, slot: slot}
	if s, ok := params.Lookup(slot, kind); ok {
		b.Params = s.Defaults()
	}
	return b
}

// Slot returns the slot the behaviour is selected from.
func (b Behaviour) Slot() string { return b.slot }

// UnmarshalYAML decodes a name or a {kind, parameters…} mapping over b, whose
// slot the defaults have set. The walker has checked the value against the
// registered behaviour, so decoding cannot fail on valid input.
func (b *Behaviour) UnmarshalYAML(n *yaml.Node) error {
	n = resolveAlias(n)
	if n.Kind == yaml.ScalarNode {
		*b = NewBehaviour(b.slot, n.Value)
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("expected a behaviour name or a mapping with kind and parameters")
	}
	kind := scalarAt(n, "kind")
	if kind == "" {
		kind = b.Kind // the field's behaviour keeps its kind (see checkBehaviour)
	}
	*b = NewBehaviour(b.slot, kind)
	spec, _ := params.Lookup(b.slot, kind)
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if key == "kind" {
			continue
		}
		p, ok := spec.Param(key)
		if !ok {
			return fmt.Errorf("behaviour %s has no parameter %s", kind, key)
		}
		v, err := decodeParam(n.Content[i+1], p)
		if err != nil {
			return err
		}
		b.Params[key] = v
	}
	return nil
}

// MarshalYAML writes the behaviour's name when it has no parameters, and a
// mapping of its kind and every parameter otherwise.
func (b Behaviour) MarshalYAML() (any, error) {
	spec, ok := params.Lookup(b.slot, b.Kind)
	if !ok || len(spec.Params) == 0 {
		return b.Kind, nil
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	add := func(key string, v any) error {
		var value yaml.Node
		if err := value.Encode(v); err != nil {
			return err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, &value)
		return nil
	}
	if err := add("kind", b.Kind); err != nil {
		return nil, err
	}
	for _, p := range spec.Params {
		if err := add(p.Name, b.Params[p.Name]); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// decodeParam decodes a parameter's value node into the Go type of p.
func decodeParam(n *yaml.Node, p params.Param) (any, error) {
	n = resolveAlias(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return nil, fmt.Errorf("expected %s", p.Type)
	}
	var (
		v   any
		err error
	)
	switch p.Type {
	case params.Int:
		var i int
		if n.ShortTag() != "!!int" {
			return nil, fmt.Errorf("expected %s, got %q", p.Type, n.Value)
		}
		err = n.Decode(&i)
		v = i
	case params.Float:
		var f float64
		err = n.Decode(&f)
		v = f
	case params.Bool:
		var b bool
		err = n.Decode(&b)
		v = b
	default:
		v = n.Value
	}
	if err != nil {
		return nil, fmt.Errorf("expected %s, got %q", p.Type, n.Value)
	}
	return v, nil
}

// checkBehaviour checks a Behaviour field of slot against the registered
// behaviours, recording where its kind and parameters came from. A mapping
// without a kind keeps the behaviour the field has by default, so that
// `--set algorithm.fedplt.solver.step_scale=2` sets a parameter of the
// default solver; it may set only that behaviour's parameters.
func (w *walker) checkBehaviour(n *yaml.Node, slot, path string) error {
	n = resolveAlias(n)
	known := strings.Join(params.Names(slot), ", ")
	lookup := func(at *yaml.Node, field, kind string) (params.Spec, error) {
		spec, ok := params.Lookup(slot, kind)
		if !ok {
			return spec, w.errAt(at, field, "unknown %s behaviour %q (registered: %s)", slot[strings.LastIndexByte(slot, '.')+1:], kind, known)
		}
		return spec, nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return w.errAt(n, path, "missing value (expected a behaviour: %s)", known)
		}
		_, err := lookup(n, path, n.Value)
		return err
	case yaml.MappingNode:
	default:
		return w.errAt(n, path, "expected a behaviour name (%s) or a mapping with kind and its parameters", known)
	}
	var spec params.Spec
	if i := mappingIndex(n, "kind"); i >= 0 {
		kindNode := resolveAlias(n.Content[i+1])
		w.pos[path+".kind"] = position{line: kindNode.Line, origin: w.loader.origins[kindNode]}
		var err error
		if spec, err = lookup(kindNode, path+".kind", kindNode.Value); err != nil {
			return err
		}
	} else {
		b, _ := behaviourAt(w.defaults, path) // none: b.Kind is "", which Lookup refuses
		var ok bool
		if spec, ok = params.Lookup(slot, b.Kind); !ok || b.slot != slot {
			return w.errAt(n, path+".kind", "missing: a behaviour mapping needs its kind (%s)", known)
		}
		for j := 0; j+1 < len(n.Content); j += 2 {
			if k := n.Content[j]; !slices.Contains(spec.ParamNames(), k.Value) {
				has := "it has none"
				if len(spec.Params) > 0 {
					has = "its parameters: " + strings.Join(spec.ParamNames(), ", ")
				}
				return w.errAt(k, path+"."+k.Value, "not a parameter of %s, the field's default behaviour (%s); a mapping that sets another behaviour's parameters needs its kind (%s)", spec.Name, has, known)
			}
		}
	}
	seen := map[string]bool{}
	for j := 0; j+1 < len(n.Content); j += 2 {
		k, v := n.Content[j], resolveAlias(n.Content[j+1])
		field := path + "." + k.Value
		if seen[k.Value] {
			return w.errAt(k, field, "appears twice")
		}
		seen[k.Value] = true
		if k.Value == "kind" {
			continue
		}
		p, ok := spec.Param(k.Value)
		if !ok {
			if len(spec.Params) == 0 {
				return w.errAt(k, field, "unknown parameter: behaviour %s has none", spec.Name)
			}
			return w.errAt(k, field, "unknown parameter of behaviour %s (expected one of: %s)", spec.Name, strings.Join(spec.ParamNames(), ", "))
		}
		w.pos[field] = position{line: v.Line, origin: w.loader.origins[v]}
		value, err := decodeParam(v, p)
		if err == nil {
			err = p.Check(value)
		}
		if err != nil {
			return w.errAt(v, field, "%v", err)
		}
	}
	return nil
}

// behaviourAt returns the Behaviour field at the dotted path of sc (the
// algorithm section's parameters under the key of its kind), if there is
// one; a path through a list has none.
func behaviourAt(sc *Scenario, path string) (Behaviour, bool) {
	if sc == nil {
		return Behaviour{}, false
	}
	v := reflect.ValueOf(sc).Elem()
	for _, part := range strings.Split(path, ".") {
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
			if v.IsNil() {
				return Behaviour{}, false
			}
			v = v.Elem()
		}
		if v.Type() == algorithmType {
			a := v.Interface().(Algorithm)
			if part != a.Kind || a.Params == nil {
				return Behaviour{}, false
			}
			v = reflect.ValueOf(a.Params)
			continue
		}
		if v.Kind() != reflect.Struct {
			return Behaviour{}, false
		}
		f, ok := fieldByTag(v.Type(), part)
		if !ok {
			return Behaviour{}, false
		}
		v = v.FieldByIndex(f.Index)
	}
	b, ok := v.Interface().(Behaviour)
	return b, ok
}

// inlineBehaviour returns the Behaviour field of struct type t declared
// inline (`yaml:",inline" slot:"…"`), whose kind and parameters sit beside
// the struct's other fields in one mapping, as in
// {agents: [0, 9], kind: sgd, batch: 5}.
func inlineBehaviour(t reflect.Type) (reflect.StructField, bool) {
	if t.Kind() != reflect.Struct {
		return reflect.StructField{}, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if _, opts, _ := strings.Cut(f.Tag.Get("yaml"), ","); f.Type == behaviourType && opts == "inline" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// splitInline separates a mapping n of a struct type with an inline
// Behaviour field b into the struct's own fields and the behaviour's kind
// and parameters (every other key), in their order.
func splitInline(n *yaml.Node, t reflect.Type, b reflect.StructField) (own, behaviour *yaml.Node) {
	own = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	behaviour = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if f, ok := fieldByTag(t, k.Value); ok && f.Name != b.Name {
			own.Content = append(own.Content, k, n.Content[i+1])
		} else {
			behaviour.Content = append(behaviour.Content, k, n.Content[i+1])
		}
	}
	return own, behaviour
}

// checkWithBehaviour checks a mapping of a struct type with an inline
// Behaviour field: its own fields as any struct's, the other keys as the
// behaviour's kind and parameters, at the struct's path.
func (w *walker) checkWithBehaviour(n *yaml.Node, t reflect.Type, b reflect.StructField, path string) error {
	if n.Kind != yaml.MappingNode {
		return w.errAt(n, path, "expected a mapping of %s and a behaviour's kind and parameters", strings.Join(fieldNames(t), ", "))
	}
	own, behaviour := splitInline(n, t, b)
	for i := 0; i+1 < len(own.Content); i += 2 {
		k, v := own.Content[i], own.Content[i+1]
		field := joinPath(path, k.Value)
		if mappingIndex(own, k.Value) != i {
			return w.errAt(k, field, "appears twice")
		}
		f, _ := fieldByTag(t, k.Value)
		if err := w.check(v, f.Type, field); err != nil {
			return err
		}
	}
	return w.checkBehaviour(behaviour, b.Tag.Get("slot"), path)
}

// DecodeWithBehaviour decodes the mapping n into out, a pointer to a
// struct with an inline Behaviour field (see the walker's check): the
// struct's own fields from their keys, the behaviour, of the field's slot
// tag, from the other keys. A struct type with such a field calls it from
// its UnmarshalYAML method.
func DecodeWithBehaviour(n *yaml.Node, out any) error {
	v := reflect.ValueOf(out).Elem()
	f, ok := inlineBehaviour(v.Type())
	if !ok {
		return fmt.Errorf("%T has no inline behaviour field", out)
	}
	n = resolveAlias(n)
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("expected a mapping")
	}
	own, behaviour := splitInline(n, v.Type(), f)
	for i := 0; i+1 < len(own.Content); i += 2 {
		field, _ := fieldByTag(v.Type(), own.Content[i].Value)
		if err := own.Content[i+1].Decode(v.FieldByIndex(field.Index).Addr().Interface()); err != nil {
			return err
		}
	}
	b := Behaviour{slot: f.Tag.Get("slot")}
	if err := b.UnmarshalYAML(behaviour); err != nil {
		return err
	}
	v.FieldByIndex(f.Index).Set(reflect.ValueOf(b))
	return nil
}

// EncodeWithBehaviour returns the mapping of in, a struct with an inline
// Behaviour field, in flow style: its own fields, then the behaviour's kind
// and parameters. A struct type with such a field calls it from its
// MarshalYAML method.
func EncodeWithBehaviour(in any) (*yaml.Node, error) {
	v := reflect.ValueOf(in)
	f, ok := inlineBehaviour(v.Type())
	if !ok {
		return nil, fmt.Errorf("%T has no inline behaviour field", in)
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	for i := range v.NumField() {
		field := v.Type().Field(i)
		if field.Name == f.Name || tagName(field) == "" || tagName(field) == "-" {
			continue
		}
		var value yaml.Node
		if err := value.Encode(v.Field(i).Interface()); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: tagName(field)}, &value)
	}
	b := v.FieldByIndex(f.Index).Interface().(Behaviour)
	var bn yaml.Node
	m, err := b.MarshalYAML()
	if err == nil {
		err = bn.Encode(m)
	}
	if err != nil {
		return nil, err
	}
	if bn.Kind == yaml.ScalarNode {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "kind"}, &bn)
	} else {
		n.Content = append(n.Content, bn.Content...)
	}
	return n, nil
}
