package scenarios_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"maple/scenarios"
)

// ranged is the parameter section of a test family whose behaviour field
// defaults to a behaviour with parameters, and whose list entries hold a
// behaviour inline beside their own field, as algorithm.fedplt.solver and
// .solvers do.
type ranged struct {
	Main    scenarios.Behaviour `yaml:"main" slot:"test.pick"`
	Entries []rangedEntry       `yaml:"entries"`
}

// rangedEntry is an entry of ranged.Entries: {agents: …, kind: …, …}.
type rangedEntry struct {
	Agents scenarios.IntRange  `yaml:"agents"`
	Pick   scenarios.Behaviour `yaml:",inline" slot:"test.pick"`
}

func (e *rangedEntry) UnmarshalYAML(n *yaml.Node) error {
	return scenarios.DecodeWithBehaviour(n, e)
}

func (e rangedEntry) MarshalYAML() (any, error) { return scenarios.EncodeWithBehaviour(e) }

func init() {
	scenarios.RegisterFamily(scenarios.Family{
		Kind: "rangedtest", Summary: "test family with a defaulted behaviour and inline ones", Schemes: []string{"none"},
		Defaults: func(*scenarios.Scenario) any {
			return &ranged{Main: scenarios.NewBehaviour("test.pick", "trimmed")}
		},
		Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
	})
}

const rangedBase = "name: t\nalgorithm:\n  kind: rangedtest\n"

func rangedOf(t *testing.T, src string, overrides ...string) *ranged {
	t.Helper()
	return parse(t, rangedBase+src, overrides...).Curves[0].Scenario.Algorithm.Params.(*ranged)
}

// A mapping without a kind sets parameters of the field's default
// behaviour (a --set of one parameter, or a curve's); a kind given by an
// earlier value is kept.
func TestBehaviourWithoutKindKeepsTheDefault(t *testing.T) {
	r := rangedOf(t, "", "algorithm.rangedtest.main.trim=0.3")
	if r.Main.Kind != "trimmed" || r.Main.Params.Float("trim") != 0.3 || r.Main.Params.Int("rounds") != 2 {
		t.Errorf("--set of a default behaviour's parameter: %+v", r.Main)
	}
	r = rangedOf(t, "  rangedtest:\n    main: {rounds: 4}\n")
	if r.Main.Kind != "trimmed" || r.Main.Params.Int("rounds") != 4 || r.Main.Params.Float("trim") != 0.1 {
		t.Errorf("mapping without kind: %+v", r.Main)
	}
	r = rangedOf(t, "  rangedtest:\n    main: plain\n", "algorithm.rangedtest.main.kind=trimmed", "algorithm.rangedtest.main.rounds=3")
	if r.Main.Kind != "trimmed" || r.Main.Params.Int("rounds") != 3 {
		t.Errorf("kind then parameter: %+v", r.Main)
	}
	_, err := scenarios.Parse([]byte(rangedBase+"  rangedtest:\n    main: {kind: plain}\n"), "t.yaml", ".", []string{"algorithm.rangedtest.main.trim=0.2"})
	if want := "algorithm.rangedtest.main.trim: unknown parameter: behaviour plain has none"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a parameter of another behaviour than the file's: %v, want %s", err, want)
	}
}

// A list entry holds its own fields and a behaviour in one mapping: decoded,
// checked at the entry's fields, and written back the same way.
func TestInlineBehaviourInAListEntry(t *testing.T) {
	r := rangedOf(t, "  rangedtest:\n    entries:\n      - {agents: [0, 3], kind: trimmed, trim: 0.25}\n      - {agents: 5, kind: plain}\n")
	if len(r.Entries) != 2 {
		t.Fatalf("entries: %+v", r.Entries)
	}
	e := r.Entries[0]
	if e.Agents != (scenarios.IntRange{Min: 0, Max: 3}) || e.Pick.Kind != "trimmed" || e.Pick.Params.Float("trim") != 0.25 || e.Pick.Params.Int("rounds") != 2 {
		t.Errorf("entry 0: %+v", e)
	}
	if e := r.Entries[1]; e.Agents != (scenarios.IntRange{Min: 5, Max: 5}) || e.Pick.Kind != "plain" {
		t.Errorf("entry 1: %+v", e)
	}
	out, err := yaml.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "- {agents: [0, 3], kind: trimmed, trim: 0.25, rounds: 2}") || !strings.Contains(string(out), "- {agents: [5, 5], kind: plain}") {
		t.Errorf("written back:\n%s", out)
	}
	for _, c := range []struct{ src, want string }{
		{"      - {agents: [0, 3], trim: 0.2}\n", "t.yaml:6: algorithm.rangedtest.entries[0].kind: missing: a behaviour mapping needs its kind (plain, trimmed)"},
		{"      - {agents: [0, 3], kind: trimmed, trim: 0.7}\n", "t.yaml:6: algorithm.rangedtest.entries[0].trim: must lie in [0, 0.5), got 0.7"},
		{"      - {agents: [0, 3], kind: plain, rounds: 2}\n", "t.yaml:6: algorithm.rangedtest.entries[0].rounds: unknown parameter: behaviour plain has none"},
		{"      - {agents: x, kind: plain}\n", "t.yaml:6: algorithm.rangedtest.entries[0].agents: expected an integer or a [min, max] pair of integers"},
		{"      - {agents: 1, agents: 2, kind: plain}\n", "t.yaml:6: algorithm.rangedtest.entries[0].agents: appears twice"},
		{"      - 3\n", "t.yaml:6: algorithm.rangedtest.entries[0]: expected a mapping of agents"},
	} {
		_, err := scenarios.Parse([]byte(rangedBase+"  rangedtest:\n    entries:\n"+c.src), "t.yaml", ".", nil)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: got %v\nwant %s", c.src, err, c.want)
		}
	}
}
