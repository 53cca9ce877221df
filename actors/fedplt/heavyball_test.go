package fedplt

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/fedplt"
)

// A long heavy-ball run converges to the minimizer of the local problem
// d(w) = f_i(w) + (c/2)‖w‖² + ⟨b, w⟩, where ∇f_i(w) + c·w + b = 0: 2000 steps
// of the default step (1 − β)/(λ̄ + c) on a logistic f_i with c = 1 contract
// the error at least as fast as gradient descent of step γ, by
// 1 − γ(λ̲ + c) ≤ 1 − 0.5/(λ̄ + 1) per step, far below rounding (λ̄ < 3
// here: 0.83²⁰⁰⁰ ≈ 10⁻¹⁶²), so the gradient left is rounding: the 1e-10
// bound leaves room for the sums of 2000 steps. With β = 0 it is gradient
// descent, bit for bit.
func TestHeavyBallConvergesToTheLocalMinimizer(t *testing.T) {
	p, _ := problem(t, 1, 40, 3)
	const c = 1.0
	b := []float64{0.3, -0.2, 0.1}
	run := func(rule fedplt.LocalSolver, gamma float64) []float64 {
		l := fedplt.NewLocal(fedplt.Solver{Name: "test", Rule: rule, Step: gamma}, p.Obj, p.Sets[0], p.Moduli, c, 0, fedplt.SeededStreams(1))
		w := []float64{1, -2, 0.5}
		if n := l.Run(w, c, b, 2000); n != 2000 {
			t.Errorf("%d gradients charged for 2000 steps", n)
		}
		return w
	}
	k := fedplt.Moduli{Low: p.Moduli.Low + c, High: p.Moduli.High + c}
	if k.High >= 4 {
		t.Fatalf("λ̄ + c = %v: the rate above assumes λ̄ < 3", k.High)
	}
	hb := heavyBall{Beta: 0.5}
	w := run(hb, hb.DefaultStep(k))
	g := make([]float64, 3)
	p.Obj.Grad(g, w, p.Sets[0])
	floats.AddScaled(g, c, w)
	floats.Add(g, b)
	if norm := floats.Norm(g, 2); !(norm <= 1e-10) {
		t.Errorf("‖∇d(w)‖ = %v after the run, want ≤ 1e-10", norm)
	}
	gamma := 0.9 / k.High
	if plain, gd := run(heavyBall{}, gamma), run(fedplt.GD{}, gamma); !slices.Equal(plain, gd) {
		t.Errorf("heavy ball with β = 0 gives %v, gradient descent %v", plain, gd)
	}
	if bound, strict := hb.StepBound(k); !strict || math.Abs(bound-2*hb.DefaultStep(k)) > 1e-15*bound {
		t.Errorf("bound %v (strict %v): want twice the default step, excluded", bound, strict)
	}
}

// The gradient-corrected baselines refuse the heavy ball by its declared
// momentum, as they refuse accelerated GD; Fed-PLT and 5GCS run it.
func TestHeavyBallIsRefusedByTheMemorylessMethods(t *testing.T) {
	traits := heavyBall{}.Traits()
	for _, m := range []fedplt.Method{fedplt.PLT, fedplt.FedPD, fedplt.FedLin, fedplt.Tamuna, fedplt.LED, fedplt.FiveGCS} {
		refused := m.Refuses(traits) != ""
		if want := m != fedplt.PLT && m != fedplt.FiveGCS; refused != want {
			t.Errorf("%s refuses the heavy ball: %v, want %v", m.Label(), refused, want)
		}
	}
}
