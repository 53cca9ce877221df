package fedplt

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Zeta returns the contraction factor of the Peaceman–Rachford operator
// (Lemma 3): max{|1 − ρλ̄|/(1 + ρλ̄), |1 − ρλ̲|/(1 + ρλ̲)}.
func Zeta(rho float64, m Moduli) float64 {
	f := func(l float64) float64 { return math.Abs(1-rho*l) / (1 + rho*l) }
	return math.Max(f(m.High), f(m.Low))
}

// ChiGD returns the contraction factor of one GD step of step gamma on the
// local problem d_{i,k}: max{|1 − γ(λ̲ + 1/ρ)|, |1 − γ(λ̄ + 1/ρ)|} (§IV-B).
func ChiGD(gamma, rho float64, m Moduli) float64 {
	return math.Max(math.Abs(1-gamma*(m.Low+1/rho)), math.Abs(1-gamma*(m.High+1/rho)))
}

// ChiAGD returns χ(N_e) of Proposition 3, the contraction factor of N_e
// accelerated steps: (1 + κ)(1 − 1/√κ)^{N_e} with κ = (λ̄ + 1/ρ)/(λ̲ + 1/ρ).
// It can exceed 1 for small N_e (erratum 11).
func ChiAGD(epochs int, rho float64, m Moduli) float64 {
	kappa := (m.High + 1/rho) / (m.Low + 1/rho)
	return (1 + kappa) * math.Pow(1-1/math.Sqrt(kappa), float64(epochs))
}

// SMatrix returns the 2×2 matrix S of Proposition 1,
//
//	[ χ          (1 + χ)/(λ̲ + 1/ρ) ]
//	[ 2χ   ζ + 2χ/(λ̲ + 1/ρ)        ],
//
// with χ the contraction factor of the N_e local steps (χ^{N_e} for GD,
// χ(N_e) for AGD). The coupling 1/(λ̲ + 1/ρ) is printed as in the paper
// (erratum 2: the Lipschitz constant of the prox is 1/(1 + ρλ̲)).
func SMatrix(chiNe, zeta, rho, low float64) *mat.Dense {
	c := 1 / (low + 1/rho)
	return mat.NewDense(2, 2, []float64{chiNe, (1 + chiNe) * c, 2 * chiNe, zeta + 2*chiNe*c})
}

// Theory gathers the convergence quantities of §V for one Fed-PLT set-up.
type Theory struct {
	Zeta   float64 `json:"zeta"`
	ChiNe  float64 `json:"chi_ne"`
	NormS  float64 `json:"norm_s"`
	Radius float64 `json:"spectral_radius"`
	// Sigma is σ = √(1 − p̲ + p̲‖S‖²) of Proposition 2 and Scale = √(p̄/p̲).
	Sigma float64 `json:"sigma"`
	Scale float64 `json:"scale"`
	// Nu is the noise term ν of Corollary 1 (0 for exact local solvers).
	Nu float64 `json:"nu"`
	// Informative is ‖S‖ < 1: only then is the bound of Proposition 2 a
	// bound (spectral radius < 1 is not enough, erratum 3).
	Informative bool `json:"informative"`
}

// Analyze returns the theory of Fed-PLT for the local solver every agent
// runs, when it is a Contractor (GD, noisy GD or AGD; ok is false for SGD,
// which the paper bounds only through an unspecified ν, for
// non-strongly-convex problems, and for
// per-agent solvers, whose worst agent the formulas below do not track).
// Participation enters through p̲ and p̄: Bernoulli bounds, the marginal
// Active/N for a fixed-size subset (which the theory does not formally
// cover), 1 for full participation.
func Analyze(cfg *Config, m Moduli, dim int) (Theory, bool) {
	s := cfg.Solvers[0]
	contractor, ok := s.Rule.(Contractor)
	if m.Low <= 0 || !ok || slices.ContainsFunc(cfg.Solvers, func(o Solver) bool { return o != s }) {
		return Theory{}, false
	}
	t := Theory{Zeta: Zeta(cfg.Rho, m)}
	var chi float64
	t.ChiNe, chi = contractor.Contraction(s.Step, cfg.Epochs, cfg.Rho, m)
	S := SMatrix(t.ChiNe, t.Zeta, cfg.Rho, m.Low)
	// ‖S‖₂ is the largest singular value (mat.Norm(S, 2) would be the
	// Frobenius norm).
	var svd mat.SVD
	if svd.Factorize(S, mat.SVDNone) {
		t.NormS = svd.Values(nil)[0]
	} else {
		t.NormS = math.Inf(1)
	}
	var eig mat.Eigen
	if eig.Factorize(S, mat.EigenNone) {
		for _, v := range eig.Values(nil) {
			t.Radius = math.Max(t.Radius, math.Hypot(real(v), imag(v)))
		}
	}
	pMin, pMax := 1.0, 1.0
	switch p := cfg.Participation; p.Kind {
	case Bernoulli:
		pMin, pMax = p.ProbMin, p.ProbMax
	case Subset:
		pMin = float64(p.Active) / float64(cfg.Agents)
		pMax = pMin
	}
	t.Sigma = math.Sqrt(1 - pMin + pMin*t.NormS*t.NormS)
	t.Scale = math.Sqrt(pMax / pMin)
	if tau := s.Rule.Traits().Noise; tau > 0 && chi < 1 {
		// ν ≤ √5·τ√(2nNγ)·(1 − χ^{N_e})/(1 − χ) (App. C-B).
		t.Nu = math.Sqrt(5) * tau * math.Sqrt(2*float64(dim*cfg.Agents)*s.Step) *
			(1 - t.ChiNe) / (1 - chi)
	}
	t.Informative = t.NormS < 1
	return t, true
}

// Bound returns Proposition 2's bound on E‖[x_k − x̄; z_k − z̄]‖ after k
// rounds from the initial error e0: √(p̄/p̲)(σ^k e0 + (1 − σ^k)/(1 − σ)·ν).
func (t Theory) Bound(k int, e0 float64) float64 {
	sk := math.Pow(t.Sigma, float64(k))
	b := sk * e0
	if t.Nu > 0 {
		b += (1 - sk) / (1 - t.Sigma) * t.Nu
	}
	return t.Scale * b
}
