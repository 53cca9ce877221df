package all

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"maple/internal/params"
	"maple/scenarios"
)

// slotField is a behaviour field of a family's section: its dotted path and
// the slot it selects from.
type slotField struct{ field, slot string }

var behaviourType = reflect.TypeOf(scenarios.Behaviour{})

// slotFields appends the behaviour fields of the section type t at path:
// through structs, pointers and lists (whose entries share the list's
// path), an inline behaviour at its struct's path.
func slotFields(path string, t reflect.Type, out []slotField) []slotField {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		return slotFields(path, t.Elem(), out)
	case reflect.Struct:
	default:
		return out
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		p := path
		if opts != "inline" {
			p += "." + name
		}
		if f.Type == behaviourType {
			out = append(out, slotField{p, f.Tag.Get("slot")})
			continue
		}
		out = slotFields(p, f.Type, out)
	}
	return out
}

var backticked = regexp.MustCompile("`([^`]*)`")

// The table of behaviour slots in docs/scenarios.md is the code's: a row
// per behaviour field of every registered family's section (found by
// reflection, not listed here), one row "—" for a family without any, each
// naming the field's slot and, in backticks, exactly the behaviours its
// registry holds (but those this package's tests register, named test-…)
// — so that a slot, a family or a behaviour added without its row fails
// here.
func TestScenariosDocListsEverySlot(t *testing.T) {
	text, err := os.ReadFile("../../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	start := slices.Index(lines, "| family | field | slot | built in | documented in |")
	if start < 0 {
		t.Fatal("docs/scenarios.md has no table of behaviour slots")
	}
	doc := map[string][]slotField{}
	for _, line := range lines[start+2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			t.Errorf("row %q: %d cells, want 5", line, len(cells))
			continue
		}
		first := func(cell string) string {
			if m := backticked.FindStringSubmatch(cell); m != nil {
				return m[1]
			}
			return strings.TrimSpace(cell)
		}
		kind, field, slot := first(cells[0]), first(cells[1]), first(cells[2])
		if field == "—" {
			doc[kind] = append(doc[kind], slotField{})
			continue
		}
		doc[kind] = append(doc[kind], slotField{field, slot})
		var names []string
		for _, m := range backticked.FindAllStringSubmatch(cells[3], -1) {
			names = append(names, m[1])
		}
		slices.Sort(names)
		want := slices.DeleteFunc(params.Names(slot), func(n string) bool { return strings.HasPrefix(n, "test-") })
		if !slices.Equal(names, want) {
			t.Errorf("%s: the table lists %v as built in, slot %s holds %v", field, names, slot, want)
		}
	}
	for _, kind := range scenarios.FamilyKinds() {
		f, _ := scenarios.LookupFamily(kind)
		want := slotFields("algorithm."+kind, reflect.TypeOf(f.Defaults(&scenarios.Scenario{})), nil)
		if len(want) == 0 {
			want = []slotField{{}}
		}
		got := doc[kind]
		for _, l := range [][]slotField{got, want} {
			slices.SortFunc(l, func(a, b slotField) int { return strings.Compare(a.field, b.field) })
		}
		if !slices.Equal(got, want) {
			t.Errorf("family %s: the table has %v, its section %v", kind, got, want)
		}
		delete(doc, kind)
	}
	for kind := range doc {
		t.Errorf("the table lists %s, which is not a registered family", kind)
	}
}
