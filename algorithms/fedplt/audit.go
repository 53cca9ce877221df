package fedplt

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// FinalAudit is the likelihood-ratio auditor of Fed-PLT's final local models
// under noisy GD, for a quadratic cost (least squares), full participation
// and h = 0, where the whole run is an affine recursion driven by Gaussian
// noise and the final models are exactly Gaussian.
//
// The state s_k = [x_{1,k}; …; x_{N,k}; z_{1,k}; …; z_{N,k}] moves in a round
// as follows. With ∇f_i(w) = H_i w − g_i, P_i = I − γ_i(H_i + I/ρ) the local
// step's linear part, A_i = P_i^{N_e} and S_i = Σ_{l<N_e} P_i^l, agent i's
// N_e noisy steps on f_i(w) + ‖w − v_i‖²/(2ρ), v_i = 2y − z_i, y = (1/N)Σ_j z_j,
// give
//
//	x_i′ = A_i x_i + γ_i S_i (g_i + v_i/ρ) + e_i,   e_i ~ N(0, C_i),  C_i = 2γ_iτ_i² Σ_{l<N_e} P_i^{2l},
//	z_i′ = z_i + 2(x_i′ − y),
//
// so s_{k+1} = M s_k + c + E e_k, and the initial state of Proposition 4
// (x_{i,0} = z_{i,0} ~ N(0, 2τ_i²/λ̲·I)) is Gaussian. A canary that changes
// one label of agent 0, b → b′, changes g_0 by Δg = (2/q)a(b′ − b) and
// nothing else (H_0 does not depend on the labels): the two neighbouring
// runs differ only in the constant, by Δc = [γ_0 S_0 Δg in x_0; 2γ_0 S_0 Δg in
// z_0]. After k rounds the final models x_k are Gaussian with the same
// covariance Σ_k under both datasets (Σ_{k+1} = M Σ_k Mᵀ + Q) and means that
// differ by μ_k (μ_{k+1} = M μ_k + Δc, μ_0 = 0). The log-likelihood ratio of
// an observed x is then the linear discriminant
//
//	ln p_D(x)/p_D′(x) = μ_kᵀ Σ_k⁻¹ (x − m_k) − ½ μ_kᵀ Σ_k⁻¹ μ_k,
//
// with m_k the mean without the canary: N(−½μ², μ²) without the canary and
// N(½μ², μ²) with it, μ² = μ_kᵀ Σ_k⁻¹ μ_k. The final models are therefore
// exactly μ-GDP for this pair: their tight (ε, δ) is the Gaussian
// mechanism's of sensitivity μ, and twice the KL divergence is μ².
//
// H_i and g_i are read off the objective's own gradient (∇f_i(0) and
// ∇f_i(e_j)), so the recursion is the one the agents run.
type FinalAudit struct {
	n, agents int
	m         *mat.Dense    // M, 2nN × 2nN
	c, dc     *mat.VecDense // c without the canary, and Δc
	q         *mat.Dense    // Q, the covariance of E e_k

	round           int
	mean, diff      *mat.VecDense // m_k and μ_k, of the whole state
	cov             *mat.Dense    // Σ_k, of the whole state
	weights, center []float64     // Σ⁻¹μ and m of the final models, at the round
	mu2             float64
	tmp             *mat.Dense
}

// ErrNotAffine is wrapped by NewFinalAudit's errors: the run is not the
// affine Gaussian recursion the auditor computes exactly.
var ErrNotAffine = errors.New("the final models are not exactly Gaussian")

// NewFinalAudit returns the auditor of a run of cfg (resolved: every agent's
// step set) on the problem out, the datasets without the canary, against the
// same problem with agent 0's dataset replaced by canary (one label
// changed). It returns an error wrapping ErrNotAffine when the run is not an
// affine Gaussian recursion: a loss other than least squares, the
// non-convex regularizer, h ≠ 0, partial participation, a method other than
// Fed-PLT, or an agent whose solver is not noisy GD with noise and without
// clipping; and an error when the canary changes more than agent 0's labels.
func NewFinalAudit(cfg *Config, out *Problem, canary *data.Set) (*FinalAudit, error) {
	switch {
	case cfg.Method != PLT:
		return nil, fmt.Errorf("%w: method %s is not Fed-PLT", ErrNotAffine, cfg.Method)
	case out.Obj.Loss.Kind != loss.LeastSquares || out.Obj.Nonconvex != 0:
		return nil, fmt.Errorf("%w: the cost is not quadratic (least squares without the non-convex regularizer)", ErrNotAffine)
	case cfg.Prox.Kind != Zero:
		return nil, fmt.Errorf("%w: h is not 0", ErrNotAffine)
	case cfg.Participation.Kind != Full:
		return nil, fmt.Errorf("%w: participation is not full", ErrNotAffine)
	case cfg.Init != PriorInit:
		return nil, fmt.Errorf("%w: Proposition 4's initial models N(0, 2τ²/λ̲·I) are not drawn (init prior)", ErrNotAffine)
	}
	for i, s := range cfg.Solvers {
		if t := s.Rule.Traits(); !t.Private || t.Noise <= 0 || t.Clip != 0 || t.Momentum {
			return nil, fmt.Errorf("%w: agent %d's solver %s is not noisy GD with noise and without clipping", ErrNotAffine, i, s.Name)
		}
	}
	n, N := out.Dim(), cfg.Agents
	dim := 2 * n * N
	a := &FinalAudit{n: n, agents: N, m: mat.NewDense(dim, dim, nil), c: mat.NewVecDense(dim, nil),
		dc: mat.NewVecDense(dim, nil), q: mat.NewDense(dim, dim, nil),
		mean: mat.NewVecDense(dim, nil), diff: mat.NewVecDense(dim, nil), cov: mat.NewDense(dim, dim, nil),
		weights: make([]float64, n*N), center: make([]float64, n*N), tmp: mat.NewDense(dim, dim, nil)}
	rho := cfg.Rho
	eye := identity(n)
	for i := range N {
		h, g := quadratic(out.Obj, out.Sets[i], n)
		gamma, tau := cfg.Solvers[i].Step, cfg.Solvers[i].Rule.Traits().Noise
		p := mat.NewDense(n, n, nil)
		p.Add(h, scaled(1/rho, eye))
		p.Scale(-gamma, p)
		p.Add(eye, p)
		pow, sum, noise := identity(n), mat.NewDense(n, n, nil), mat.NewDense(n, n, nil)
		var sq mat.Dense
		for range cfg.Epochs {
			sum.Add(sum, pow)
			sq.Mul(pow, pow.T())
			noise.Add(noise, &sq)
			pow.Mul(pow, p)
		}
		noise.Scale(2*gamma*tau*tau, noise)
		xi, zi := i*n, (N+i)*n
		var b mat.Dense // γ S_i/ρ
		b.Scale(gamma/rho, sum)
		a.setBlock(a.m, xi, xi, 1, pow)
		a.setBlock(a.m, zi, xi, 2, pow)
		for j := range N {
			coef := 2 / float64(N)
			if i == j {
				coef--
			}
			zj := (N + j) * n
			a.setBlock(a.m, xi, zj, coef, &b)
			a.setBlock(a.m, zi, zj, 2*coef, &b)
			a.addBlock(a.m, zi, zj, -2/float64(N), eye)
			if i == j {
				a.addBlock(a.m, zi, zj, 1, eye)
			}
		}
		var sg mat.VecDense // γ S_i g_i
		sg.MulVec(sum, g)
		sg.ScaleVec(gamma, &sg)
		for r := range n {
			a.c.SetVec(xi+r, sg.AtVec(r))
			a.c.SetVec(zi+r, 2*sg.AtVec(r))
		}
		a.setBlock(a.q, xi, xi, 1, noise)
		a.setBlock(a.q, xi, zi, 2, noise)
		a.setBlock(a.q, zi, xi, 2, noise)
		a.setBlock(a.q, zi, zi, 4, noise)
		// The prior: x_{i,0} = z_{i,0} ~ N(0, s²I), s = τ_i√(2/λ̲).
		s2 := 2 * tau * tau / out.Moduli.Low
		for _, r := range []int{xi, zi} {
			for _, c := range []int{xi, zi} {
				a.setBlock(a.cov, r, c, s2, eye)
			}
		}
		if i == 0 {
			hc, gc := quadratic(out.Obj, canary, n)
			// H read off two gradients that differ in the labels: equal
			// up to the rounding of the differences of the gradients.
			if !mat.EqualApprox(hc, h, 1e-9*(1+mat.Norm(h, math.Inf(1)))+1e-9*(1+mat.Norm(g, math.Inf(1)))) {
				return nil, errors.New("the canary changes agent 0's features, not only a label: the two runs' covariances differ")
			}
			var dg, sd mat.VecDense
			dg.SubVec(gc, g)
			sd.MulVec(sum, &dg)
			sd.ScaleVec(gamma, &sd)
			for r := range n {
				a.dc.SetVec(xi+r, sd.AtVec(r))
				a.dc.SetVec(zi+r, 2*sd.AtVec(r))
			}
		}
	}
	return a, nil
}

// quadratic returns H and g of ∇f(w) = Hw − g on the set, from the
// objective's gradient at 0 and at the unit vectors.
func quadratic(obj Objective, s *data.Set, n int) (*mat.Dense, *mat.VecDense) {
	zero, grad0, grad, e := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	obj.Grad(grad0, zero, s)
	h := mat.NewDense(n, n, nil)
	for j := range n {
		clear(e)
		e[j] = 1
		obj.Grad(grad, e, s)
		floats.Sub(grad, grad0)
		h.SetCol(j, grad)
	}
	floats.Scale(-1, grad0)
	return h, mat.NewVecDense(n, grad0)
}

func identity(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

func scaled(f float64, m mat.Matrix) *mat.Dense {
	var out mat.Dense
	out.Scale(f, m)
	return &out
}

// setBlock sets the n×n block of dst at (r, c) to f·b, and addBlock adds it.
func (a *FinalAudit) setBlock(dst *mat.Dense, r, c int, f float64, b mat.Matrix) {
	for i := range a.n {
		for j := range a.n {
			dst.Set(r+i, c+j, f*b.At(i, j))
		}
	}
}

func (a *FinalAudit) addBlock(dst *mat.Dense, r, c int, f float64, b mat.Matrix) {
	for i := range a.n {
		for j := range a.n {
			dst.Set(r+i, c+j, dst.At(r+i, c+j)+f*b.At(i, j))
		}
	}
}

// Round returns the number of rounds the auditor has advanced.
func (a *FinalAudit) Round() int { return a.round }

// Advance moves the auditor one round on: the means and the covariance of
// the state, and the discriminant of the final models after the round. It
// returns an error if their covariance is not positive definite (not
// reached with noise: it is at least every agent's C_i).
func (a *FinalAudit) Advance() error {
	var next mat.VecDense
	next.MulVec(a.m, a.mean)
	next.AddVec(&next, a.c)
	a.mean.CopyVec(&next)
	next.MulVec(a.m, a.diff)
	next.AddVec(&next, a.dc)
	a.diff.CopyVec(&next)
	a.tmp.Mul(a.m, a.cov)
	a.cov.Mul(a.tmp, a.m.T())
	a.cov.Add(a.cov, a.q)
	a.round++
	k := a.n * a.agents
	view := mat.NewSymDense(k, nil)
	for i := range k {
		for j := i; j < k; j++ {
			view.SetSym(i, j, (a.cov.At(i, j)+a.cov.At(j, i))/2) // symmetric up to rounding
		}
	}
	var ch mat.Cholesky
	if ok := ch.Factorize(view); !ok {
		return fmt.Errorf("round %d: the covariance of the final models is not positive definite", a.round)
	}
	mu := mat.NewVecDense(k, nil)
	for i := range k {
		mu.SetVec(i, a.diff.AtVec(i))
		a.center[i] = a.mean.AtVec(i)
	}
	w := mat.NewVecDense(k, a.weights)
	if err := ch.SolveVecTo(w, mu); err != nil {
		return fmt.Errorf("round %d: %v", a.round, err)
	}
	a.mu2 = mat.Dot(mu, w)
	return nil
}

// Mu returns μ after the rounds advanced: the final models' privacy loss
// between the two datasets is N(±½μ², μ²), the Gaussian mechanism of
// sensitivity μ (0 before the first round).
func (a *FinalAudit) Mu() float64 { return math.Sqrt(max(a.mu2, 0)) }

// Score returns the log-likelihood ratio ln p_D(x)/p_D′(x) of the final
// local models x (one per agent) after the rounds advanced: positive
// evidence for the canary.
func (a *FinalAudit) Score(x [][]float64) float64 {
	if a.round == 0 {
		return 0
	}
	var s float64
	for i, xi := range x {
		for j, v := range xi {
			k := i*a.n + j
			s += a.weights[k] * (v - a.center[k])
		}
	}
	return s - a.mu2/2
}

// LabelCanary returns a copy of s, a least-squares dataset, whose first
// sample's label b is raised by L/(2‖a‖), a being its features: the
// per-sample gradient −2(b − aᵀw)a moves by 2‖a‖·L/(2‖a‖) = L at every w, so
// the agent's gradient ∇f_i moves by exactly L/q_i — the most Assumption 3
// allows with sensitivity L — in one direction at every w, every local
// step adding the same shift to the mean: the worst neighbour of a
// Gaussian mechanism composed over the run. The features, and so H_i, stay
// as they are (they are shared with s, which is not modified).
func LabelCanary(s *data.Set, L float64) (*data.Set, error) {
	a := make([]float64, s.Dim)
	s.AddScaledRow(a, 0, 1)
	norm := floats.Norm(a, 2)
	if !(norm > 0) || !(L > 0) {
		return nil, fmt.Errorf("a label canary needs a first sample with features and L > 0, got ‖a‖ = %v, L = %v", norm, L)
	}
	c := *s
	c.Y = append([]float64(nil), s.Y...)
	c.Y[0] += L / (2 * norm)
	return &c, nil
}
