package all

import (
	"io/fs"
	"testing"

	"gopkg.in/yaml.v3"

	"maple/scenarios"
	"maple/scenarios/run"
)

// A run directory's scenario.yaml loads again as the plan it was written
// from: every bundled scenario's resolved copy (with an override, so that
// the copy carries its comment too: four runs, the fewest a many-run audit
// accepts) gives the same curves, each with the same resolved scenario. Until now the copy wrote the fields a family
// refuses as not applying (Fed-PLT's algorithm.step_size, the Gamma
// mechanism's data section, the random walks' privacy.mechanism, …) and
// seven bundled scenarios' copies were refused.
func TestResolvedScenarioLoadsAsTheSamePlan(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(scenarios.Bundled(), "*/*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("bundled scenarios: %v, %v", names, err)
	}
	for _, name := range names {
		plan, err := scenarios.LoadBundled(name, []string{"runs=4"})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		text, err := run.ResolvedScenario(plan)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		again, err := scenarios.Parse(text, "scenario.yaml", plan.Dir, nil)
		if err != nil {
			t.Errorf("%s: the resolved copy does not load: %v", name, err)
			continue
		}
		if len(again.Curves) != len(plan.Curves) {
			t.Errorf("%s: %d curves, the copy %d", name, len(plan.Curves), len(again.Curves))
			continue
		}
		for i, c := range plan.Curves {
			want, _ := yaml.Marshal(c.Scenario)
			got, _ := yaml.Marshal(again.Curves[i].Scenario)
			if c.Label != again.Curves[i].Label || string(got) != string(want) {
				t.Errorf("%s: curve %d is %q\n%s\nthe copy's %q\n%s", name, i, c.Label, want, again.Curves[i].Label, got)
				break
			}
		}
	}
}
