package all

import (
	"math"
	"testing"

	"maple/algorithms/loss"
	"maple/scenarios"
	"maple/scenarios/run"
)

// The estimates size the model by the loss's parameter vector, not by the
// features: a message carries loss.Dim(M) coordinates, and a FedAvg run's
// operations, linear in the model dimension, scale exactly with it as the
// classes or hidden units grow.
func TestEstimatesUseTheModelDimension(t *testing.T) {
	const src = `name: blobs
data: {kind: blobs, agents: 4, samples: 20, dim: 50}
algorithm: {kind: fedavg, step_size: 0.1}
`
	cases := []struct {
		overrides []string
		model     loss.Loss
	}{
		{[]string{"loss.classes=2"}, loss.Loss{Kind: loss.Softmax, Classes: 2}},
		{[]string{"loss.classes=20"}, loss.Loss{Kind: loss.Softmax, Classes: 20}},
		{[]string{"loss.kind=mlp", "loss.classes=3", "loss.hidden=10"}, loss.Loss{Kind: loss.MLP, Classes: 3, Hidden: 10}},
		{[]string{"loss.kind=mlp", "loss.classes=3", "loss.hidden=100"}, loss.Loss{Kind: loss.MLP, Classes: 3, Hidden: 100}},
	}
	ops := make([]float64, len(cases))
	for i, c := range cases {
		e := curveEstimate(t, plan(t, src, c.overrides...))
		if want := float64(c.model.Dim(50)); e.VectorLen != want {
			t.Errorf("%v: messages carry %v coordinates, want the model's %v", c.overrides, e.VectorLen, want)
		}
		ops[i] = e.Ops
	}
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		a, b := cases[pair[0]], cases[pair[1]]
		want := float64(b.model.Dim(50)) / float64(a.model.Dim(50))
		if got := ops[pair[1]] / ops[pair[0]]; math.Abs(got/want-1) > 1e-12 {
			t.Errorf("%v → %v: operations grow %v×, want the model dimension's %v×", a.overrides, b.overrides, got, want)
		}
	}
}

// curveEstimate returns the estimate of one run of the first curve of p, as
// the checks before running see it.
func curveEstimate(t *testing.T, p *scenarios.Plan) run.Estimate {
	t.Helper()
	return run.EstimatePlan(p, run.Options{}).Curves[0]
}
