// Package params declares the parameters of pluggable behaviours — a FedAvg
// server, an adversary, a collection policy — so that scenario files can set
// them and the scenario loader can check them like any other field: by name,
// type and range, with the line of the offending value.
//
// A behaviour is registered under a slot (the kind of thing it is, such as
// "fedavg.server") and a name, with its parameters:
//
//	params.Register(params.Spec{
//		Slot: "fedavg.server", Name: "trimmed-mean",
//		Doc:  "coordinate-wise mean of the replies left after trimming",
//		Params: []params.Param{{
//			Name: "trim", Type: params.Float, Default: 0.1, Range: "[0, 0.5)",
//			Doc: "fraction of the replies trimmed at each end, per coordinate",
//		}},
//	})
//
// and a scenario selects it as `server: trimmed-mean` (every parameter at
// its default) or `server: {kind: trimmed-mean, trim: 0.2}`.
//
// A behaviour usually declares its parameters as a struct instead, whose
// fields carry the name, range and doc in tags and whose value holds the
// defaults (Struct, Spec.Value); Spec.New then returns the struct with a
// scenario's values, and a typed Registry of a slot hands out the
// behaviours as values of the slot's Go interface:
//
//	type trimmedMean struct {
//		Trim float64 `yaml:"trim" range:"[0, 0.5)" doc:"fraction trimmed at each end, per coordinate"`
//	}
//
//	servers.Register("trimmed-mean", "coordinate-wise mean of the replies left after trimming", trimmedMean{Trim: 0.1})
package params

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Type is the type of a parameter's values.
type Type int

const (
	// Int parameters hold an int.
	Int Type = iota
	// Float parameters hold a float64.
	Float
	// Bool parameters hold a bool.
	Bool
	// String parameters hold a string.
	String
)

var typeNames = []string{"an integer", "a number", "true or false", "a string"}

// String describes the type in words ("an integer", …).
func (t Type) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// Param declares one parameter of a behaviour.
type Param struct {
	// Name is the parameter's key in the scenario file.
	Name string
	// Type is its type, and Default its value when the scenario does not
	// set it: an int, float64, bool or string matching Type.
	Type    Type
	Default any
	// Range bounds an Int or Float parameter, written as an interval:
	// "[0, 0.5)", "(0, inf)", "[1, inf)". Empty: any finite value.
	Range string
	// OneOf lists the values a String parameter accepts (empty: any).
	OneOf []string
	// Doc says what the parameter does, in one sentence.
	Doc string

	lo, hi         float64
	loOpen, hiOpen bool
}

// Spec declares a behaviour and its parameters.
type Spec struct {
	// Slot is the kind of behaviour ("fedavg.server") and Name the value
	// that selects it in a scenario.
	Slot, Name string
	// Doc says what the behaviour does, in one line.
	Doc string
	// Params are its parameters, in the order summaries list them. A
	// behaviour declares them either here or, as a struct holding their
	// defaults, in Value (Struct), never both.
	Params []Param
	// Value, if set, is the behaviour's parameters at their defaults as a
	// struct (see Struct): Register derives Params from it, and New returns
	// a copy with a scenario's values.
	Value any
}

// Values are the parameter values of one selected behaviour, by name.
type Values map[string]any

var registry = map[string]map[string]Spec{}

// Register makes a behaviour's parameters known to scenario files. Call it
// from an init function; a duplicate name in a slot, a malformed range or a
// default of the wrong type or out of range panics, as they are programming
// errors.
func Register(s Spec) {
	if s.Slot == "" || s.Name == "" {
		panic("params: a behaviour needs a slot and a name")
	}
	if _, dup := registry[s.Slot][s.Name]; dup {
		panic("params: behaviour " + s.Slot + "/" + s.Name + " registered twice")
	}
	if s.Value != nil {
		if len(s.Params) > 0 {
			panic("params: behaviour " + s.Slot + "/" + s.Name + " declares its parameters twice (Params and Value)")
		}
		s.Params = Struct(s.Value)
	}
	s.Params = slices.Clone(s.Params)
	for i := range s.Params {
		p := &s.Params[i]
		if p.Name == "" || p.Name == "kind" {
			panic(fmt.Sprintf("params: %s/%s: parameter %d needs a name other than kind", s.Slot, s.Name, i))
		}
		if err := p.parseRange(); err != nil {
			panic(fmt.Sprintf("params: %s/%s: %v", s.Slot, s.Name, err))
		}
		if err := p.Check(p.Default); err != nil {
			panic(fmt.Sprintf("params: %s/%s: default of %s: %v", s.Slot, s.Name, p.Name, err))
		}
	}
	if registry[s.Slot] == nil {
		registry[s.Slot] = map[string]Spec{}
	}
	registry[s.Slot][s.Name] = s
}

// Lookup returns the behaviour registered under name in slot.
func Lookup(slot, name string) (Spec, bool) {
	s, ok := registry[slot][name]
	return s, ok
}

// Names lists the behaviours registered in slot, sorted.
func Names(slot string) []string {
	names := make([]string, 0, len(registry[slot]))
	for n := range registry[slot] {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Param returns the parameter called name.
func (s Spec) Param(name string) (Param, bool) {
	for _, p := range s.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// ParamNames lists the parameters' names in declaration order.
func (s Spec) ParamNames() []string {
	names := make([]string, len(s.Params))
	for i, p := range s.Params {
		names[i] = p.Name
	}
	return names
}

// Defaults returns every parameter at its default.
func (s Spec) Defaults() Values {
	v := make(Values, len(s.Params))
	for _, p := range s.Params {
		v[p.Name] = p.Default
	}
	return v
}

// parseRange reads p.Range.
func (p *Param) parseRange() error {
	p.lo, p.hi = math.Inf(-1), math.Inf(1)
	if p.Range == "" {
		return nil
	}
	if p.Type != Int && p.Type != Float {
		return fmt.Errorf("parameter %s: a range only applies to numbers", p.Name)
	}
	r := strings.TrimSpace(p.Range)
	if len(r) < 5 || !strings.ContainsRune("[(", rune(r[0])) || !strings.ContainsRune("])", rune(r[len(r)-1])) {
		return fmt.Errorf("parameter %s: range %q is not an interval such as [0, 1)", p.Name, p.Range)
	}
	lo, hi, ok := strings.Cut(r[1:len(r)-1], ",")
	if !ok {
		return fmt.Errorf("parameter %s: range %q is not an interval such as [0, 1)", p.Name, p.Range)
	}
	var err error
	if p.lo, err = bound(lo); err != nil {
		return fmt.Errorf("parameter %s: range %q: %v", p.Name, p.Range, err)
	}
	if p.hi, err = bound(hi); err != nil {
		return fmt.Errorf("parameter %s: range %q: %v", p.Name, p.Range, err)
	}
	p.loOpen, p.hiOpen = r[0] == '(', r[len(r)-1] == ')'
	if p.lo > p.hi {
		return fmt.Errorf("parameter %s: range %q is empty", p.Name, p.Range)
	}
	return nil
}

func bound(s string) (float64, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// Check reports whether v is a valid value of p: of p's Go type (int,
// float64, bool or string), finite, in p's range and, for strings, one of
// p.OneOf.
func (p Param) Check(v any) error {
	var x float64
	switch p.Type {
	case Int:
		i, ok := v.(int)
		if !ok {
			return fmt.Errorf("expected %s, got %v", p.Type, v)
		}
		x = float64(i)
	case Float:
		f, ok := v.(float64)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("expected %s, got %v", p.Type, v)
		}
		x = f
	case Bool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("expected %s, got %v", p.Type, v)
		}
		return nil
	case String:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("expected %s, got %v", p.Type, v)
		}
		if len(p.OneOf) > 0 && !slices.Contains(p.OneOf, s) {
			return fmt.Errorf("unknown value %q (expected one of: %s)", s, strings.Join(p.OneOf, ", "))
		}
		return nil
	default:
		return fmt.Errorf("invalid parameter type %v", p.Type)
	}
	if x < p.lo || x > p.hi || (p.loOpen && x == p.lo) || (p.hiOpen && x == p.hi) {
		return fmt.Errorf("must lie in %s, got %v", p.Range, v)
	}
	return nil
}

// Float returns the value of the Float parameter name.
func (v Values) Float(name string) float64 { f, _ := v[name].(float64); return f }

// Int returns the value of the Int parameter name.
func (v Values) Int(name string) int { i, _ := v[name].(int); return i }

// Bool returns the value of the Bool parameter name.
func (v Values) Bool(name string) bool { b, _ := v[name].(bool); return b }

// String returns the value of the String parameter name.
func (v Values) String(name string) string { s, _ := v[name].(string); return s }
