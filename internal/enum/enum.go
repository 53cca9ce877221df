// Package enum gives the small enumerations of maple (losses, samplers,
// privacy schemes, …) their scenario-file names, stated once per
// enumeration, with the String and Parse functions every one of them needs.
package enum

import (
	"fmt"
	"strings"
)

// Names lists the scenario-file names of an enumeration's values 0, 1, 2, …
// and says what the enumeration is called in error messages.
type Names[T ~int | ~int8] struct {
	what  string
	names []string
}

// Of returns the names of the values of the enumeration called what, in
// value order.
func Of[T ~int | ~int8](what string, names ...string) Names[T] {
	return Names[T]{what: what, names: names}
}

// String returns the name of v, or "what(v)" for a value that has none.
func (n Names[T]) String(v T) string {
	if v < 0 || int(v) >= len(n.names) {
		return fmt.Sprintf("%s(%d)", n.what, int(v))
	}
	return n.names[v]
}

// Parse returns the value named s, or an error naming s and every accepted
// name: `unknown strategy "x" (expected consensus, cta, atc or general)`.
func (n Names[T]) Parse(s string) (T, error) {
	for i, name := range n.names {
		if name == s {
			return T(i), nil
		}
	}
	return 0, fmt.Errorf("unknown %s %q (expected %s)", n.what, s, orList(n.names))
}

// orList joins names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Names returns the names of every value, in value order.
func (n Names[T]) Names() []string { return append([]string(nil), n.names...) }
