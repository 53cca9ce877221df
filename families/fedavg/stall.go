package fedavg

import (
	"fmt"
	"strings"

	"maple/algorithms/fedavg"
	"maple/scenarios"
)

// A run whose model never moves looks like a result: a flat curve at the
// initial value, which nothing flags — no NaN, no overflow, nothing
// clipped. Updates vanish so when μ·g underflows (a step size of 10⁻³⁰⁰),
// when DP's clip scales every update to nothing (privacy.dp.clip 10⁻³⁰⁰),
// or when a secure-aggregation grid is coarser than all of them. The
// observer sees it from the metrics alone, whatever the cause.

// stallWarning returns the warning of a run whose model never visibly
// moved — its MSD or, without w^o, its test cross-entropy took its
// initial value, bit for bit, at every recorded iteration — naming the
// fields that can make the updates vanish; "" otherwise.
func (o *fedavgObserver) stallWarning(sc *scenarios.Scenario, cfg *fedavg.Config) string {
	col, what := 0, "MSD"
	switch {
	case o.p.WOpt != nil:
	case o.p.Test != nil && o.p.Loss.Classification():
		col, what = 2, "test cross-entropy" // after the test error and the accuracy (Problem.Classify)
	default:
		return ""
	}
	rows := len(o.t.Iterations)
	if rows < 2 || o.t.Iterations[rows-1] == 0 {
		return ""
	}
	first := o.t.Get(0, col)
	for r := 1; r < rows; r++ {
		if o.t.Get(r, col) != first {
			return ""
		}
	}
	causes := []string{fmt.Sprintf("algorithm.step_size = %v (a step so small that μ·g underflows)", sc.Algorithm.StepSize)}
	if cfg.DP.Mode != fedavg.NoDP {
		causes = append(causes, fmt.Sprintf("privacy.dp.clip = %v (a clip that scales every update to nothing)", cfg.DP.Clip))
	}
	if cfg.SecAgg != nil {
		causes = append(causes, fmt.Sprintf("privacy.secure_aggregation bits %d and clip %v (a grid coarser than every update)", cfg.SecAgg.Bits, cfg.SecAgg.Clip))
	}
	return fmt.Sprintf("the model never moved: its %s kept its initial value %v at every recorded iteration up to %d, so every update vanished on its way; check %s",
		what, first, o.t.Iterations[rows-1], strings.Join(causes, "; "))
}
