package fedplt

import "maple/algorithms/fedplt"

// The heavy-ball method (Polyak 1964) as a Fed-PLT local solver: gradient
// descent plus a multiple β of the last step, w ← w − γ∇d(w) + β(w − w_prev),
// a momentum method cheaper than Nesterov's (one gradient per step, no
// extrapolated point).

func init() {
	Solvers.Register("heavy-ball", "the heavy-ball method (Polyak 1964): GD plus beta times the last step", heavyBall{StepSize: fedplt.StepSize{Scale: 1}, Beta: 0.3})
}

// heavyBall is the solver's parameters, and its rule.
type heavyBall struct {
	fedplt.StepSize `yaml:",inline"`
	Beta            float64 `yaml:"beta" range:"[0, 1)" doc:"momentum β: the multiple of the last step added to every step (0: gradient descent)"`
}

// Traits implements fedplt.LocalSolver: the steps carry momentum, which
// the gradient-corrected baselines refuse.
func (heavyBall) Traits() fedplt.Traits { return fedplt.Traits{Momentum: true} }

// DefaultStep implements fedplt.LocalSolver: half the bound, (1 − β)/(λ̄ + c).
func (h heavyBall) DefaultStep(k fedplt.Moduli) float64 { return (1 - h.Beta) / k.High }

// StepBound implements fedplt.LocalSolver: γ < 2(1 − β)/(λ̄ + c), where
// the heavy-ball method converges on every smooth convex problem (Ghadimi,
// Feyzmahdavian and Johansson, ECC 2015); a quadratic alone would allow up
// to 2(1 + β)/(λ̄ + c).
func (h heavyBall) StepBound(k fedplt.Moduli) (float64, bool) { return 2 * (1 - h.Beta) / k.High, true }

// Run implements fedplt.LocalSolver. Every round starts without momentum
// (w_prev = w): the solver keeps nothing between rounds.
func (h heavyBall) Run(p *fedplt.LocalProblem, w []float64, gamma float64, steps int) int {
	g, prev := p.Scratch(0), p.Scratch(1)
	copy(prev, w)
	for range steps {
		p.Grad(g, w)
		for j := range w {
			next := w[j] - gamma*g[j] + h.Beta*(w[j]-prev[j])
			prev[j], w[j] = w[j], next
		}
	}
	return steps
}
