package scenarios

import (
	"fmt"
	"reflect"
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
// behaviours, recording where its kind and parameters came from.
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
	i := mappingIndex(n, "kind")
	if i < 0 {
		return w.errAt(n, path+".kind", "missing: a behaviour mapping needs its kind (%s)", known)
	}
	kindNode := resolveAlias(n.Content[i+1])
	w.pos[path+".kind"] = position{line: kindNode.Line, origin: w.loader.origins[kindNode]}
	spec, err := lookup(kindNode, path+".kind", kindNode.Value)
	if err != nil {
		return err
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
