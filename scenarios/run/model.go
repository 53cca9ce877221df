package run

import (
	"strings"

	"gonum.org/v1/gonum/floats"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// The metrics of one model w that every family reports the same way. A
// family lists them with MSDColumns and ClassColumns in its Columns and
// fills them with MSD and inputs.Problem.Classify, so a new family gets
// accuracy and cross-entropy for classification, and the right behaviour
// without an optimum, for free.

// hasOptimum reports whether the curve solves for w^o: MSD columns exist only
// then (loss.optimum none skips the solve; the MLP has no unique minimizer).
func hasOptimum(sc *scenarios.Scenario) bool { return sc.Loss.Optimum != "none" }

// classifies reports whether the curve's model classifies (±1 or class
// labels) and so is evaluated on the test set.
func classifies(sc *scenarios.Scenario) bool { return sc.Loss.Kind != "least-squares" }

// MSDColumns returns the given MSD columns if the curve has an optimum, and
// none otherwise.
func MSDColumns(sc *scenarios.Scenario, cols ...rundir.Column) []rundir.Column {
	if !hasOptimum(sc) {
		return nil
	}
	return cols
}

// ClassMetrics is the number of columns ClassColumns adds for a classifier:
// one per metric of inputs.Problem.Classify.
const ClassMetrics = inputs.ClassMetrics

// ClassColumns returns the classification metrics of one model — test
// error, accuracy and cross-entropy on the test set — with suffix appended
// to their names and of to their plot labels ("" and "" for a family's
// single model), or none when the model does not classify.
func ClassColumns(sc *scenarios.Scenario, suffix, of string) []rundir.Column {
	if !classifies(sc) {
		return nil
	}
	return []rundir.Column{
		{Name: "test_error" + suffix, Label: "test error" + of},
		{Name: "accuracy" + suffix, Label: "test accuracy" + of},
		{Name: "cross_entropy" + suffix, Label: "test cross-entropy" + of},
	}
}

// checkOptimum refuses a curve without an optimum whose family still lists
// an MSD column (one not built with MSDColumns): there is no w^o to measure
// it against.
func checkOptimum(c *scenarios.CurveSpec) error {
	sc := c.Scenario
	if hasOptimum(sc) {
		return nil
	}
	for _, col := range Columns(sc) {
		if strings.HasPrefix(col.Name, "msd") {
			why := "loss.optimum is none"
			if sc.Loss.Kind == "mlp" || sc.Loss.Kind == "cnn" {
				why = "the " + sc.Loss.Kind + " loss has no unique minimizer"
			}
			return c.Errorf("loss.optimum", "algorithm %s reports %s against the optimum w^o, but %s", sc.Algorithm.Kind, col.Name, why)
		}
	}
	return nil
}

// MSD returns ‖w − w^o‖².
func MSD(w, wOpt []float64) float64 {
	d := floats.Distance(w, wOpt, 2)
	return d * d
}
