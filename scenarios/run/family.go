package run

import (
	"maple/scenarios"
)

// Check reports the problems of a plan that only the algorithm families can
// see — an unregistered behaviour, a topology that cannot be built — as
// scenario errors, without running anything.
func Check(plan *scenarios.Plan) error {
	for _, c := range plan.Curves {
		if err := checkFamily(c, plan.Dir); err != nil {
			return err
		}
	}
	return nil
}

// checkFamily checks what only the algorithm family can: names of registered
// behaviours, whether a topology can be built, and so on.
func checkFamily(c *scenarios.CurveSpec, dir string) error {
	switch c.Scenario.Algorithm.Kind {
	case "fedavg":
		_, err := fedavgConfig(c)
		return err
	case "diffusion":
		return checkDiffusion(c, dir)
	}
	return c.Errorf("algorithm.kind", "unknown algorithm %q", c.Scenario.Algorithm.Kind)
}

// columns returns the metrics a curve's runs produce.
func columns(sc *scenarios.Scenario) []Column {
	classification := sc.Data.Kind != "regression"
	switch sc.Algorithm.Kind {
	case "fedavg":
		cols := []Column{{Name: "msd", Decibel: true, Label: "MSD ‖w_i − w^o‖² (dB)"}}
		if classification {
			cols = append(cols, Column{Name: "test_error", Label: "test error"})
		}
		return cols
	case "diffusion":
		return diffusionColumns(classification)
	}
	return nil
}

// runFamily executes one run of the job's algorithm, filling j.table.
func runFamily(j *job, p *problem, sink *traceSink) error {
	switch j.curve.Scenario.Algorithm.Kind {
	case "fedavg":
		return runFedAvg(j, p, sink)
	case "diffusion":
		return runDiffusion(j, p, sink)
	}
	return j.curve.Errorf("algorithm.kind", "unknown algorithm %q", j.curve.Scenario.Algorithm.Kind)
}
