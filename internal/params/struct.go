package params

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
)

// Struct declares a behaviour's parameters from a struct value holding
// their defaults, one parameter per field, in field order:
//
//	type Krum struct {
//		F int `yaml:"f" range:"[0, inf)" doc:"Byzantine replies tolerated per round"`
//		M int `yaml:"m" range:"[1, inf)" doc:"replies averaged (1: Krum)"`
//	}
//
//	params.Struct(Krum{F: 1, M: 1})
//
// A field's yaml tag names the parameter, its range tag bounds a number as
// Param.Range does, its oneof tag lists the values a string accepts
// (separated by spaces) and its doc tag says what it does. The fields must
// be int, float64, bool or string; an embedded struct tagged
// `yaml:",inline"` contributes its fields in place. A struct with an
// unsupported field, a field without a yaml name or a default out of range
// is a programming error: Register panics on it. A nil value declares no
// parameters.
func Struct(defaults any) []Param {
	if defaults == nil {
		return nil
	}
	v := reflect.ValueOf(defaults)
	if v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("params: parameters must be declared by a struct value, got %T", defaults))
	}
	var out []Param
	eachField(v, func(name string, f reflect.StructField, fv reflect.Value) {
		p := Param{Name: name, Range: f.Tag.Get("range"), Doc: f.Tag.Get("doc")}
		if s := f.Tag.Get("oneof"); s != "" {
			p.OneOf = strings.Fields(s)
		}
		switch f.Type.Kind() {
		case reflect.Int:
			p.Type, p.Default = Int, int(fv.Int())
		case reflect.Float64:
			p.Type, p.Default = Float, fv.Float()
		case reflect.Bool:
			p.Type, p.Default = Bool, fv.Bool()
		case reflect.String:
			p.Type, p.Default = String, fv.String()
		default:
			panic(fmt.Sprintf("params: field %s of %T is a %v; parameters are int, float64, bool or string", f.Name, defaults, f.Type))
		}
		out = append(out, p)
	})
	return out
}

// eachField calls fn for every parameter field of the struct v, flattening
// inline embedded structs.
func eachField(v reflect.Value, fn func(name string, f reflect.StructField, fv reflect.Value)) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Anonymous && f.Type.Kind() == reflect.Struct && opts == "inline" {
			eachField(v.Field(i), fn)
			continue
		}
		if !f.IsExported() || name == "" || name == "-" {
			panic(fmt.Sprintf("params: field %s of %v needs to be exported and to have a yaml name", f.Name, t))
		}
		fn(name, f, v.Field(i))
	}
}

// New returns the behaviour's parameters as the struct its Value declares,
// with the fields set from v (every parameter v lacks keeps its default).
// It returns nil for a behaviour declared by a list of Params.
func (s Spec) New(v Values) any {
	if s.Value == nil {
		return nil
	}
	out := reflect.New(reflect.TypeOf(s.Value)).Elem()
	out.Set(reflect.ValueOf(s.Value))
	eachField(out, func(name string, _ reflect.StructField, fv reflect.Value) {
		x, ok := v[name]
		if !ok {
			return
		}
		switch x := x.(type) {
		case int:
			if fv.CanFloat() { // an integer given in Go for a float parameter
				fv.SetFloat(float64(x))
				return
			}
			fv.SetInt(int64(x))
		case float64:
			fv.SetFloat(x)
		case bool:
			fv.SetBool(x)
		case string:
			fv.SetString(x)
		}
	})
	return out.Interface()
}

// ValuesOf returns the parameters of a struct declared as Struct reads
// them, by name: the inverse of Spec.New.
func ValuesOf(s any) Values {
	v := Values{}
	if s == nil {
		return v
	}
	eachField(reflect.ValueOf(s), func(name string, _ reflect.StructField, fv reflect.Value) {
		v[name] = fv.Interface()
	})
	return v
}

// Check reports the first field of a struct declared as Struct reads it
// whose value is out of its declared range or choices, as an *Error naming
// the parameter: what the loader checks in a scenario file, for a value
// built in Go. Anything but a struct has no parameters to check.
func Check(s any) error {
	if s == nil || reflect.ValueOf(s).Kind() != reflect.Struct {
		return nil
	}
	for _, p := range Struct(s) { // each Param's Default is the field's value
		if err := p.parseRange(); err != nil {
			panic(fmt.Sprintf("params: %T: %v", s, err))
		}
		if err := p.Check(p.Default); err != nil {
			return &Error{Param: p.Name, Msg: err.Error()}
		}
	}
	return nil
}

// Random returns a value of p drawn from r: uniform over a finite range,
// lo plus an exponential of mean 1 (or of the bound's magnitude) beyond a
// finite lower bound (for an integer, a geometric number of mean 2 above
// it), an element of OneOf, a coin for a bool. Open bounds
// are never returned. Tests use it to run behaviours with parameters
// anywhere in their declared ranges.
func (p Param) Random(r *rand.Rand) any {
	switch p.Type {
	case Bool:
		return r.IntN(2) == 1
	case String:
		if len(p.OneOf) == 0 {
			return p.Default
		}
		return p.OneOf[r.IntN(len(p.OneOf))]
	}
	lo, hi := p.lo, p.hi
	if p.Type == Int {
		// Uniform over the integers of a finite interval; beyond a finite
		// lower end, small values are likelier (a geometric of mean 2).
		if math.IsInf(lo, -1) {
			lo = math.Min(0, hi)
		}
		a := int(math.Ceil(lo))
		if p.loOpen && float64(a) == lo {
			a++
		}
		if math.IsInf(hi, 1) {
			return a + int(2*r.ExpFloat64())
		}
		b := int(math.Floor(hi))
		if p.hiOpen && float64(b) == hi {
			b--
		}
		return a + r.IntN(b-a+1)
	}
	for {
		var x float64
		switch {
		case !math.IsInf(lo, 0) && !math.IsInf(hi, 0):
			x = lo + (hi-lo)*r.Float64()
		case !math.IsInf(lo, 0):
			x = lo + math.Max(1, math.Abs(lo))*r.ExpFloat64()
		case !math.IsInf(hi, 0):
			x = hi - math.Max(1, math.Abs(hi))*r.ExpFloat64()
		default:
			x = r.NormFloat64()
		}
		if p.Check(x) == nil {
			return x
		}
	}
}

// Error is an error about one parameter of a behaviour, found by a check
// that involves the rest of the configuration (a trim that drops no reply
// of a round, say); the scenario glue reports it at the parameter's field.
type Error struct {
	// Param names the parameter.
	Param string
	// Msg says what is wrong, without the parameter's name.
	Msg string
}

// Error implements error.
func (e *Error) Error() string { return e.Param + ": " + e.Msg }

// Errorf returns an *Error about parameter param.
func Errorf(param, format string, args ...any) error {
	return &Error{Param: param, Msg: fmt.Sprintf(format, args...)}
}

// Registry is the typed view of one slot whose behaviours are values of a
// Go type T, usually an interface (a FedAvg client is a fedavg.Client): a
// behaviour is registered as a struct value of its parameters at their
// defaults that implements T (see Struct), and New returns a copy with a
// scenario's values, ready to use. Methods of T must then have value
// receivers.
type Registry[T any] struct {
	// Slot is the slot the behaviours are registered in.
	Slot string
}

// Register makes the behaviour name available in the slot, with its
// parameters and defaults declared by value. Call it from an init
// function; as for the package's Register, a mistake panics.
func (r Registry[T]) Register(name, doc string, value T) {
	if any(value) == nil {
		panic("params: behaviour " + r.Slot + "/" + name + " registered without a value")
	}
	Register(Spec{Slot: r.Slot, Name: name, Doc: doc, Value: value})
}

// New returns the behaviour name with the parameter values v (nil: its
// defaults), or an error naming the registered behaviours if there is none
// of that name.
func (r Registry[T]) New(name string, v Values) (T, error) {
	s, ok := Lookup(r.Slot, name)
	var t T
	if !ok || s.Value == nil {
		return t, fmt.Errorf("unknown %s behaviour %q (registered: %s)", r.Slot, name, strings.Join(Names(r.Slot), ", "))
	}
	t, ok = s.New(v).(T)
	if !ok {
		return t, fmt.Errorf("behaviour %s of slot %s is a %T, not a %T", name, r.Slot, s.Value, (*T)(nil))
	}
	return t, nil
}

// Names lists the slot's behaviours, sorted.
func (r Registry[T]) Names() []string { return Names(r.Slot) }
