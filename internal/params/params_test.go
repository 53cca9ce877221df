package params

import (
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
