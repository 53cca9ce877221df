package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
)

// A FedProx client's long local run converges to the minimizer of its
// proximal objective J_k(w) + (μ/2)‖w − w0‖², where ∇J_k(w) + μ(w − w0) = 0:
// 3000 full-batch steps of 0.05 on a least-squares J_k (curvature ≥ 2ρ) with
// μ = 1 contract the error by at most 1 − 0.05·1 per step, to 0.95³⁰⁰⁰ ≈
// 10⁻⁶⁷ of its start, so the gradient left is rounding: the 1e-10 bound
// leaves room for the sums of 3000 steps. It ends closer to w0 than plain
// local SGD, which goes all the way to the agent's own minimizer: the drift
// the proximal term limits. With μ = 0 it is local SGD, bit for bit.
func TestFedProxConvergesToItsProximalPoint(t *testing.T) {
	sets, l := regression(t, 1)
	set := sets[0]
	n := set.Len()
	cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.05,
		Epochs: fedavg.Range{Min: 3000, Max: 3000}, Batch: fedavg.Range{Min: n, Max: n}}
	w0 := []float64{1, -2, 0.5}
	train := func(c fedavg.Client) []float64 {
		cfg := cfg
		cfg.Client = c
		a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(1, "agent/0", p) }))
		w := make([]float64, 3)
		a.Respond(w, w0)
		return w
	}
	prox, sgd := train(fedProx{Mu: 1}), train(fedavg.SGD{})
	g := make([]float64, 3)
	l.FullGrad(g, prox, set)
	for j := range g {
		g[j] += 1 * (prox[j] - w0[j])
	}
	if norm := floats.Norm(g, 2); norm > 1e-10 {
		t.Errorf("‖∇J_k + μ(w − w0)‖ = %v at the end of the run, want ≤ 1e-10", norm)
	}
	if d, s := floats.Distance(prox, w0, 2), floats.Distance(sgd, w0, 2); !(d < s) || math.IsNaN(d) {
		t.Errorf("FedProx moved %v from w0, local SGD %v: the proximal term should hold it closer", d, s)
	}
	if zero := train(fedProx{Mu: 0}); !slices.Equal(zero, sgd) {
		t.Errorf("FedProx with μ = 0 gives %v, local SGD %v", zero, sgd)
	}
}
