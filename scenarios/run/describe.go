package run

import (
	"context"
	"fmt"

	"gopkg.in/yaml.v3"

	"maple/algorithms/data"
	"maple/algorithms/rng"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// DataReport describes the data of one run of one or more curves that share
// them, without running anything: what `maple data` prints.
type DataReport struct {
	// Curves are the labels of the curves with these data.
	Curves []string `json:"curves"`
	// Kind is data.kind and Partition data.partition.kind ("" if none).
	Kind      string `json:"kind"`
	Partition string `json:"partition,omitempty"`
	// Seed is the data seed of the run described.
	Seed uint64 `json:"seed"`
	// Features is the feature dimension M and Parameters the length of the
	// model vector.
	Features   int `json:"features"`
	Parameters int `json:"parameters"`
	// Summary spreads the samples and classes over the agents.
	Summary data.PartitionSummary `json:"summary"`
}

// DescribeData builds the data of run r of every curve of the plan (once per
// distinct data and loss sections) and reports how they are dealt out. It
// reads and draws exactly what `maple run` would, but solves nothing. Before
// it builds anything it refuses, as scenario errors, a curve whose family
// learns from no data (Family.NoData) and a plan that the checks of `maple
// run` refuse (CheckWith: its estimated memory, a data file that is not
// there). A run r the plan does not have is the caller's to refuse
// (PlanRuns).
func DescribeData(plan *scenarios.Plan, r int) ([]DataReport, error) {
	for _, c := range plan.Curves {
		if why := familyOf(c.Scenario).NoData; why != "" {
			return nil, c.Errorf("algorithm.kind", "maple data has nothing to show: %s", why)
		}
	}
	if err := CheckWith(plan, Options{Workers: 1}); err != nil {
		return nil, err
	}
	var reports []DataReport
	seen := map[string]int{}
	for _, c := range plan.Curves {
		sc := c.Scenario
		spec, err := yaml.Marshal(struct {
			Data scenarios.Data
			Loss scenarios.Loss
		}{sc.Data, sc.Loss})
		if err != nil {
			return nil, err
		}
		seed := rng.RunSeed(sc.Seed, r)
		if sc.Data.Regenerate == "once" {
			seed = rng.RunSeed(sc.Seed, 0)
		}
		key := fmt.Sprintf("%d\x00%s", seed, spec)
		if i, ok := seen[key]; ok {
			reports[i].Curves = append(reports[i].Curves, c.Label)
			continue
		}
		p, err := inputs.BuildData(context.Background(), c, plan.Dir, seed)
		if err != nil {
			return nil, err
		}
		dim := p.Data.Set(0).Dim
		rep := DataReport{
			Curves: []string{c.Label}, Kind: sc.Data.Kind, Seed: seed,
			Features: dim, Parameters: p.Loss.Dim(dim), Summary: p.PartitionSummary(),
		}
		if sc.Data.Partition != nil {
			rep.Partition = sc.Data.Partition.Kind
		}
		seen[key] = len(reports)
		reports = append(reports, rep)
	}
	return reports, nil
}

// PlanRuns returns the fewest Monte-Carlo runs a curve of the plan has, and
// that curve's label: the runs 0 … n−1 exist for every curve.
func PlanRuns(plan *scenarios.Plan) (n int, label string) {
	for i, c := range plan.Curves {
		if i == 0 || c.Scenario.Runs < n {
			n, label = c.Scenario.Runs, c.Label
		}
	}
	return n, label
}
