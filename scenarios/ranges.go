package scenarios

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// IntRange is a closed integer range [Min, Max]. In a scenario it is written
// as a single integer (a fixed value) or as a pair [min, max].
type IntRange struct{ Min, Max int }

// UnmarshalYAML implements yaml.Unmarshaler.
func (r *IntRange) UnmarshalYAML(n *yaml.Node) error {
	lo, hi, err := decodePair[int](n, "an integer or a [min, max] pair of integers")
	if err == nil {
		*r = IntRange{lo, hi}
	}
	return err
}

// MarshalYAML writes the range as a flow pair, [min, max].
func (r IntRange) MarshalYAML() (any, error) { return flowPair(r.Min, r.Max), nil }

// FloatRange is a closed real range [Min, Max], written like IntRange.
type FloatRange struct{ Min, Max float64 }

// UnmarshalYAML implements yaml.Unmarshaler.
func (r *FloatRange) UnmarshalYAML(n *yaml.Node) error {
	lo, hi, err := decodePair[float64](n, "a number or a [min, max] pair of numbers")
	if err == nil {
		*r = FloatRange{lo, hi}
	}
	return err
}

// MarshalYAML writes the range as a flow pair, [min, max].
func (r FloatRange) MarshalYAML() (any, error) { return flowPair(r.Min, r.Max), nil }

// decodePair reads a scalar (min = max) or a two-element sequence.
func decodePair[T int | float64](n *yaml.Node, want string) (lo, hi T, err error) {
	switch {
	case n.Kind == yaml.ScalarNode:
		if decodeNumber(n, &lo) != nil {
			return lo, hi, fmt.Errorf("expected %s, got %q", want, n.Value)
		}
		return lo, lo, nil
	case n.Kind == yaml.SequenceNode && len(n.Content) == 2:
		if decodeNumber(n.Content[0], &lo) != nil || decodeNumber(n.Content[1], &hi) != nil {
			return lo, hi, fmt.Errorf("expected %s", want)
		}
		return lo, hi, nil
	}
	return lo, hi, fmt.Errorf("expected %s", want)
}

// decodeNumber decodes a scalar into an int or a float64. Unlike yaml.v3's
// own decoding it refuses to truncate a non-integer such as 2.5 into an int.
func decodeNumber[T int | float64](n *yaml.Node, out *T) error {
	if _, isInt := any(out).(*int); isInt && n.ShortTag() != "!!int" {
		return fmt.Errorf("not an integer: %q", n.Value)
	}
	return n.Decode(out)
}

func flowPair[T any](lo, hi T) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, v := range []T{lo, hi} {
		var c yaml.Node
		_ = c.Encode(v) // encoding a number cannot fail
		n.Content = append(n.Content, &c)
	}
	return n
}
