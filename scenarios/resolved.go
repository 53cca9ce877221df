package scenarios

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Marshal writes sc — the plan's Base, or a copy of it — as YAML for a run
// directory, every field with its value, but for the fields that do not
// apply to some curve of the plan (Validator.Unused): those were at their
// defaults (a curve that set one would have been refused) and writing them
// would make the copy set what the curve refuses; and for the defaults a
// curve derived from other fields (Validator.Derived), which the copy
// derives again. The copy then loads again as the same plan.
func (p *Plan) Marshal(sc *Scenario) ([]byte, error) {
	var root yaml.Node
	if err := root.Encode(sc); err != nil {
		return nil, err
	}
	for _, field := range p.omitted() {
		remove(&root, strings.Split(field, "."))
	}
	return yaml.Marshal(&root)
}

// omitted returns the fields some curve of the plan declared unused or
// derived, sorted, without repeats.
func (p *Plan) omitted() []string {
	var fields []string
	for _, c := range p.Curves {
		fields = append(fields, c.omitted...)
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}

// remove deletes the mapping entry at path below n, if there is one.
func remove(n *yaml.Node, path []string) {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	i := mappingIndex(n, path[0])
	switch {
	case i < 0:
	case len(path) == 1:
		n.Content = slices.Delete(n.Content, i, i+2)
	default:
		remove(n.Content[i+1], path[1:])
	}
}
