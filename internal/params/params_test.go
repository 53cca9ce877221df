package params

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCheckRangesTypesAndChoices(t *testing.T) {
	Register(Spec{Slot: "test.slot", Name: "b", Params: []Param{
		{Name: "trim", Type: Float, Default: 0.1, Range: "[0, 0.5)"},
		{Name: "k", Type: Int, Default: 3, Range: "(0, inf)"},
		{Name: "on", Type: Bool, Default: false},
		{Name: "how", Type: String, Default: "a", OneOf: []string{"a", "b"}},
	}})
	s, ok := Lookup("test.slot", "b")
	if !ok || len(Names("test.slot")) != 1 {
		t.Fatal("registered spec not found")
	}
	for _, c := range []struct {
		param string
		v     any
		want  string // "" for valid
	}{
		{"trim", 0.0, ""}, {"trim", 0.49, ""}, {"trim", 0.5, "must lie in [0, 0.5)"}, {"trim", -0.1, "must lie"},
		{"trim", 1, "expected a number"}, {"k", 1, ""}, {"k", 0, "must lie in (0, inf)"}, {"k", 2.5, "expected an integer"},
		{"on", true, ""}, {"on", "yes", "expected true or false"},
		{"how", "b", ""}, {"how", "c", `unknown value "c"`},
	} {
		p, _ := s.Param(c.param)
		err := p.Check(c.v)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s = %v: Check = %v, want %q", c.param, c.v, err, c.want)
		}
	}
	d := s.Defaults()
	if d.Float("trim") != 0.1 || d.Int("k") != 3 || d.Bool("on") || d.String("how") != "a" {
		t.Errorf("defaults %v", d)
	}
	if got := strings.Join(s.ParamNames(), ","); got != "trim,k,on,how" {
		t.Errorf("parameter order %s", got)
	}
}

func TestRegisterRefusesBadDeclarations(t *testing.T) {
	for name, s := range map[string]Spec{
		"bad range":     {Slot: "x", Name: "a", Params: []Param{{Name: "p", Type: Float, Default: 0.0, Range: "0..1"}}},
		"default out":   {Slot: "x", Name: "b", Params: []Param{{Name: "p", Type: Float, Default: 2.0, Range: "[0, 1]"}}},
		"wrong default": {Slot: "x", Name: "c", Params: []Param{{Name: "p", Type: Int, Default: 1.5}}},
		"kind as name":  {Slot: "x", Name: "d", Params: []Param{{Name: "kind", Type: Int, Default: 1}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			Register(s)
		}()
	}
}

// base is embedded inline in trimmed, as the adversaries share their
// fraction.
type base struct {
	Fraction float64 `yaml:"fraction" range:"[0, 1]" doc:"share of the agents"`
}

type trimmed struct {
	base  `yaml:",inline"`
	Trim  float64 `yaml:"trim" range:"[0, 0.5)" doc:"fraction trimmed at each end"`
	K     int     `yaml:"k" range:"[1, inf)" doc:"an integer"`
	On    bool    `yaml:"on" doc:"a switch"`
	Shape string  `yaml:"shape" oneof:"flat hinge" doc:"a choice"`
}

func TestStructDeclaresAndDecodesParameters(t *testing.T) {
	def := trimmed{base: base{Fraction: 0.1}, Trim: 0.2, K: 3, Shape: "flat"}
	Register(Spec{Slot: "test.struct", Name: "t", Value: def})
	s, _ := Lookup("test.struct", "t")
	if got := strings.Join(s.ParamNames(), ","); got != "fraction,trim,k,on,shape" {
		t.Fatalf("parameters %s, want the fields in order, the embedded one in place", got)
	}
	if p, _ := s.Param("trim"); p.Type != Float || p.Default != 0.2 || p.Range != "[0, 0.5)" || p.Doc == "" {
		t.Errorf("trim declared as %+v", p)
	}
	if p, _ := s.Param("shape"); p.Type != String || len(p.OneOf) != 2 || p.Check("round") == nil {
		t.Errorf("shape declared as %+v", p)
	}
	v := s.Defaults()
	v["trim"], v["k"], v["on"], v["shape"], v["fraction"] = 0.3, 7, true, "hinge", 0.5
	got := s.New(v).(trimmed)
	want := trimmed{base: base{Fraction: 0.5}, Trim: 0.3, K: 7, On: true, Shape: "hinge"}
	if got != want {
		t.Errorf("New = %+v, want %+v", got, want)
	}
	if got := s.New(Values{"trim": 0}).(trimmed); got.Trim != 0 { // an int for a float parameter, as Go code may write it
		t.Errorf("trim set from the integer 0: %v", got.Trim)
	}
	if s.New(Values{}).(trimmed) != def {
		t.Error("New without values does not give the defaults")
	}
	back := ValuesOf(want)
	if len(back) != 5 || back.Float("trim") != 0.3 || back.Int("k") != 7 || !back.Bool("on") || back.String("shape") != "hinge" || back.Float("fraction") != 0.5 {
		t.Errorf("ValuesOf = %v", back)
	}
	if (Spec{Params: s.Params}).New(v) != nil {
		t.Error("a behaviour declared by a list has no struct")
	}
}

func TestStructRefusesUnsupportedFields(t *testing.T) {
	for name, v := range map[string]any{
		"slice field": struct {
			X []int `yaml:"x"`
		}{},
		"no yaml name": struct{ X int }{},
		"not a struct": 3,
		"out of range": struct {
			X float64 `yaml:"x" range:"[0, 1]"`
		}{X: 2},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Register did not panic", name)
				}
			}()
			Register(Spec{Slot: "test.refuse", Name: name, Value: v})
		}()
	}
}

// Random draws stay in their ranges, open ends excluded, and cover them:
// 2000 draws of a uniform on [0, 0.5) fall in both halves (the chance that
// one half gets none is 2·2^−2000), and every integer of [1, 3] comes up.
func TestRandomValuesLieInTheirRanges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ps := []Param{
		{Name: "a", Type: Float, Default: 0.1, Range: "[0, 0.5)"},
		{Name: "b", Type: Float, Default: 1.0, Range: "(0, inf)"},
		{Name: "c", Type: Int, Default: 1, Range: "[1, 3]"},
		{Name: "d", Type: Int, Default: 0, Range: "(-1, inf)"},
		{Name: "e", Type: Float, Default: 0.0},
		{Name: "f", Type: String, Default: "x", OneOf: []string{"x", "y"}},
		{Name: "g", Type: Bool, Default: false},
	}
	for i := range ps {
		if err := ps[i].parseRange(); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[any]bool{}
	var low, high bool
	for range 2000 {
		for _, p := range ps {
			v := p.Random(r)
			if err := p.Check(v); err != nil {
				t.Fatalf("%s: drew %v: %v", p.Name, v, err)
			}
			switch p.Name {
			case "a":
				low, high = low || v.(float64) < 0.25, high || v.(float64) >= 0.25
			case "c", "f", "g":
				seen[v] = true
			}
		}
	}
	if !low || !high || len(seen) != 3+2+2 {
		t.Errorf("draws do not cover the ranges: halves %v %v, values %v", low, high, seen)
	}
}
