package scenarios

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Sweep lists fields and the values each takes. A scenario with a sweep runs
// one curve per combination (the Cartesian product, first field varying
// slowest). It is written as a mapping from dotted field paths to lists:
//
//	sweep:
//	  algorithm.step_size: [0.4, 0.2, 0.1]
type Sweep []SweepAxis

// SweepAxis is one swept field and its values.
type SweepAxis struct {
	Field  string
	Values []*yaml.Node
}

// UnmarshalYAML implements yaml.Unmarshaler, keeping the fields in file order.
func (s *Sweep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("expected a mapping from field paths to lists of values")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
			return fmt.Errorf("%s: expected a non-empty list of values", k.Value)
		}
		*s = append(*s, SweepAxis{Field: k.Value, Values: v.Content})
	}
	return nil
}

// resolveAlias returns the node an alias (*name) refers to, or n itself.
func resolveAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// MarshalYAML implements yaml.Marshaler, writing the mapping in order.
func (s Sweep) MarshalYAML() (any, error) {
	if len(s) == 0 {
		return nil, nil
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, a := range s {
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: a.Field},
			&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: a.Values})
	}
	return m, nil
}
