package scenarios_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"maple/internal/params"
	"maple/scenarios"
)

// picker is the parameter section of a family that exists only in this test:
// one behaviour field.
type picker struct {
	Pick scenarios.Behaviour `yaml:"pick" slot:"test.pick"`
}

func init() {
	params.Register(params.Spec{Slot: "test.pick", Name: "plain", Doc: "no parameters"})
	params.Register(params.Spec{Slot: "test.pick", Name: "trimmed", Doc: "one parameter", Params: []params.Param{
		{Name: "trim", Type: params.Float, Default: 0.1, Range: "[0, 0.5)", Doc: "fraction trimmed at each end"},
		{Name: "rounds", Type: params.Int, Default: 2, Range: "[1, inf)", Doc: "an integer"},
	}})
	scenarios.RegisterFamily(scenarios.Family{
		Kind: "picktest", Summary: "test family with a behaviour field", Schemes: []string{"none"},
		Defaults: func(*scenarios.Scenario) any { return &picker{Pick: scenarios.NewBehaviour("test.pick", "plain")} },
		Validate: func(v *scenarios.Validator, sc *scenarios.Scenario) {
			if b := sc.Algorithm.Params.(*picker).Pick; b.Kind == "trimmed" && b.Params.Int("rounds") > 5 {
				v.Fail("algorithm.picktest.pick.rounds", "at most 5 rounds, got %d", b.Params.Int("rounds"))
			}
		},
	})
}

const pickBase = `name: t
algorithm:
  kind: picktest
  picktest:
`

func pick(t *testing.T, src string, overrides ...string) scenarios.Behaviour {
	t.Helper()
	return parse(t, pickBase+src, overrides...).Curves[0].Scenario.Algorithm.Params.(*picker).Pick
}

func TestBehaviourByNameOrMapping(t *testing.T) {
	if b := pick(t, "    pick: plain\n"); b.Kind != "plain" || len(b.Params) != 0 {
		t.Errorf("by name: %+v", b)
	}
	b := pick(t, "    pick: trimmed\n")
	if b.Kind != "trimmed" || b.Params.Float("trim") != 0.1 || b.Params.Int("rounds") != 2 {
		t.Errorf("by name, defaults: %+v", b)
	}
	b = pick(t, "    pick: {kind: trimmed, trim: 0.25}\n")
	if b.Params.Float("trim") != 0.25 || b.Params.Int("rounds") != 2 {
		t.Errorf("mapping: %+v", b)
	}
	// An override sets a parameter of a behaviour given by name.
	b = pick(t, "    pick: trimmed\n", "algorithm.picktest.pick.trim=0.3")
	if b.Kind != "trimmed" || b.Params.Float("trim") != 0.3 {
		t.Errorf("override of a parameter: %+v", b)
	}
	// The resolved scenario lists every parameter, and reads back the same.
	p := parse(t, pickBase+"    pick: {kind: trimmed, rounds: 3}\n")
	out, err := yaml.Marshal(p.Base)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "pick: {kind: trimmed, trim: 0.1, rounds: 3}") {
		t.Errorf("resolved scenario:\n%s", out)
	}
	again := parse(t, string(out)).Curves[0].Scenario.Algorithm.Params.(*picker).Pick
	if again.Kind != "trimmed" || again.Params.Int("rounds") != 3 || again.Params.Float("trim") != 0.1 {
		t.Errorf("round trip: %+v", again)
	}
}

func TestBadBehaviourParametersNameTheirLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"    pick: fancy\n", `t.yaml:5: algorithm.picktest.pick: unknown pick behaviour "fancy" (registered: plain, trimmed)`},
		{"    pick: {trim: 0.1}\n", "t.yaml:5: algorithm.picktest.pick.trim: not a parameter of plain, the field's default behaviour (it has none); a mapping that sets another behaviour's parameters needs its kind (plain, trimmed)"},
		{"    pick:\n      kind: trimmed\n      trim: 0.5\n", "t.yaml:7: algorithm.picktest.pick.trim: must lie in [0, 0.5), got 0.5"},
		{"    pick:\n      kind: trimmed\n      rounds: 1.5\n", `t.yaml:7: algorithm.picktest.pick.rounds: expected an integer, got "1.5"`},
		{"    pick:\n      kind: trimmed\n      trimm: 0.2\n", "t.yaml:7: algorithm.picktest.pick.trimm: unknown parameter of behaviour trimmed (expected one of: trim, rounds)"},
		{"    pick: {kind: plain, trim: 0.2}\n", "t.yaml:5: algorithm.picktest.pick.trim: unknown parameter: behaviour plain has none"},
		{"    pick:\n      kind: trimmed\n      rounds: 9\n", "t.yaml:7: algorithm.picktest.pick.rounds: at most 5 rounds, got 9"},
		{"    pick: [1, 2]\n", "t.yaml:5: algorithm.picktest.pick: expected a behaviour name"},
	} {
		_, err := scenarios.Parse([]byte(pickBase+c.src), "t.yaml", ".", nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v\nwant %s", c.src, err, c.want)
		}
	}
}

// ownAccounting is the parameter section of a test family that accounts for
// privacy itself.
type ownAccounting struct{}

func init() {
	scenarios.RegisterFamily(scenarios.Family{
		Kind: "owntest", Summary: "test family with its own privacy accounting", Schemes: []string{"none", "update-noise"},
		OwnAccounting: "owntest reports its own ε",
		Defaults:      func(*scenarios.Scenario) any { return &ownAccounting{} },
		Validate:      func(*scenarios.Validator, *scenarios.Scenario) {},
	})
}

// A family that declares its own accounting gets no privacy.accountant
// default, even under noise (where every other family gets one), and a
// scenario that sets the section is refused, naming the field and its line.
func TestOwnAccountingHasNoAccountant(t *testing.T) {
	const src = "name: t\nalgorithm: {kind: owntest}\nprivacy: {scheme: update-noise}\n"
	if a := parse(t, src).Curves[0].Scenario.Privacy.Accountant; a != nil {
		t.Errorf("a family with its own accounting got the accountant %+v", a)
	}
	if a := parse(t, "name: t\nalgorithm: {kind: fedavg}\nprivacy: {scheme: update-noise}\n").Curves[0].Scenario.Privacy.Accountant; a == nil {
		t.Error("fedavg under noise lost its default accountant")
	}
	for _, set := range []string{"privacy: {scheme: update-noise, accountant: {b: 2}}\n", "privacy: {accountant: {b: -1}}\n"} {
		_, err := scenarios.Parse([]byte("name: t\nalgorithm: {kind: owntest}\n"+set), "t.yaml", ".", nil)
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "t.yaml:3: privacy.accountant: does not apply: owntest reports its own ε") {
			t.Errorf("%s: %v, want privacy.accountant refused", set, err)
		}
	}
}
