package fedplt

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/internal/params"
)

// The paper's local solvers (§IV-A), which actors/fedplt registers as gd,
// agd, sgd and noisy-gd.

// GD is gradient descent (eq. 11): w ← w − γ∇d(w).
type GD struct {
	StepSize `yaml:",inline"`
}

// Traits implements LocalSolver: GD has no momentum and adds no noise.
func (GD) Traits() Traits { return Traits{} }

// DefaultStep implements LocalSolver: the step 2/(λ̲ + λ̄ + 2c) that
// minimizes the contraction factor χ of gradient descent (γ⋆ of §IV-B, with
// c = 1/ρ), or 1/(λ̄ + c) when the problem is not strongly convex.
func (GD) DefaultStep(k Moduli) float64 { return gradientStep(k) }

// StepBound implements LocalSolver: γ < 2/(λ̄ + c), the corrected bound of
// erratum 1.
func (GD) StepBound(k Moduli) (float64, bool) { return 2 / k.High, true }

// Contraction implements Contractor: χ^{N_e} with χ of ChiGD.
func (GD) Contraction(gamma float64, steps int, rho float64, m Moduli) (float64, float64) {
	return gdContraction(gamma, steps, rho, m)
}

// Run implements LocalSolver.
func (GD) Run(p *LocalProblem, w []float64, gamma float64, steps int) int {
	g := p.Scratch(0)
	for range steps {
		p.Grad(g, w)
		floats.AddScaled(w, -gamma, g)
	}
	return steps
}

// AGD is Nesterov's accelerated gradient descent (eq. 12): u^0 = w^0,
// u^{ℓ+1} = w^ℓ − γ∇d(w^ℓ), w^{ℓ+1} = u^{ℓ+1} + β(u^{ℓ+1} − u^ℓ) with
// β = (√(λ̄ + c) − √(λ̲ + c))/(√(λ̄ + c) + √(λ̲ + c)).
type AGD struct {
	StepSize `yaml:",inline"`
}

// Traits implements LocalSolver: AGD carries momentum.
func (AGD) Traits() Traits { return Traits{Momentum: true} }

// DefaultStep implements LocalSolver: 1/(λ̄ + c).
func (AGD) DefaultStep(k Moduli) float64 { return 1 / k.High }

// StepBound implements LocalSolver: γ ≤ 1/(λ̄ + c).
func (AGD) StepBound(k Moduli) (float64, bool) { return 1 / k.High, false }

// Check implements Checker: the momentum β needs a strongly convex local
// problem.
func (AGD) Check(k Moduli, _ int) error {
	if k.Low <= 0 {
		return params.Errorf("kind", "accelerated GD needs a strongly convex local problem, but its curvature is only bounded below by %.6g", k.Low)
	}
	return nil
}

// Contraction implements Contractor: χ(N_e) of Proposition 3, and χ of
// one GD step of the same size.
func (AGD) Contraction(gamma float64, steps int, rho float64, m Moduli) (float64, float64) {
	return ChiAGD(steps, rho, m), ChiGD(gamma, rho, m)
}

// Run implements LocalSolver.
func (AGD) Run(p *LocalProblem, w []float64, gamma float64, steps int) int {
	g, u, uPrev := p.Scratch(0), p.Scratch(1), p.Scratch(2)
	hi, lo := math.Sqrt(p.Curvature.High), math.Sqrt(p.Curvature.Low)
	beta := (hi - lo) / (hi + lo)
	copy(uPrev, w)
	for range steps {
		p.Grad(g, w)
		for j := range w {
			u[j] = w[j] - gamma*g[j]
			w[j] = u[j] + beta*(u[j]-uPrev[j])
		}
		copy(uPrev, u)
	}
	return steps
}

// SGD is mini-batch stochastic gradient descent: every step draws a new
// mini-batch without replacement from the agent's "batch" stream.
type SGD struct {
	StepSize `yaml:",inline"`
	Batch    int `yaml:"batch" range:"[1, inf)" doc:"mini-batch size, at most the agent's q_i samples"`
}

// Traits implements LocalSolver: SGD has no momentum and adds no noise of
// its own.
func (SGD) Traits() Traits { return Traits{} }

// DefaultStep implements LocalSolver: GD's.
func (SGD) DefaultStep(k Moduli) float64 { return gradientStep(k) }

// StepBound implements LocalSolver: GD's.
func (SGD) StepBound(k Moduli) (float64, bool) { return 2 / k.High, true }

// Check implements Checker: the batch fits in the agent's data.
func (s SGD) Check(_ Moduli, samples int) error {
	if s.Batch > samples {
		return params.Errorf("batch", "batch of %d samples, but the agent holds only %d", s.Batch, samples)
	}
	return nil
}

// Run implements LocalSolver.
func (s SGD) Run(p *LocalProblem, w []float64, gamma float64, steps int) int {
	g, r := p.Scratch(0), p.Rand("batch")
	for range steps {
		p.BatchGrad(g, w, s.Batch, r)
		floats.AddScaled(w, -gamma, g)
	}
	return steps
}

// NoisyGD is gradient descent with Gaussian noise √(2γ)·τ·N(0, I) added at
// every step (eq. 13) from the agent's "noise" stream, the privacy mechanism
// of Fed-PLT, optionally with every per-sample gradient of the data term
// clipped to norm L/2.
type NoisyGD struct {
	StepSize `yaml:",inline"`
	Noise    float64 `yaml:"noise" range:"[0, inf)" doc:"τ: the standard deviation of the noise added at every step is √(2γ)·τ"`
	Clip     float64 `yaml:"clip" range:"[0, inf)" doc:"L: every per-sample gradient of the data term is clipped to norm L/2 (0: no clipping)"`
}

// Traits implements LocalSolver: noisy GD is the privacy mechanism.
func (s NoisyGD) Traits() Traits { return Traits{Private: true, Noise: s.Noise, Clip: s.Clip} }

// DefaultStep implements LocalSolver: GD's.
func (NoisyGD) DefaultStep(k Moduli) float64 { return gradientStep(k) }

// StepBound implements LocalSolver: GD's.
func (NoisyGD) StepBound(k Moduli) (float64, bool) { return 2 / k.High, true }

// Contraction implements Contractor: GD's.
func (NoisyGD) Contraction(gamma float64, steps int, rho float64, m Moduli) (float64, float64) {
	return gdContraction(gamma, steps, rho, m)
}

// Run implements LocalSolver.
func (s NoisyGD) Run(p *LocalProblem, w []float64, gamma float64, steps int) int {
	g := p.Scratch(0)
	sd := math.Sqrt(2*gamma) * s.Noise
	var r *rand.Rand
	if sd > 0 {
		r = p.Rand("noise")
	}
	for range steps {
		if s.Clip > 0 {
			p.ClippedGrad(g, w, s.Clip/2, p.Scratch(1))
		} else {
			p.Grad(g, w)
		}
		floats.AddScaled(w, -gamma, g)
		if sd > 0 {
			for j := range w {
				w[j] += sd * r.NormFloat64()
			}
		}
	}
	return steps
}

// gradientStep is the default step of the gradient methods on a local
// problem of curvature in k: 2/(λ̲ + λ̄ + 2c), or 1/(λ̄ + c) when the problem
// is not strongly convex.
func gradientStep(k Moduli) float64 {
	if k.Low <= 0 {
		return 1 / k.High
	}
	return 2 / (k.Low + k.High)
}

// gdContraction returns χ^steps and χ of ChiGD.
func gdContraction(gamma float64, steps int, rho float64, m Moduli) (float64, float64) {
	chi := ChiGD(gamma, rho, m)
	return math.Pow(chi, float64(steps)), chi
}
