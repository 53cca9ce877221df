package optimum

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// ErrNoMinimizer reports a loss without a unique minimizer to solve for: the
// MLP, whose risk is not convex.
var ErrNoMinimizer = errors.New("optimum: no unique minimizer")

// ErrNoConvergence reports an iterative solve that stopped before its gradient
// tolerance: the iteration limit was reached or the line search found no
// decrease.
var ErrNoConvergence = errors.New("optimum: no convergence")

// Report describes how a minimizer was computed. It is recorded in a run's
// summary.json, so that every MSD curve states the accuracy of its reference.
type Report struct {
	// Method is "closed-form", "newton" or "lbfgs".
	Method string `json:"method"`
	// Iterations is the number of Newton or L-BFGS iterations (0 for closed form).
	Iterations int `json:"iterations"`
	// GradNorm is ‖Σ_k π_k ∇J_k(w)‖ at the returned w.
	GradNorm float64 `json:"grad_norm"`
}

const (
	// relGradTol is the stopping tolerance on ‖∇F(w)‖ relative to
	// max(1, ‖∇F(0)‖). For features of unit scale the gradient is a weighted
	// mean of O(1)-sized terms, so its rounding floor is a few
	// ε·max(1, ‖∇F(0)‖) ≈ 1e-15; 1e-12 leaves a thousandfold margin while
	// making ‖w − w^o‖ ≤ ‖∇F‖/(2ρ) negligible next to any MSD a simulation
	// can reach.
	relGradTol = 1e-12
	// maxNewtonIterations bounds Newton's method, which needs 5–20 iterations
	// on well-posed logistic problems.
	maxNewtonIterations = 100
	// maxNewtonDim is the largest dimension solved by Newton's method, whose
	// dense Hessian costs M² memory and M³/3 flops per factorization; above it
	// L-BFGS is used.
	maxNewtonDim = 2000
	// armijo is the sufficient-decrease constant of the backtracking line search.
	armijo = 1e-4
	// minStep is the smallest step the line search tries before giving up.
	minStep = 0x1p-40
	// fullStepDecrement: when the Newton decrement λ² = −∇Fᵀd falls below this
	// fraction of 1 + |F|, the predicted decrease λ²/2 < 5e-11·(1 + |F|) is
	// within a few hundred times the rounding error of F (about √N·ε·|F| for N
	// samples), so the Armijo test could reject a good step for rounding
	// alone. Such a small λ puts w deep in Newton's region of quadratic
	// convergence, where the full step is taken without a test.
	fullStepDecrement = 1e-10
)

// Solve returns the minimizer w^o of the weighted aggregate risk
// F(w) = Σ_k π_k J_k(w) (thesis eq. 2.1 with π_k = 1/K; Perron weights for
// decentralized algorithms, see the package comment) to high accuracy, with a
// Report of how it was found. The weights must be non-negative and sum to 1.
//
// Least squares uses the closed form of LeastSquares. Logistic regression has
// none: Solve runs Newton's method from w = 0 with a backtracking (Armijo) line
// search, factorizing the Hessian Σ_k π_k (1/N_k) Σ_n ℓ″(x_nᵀw) x_n x_nᵀ + 2ρI
// by Cholesky, until ‖∇F‖ ≤ 1e-12·max(1, ‖∇F(0)‖). Above 2000 features the
// dense Hessian is too costly and L-BFGS, with the same line search, runs to
// the same tolerance instead. Softmax regression, whose Hessian is not a
// sum of scalar curvatures times x xᵀ, always takes L-BFGS; the MLP is not
// convex and is refused with ErrNoMinimizer.
//
// With ρ = 0 on separable data the logistic risk has no minimizer; the
// gradient test then stops at a large finite w, where ‖∇F‖ has decayed
// exponentially in the margin. Use ρ > 0, as all the papers do.
func Solve(l loss.Loss, sets []*data.Set, weights []float64) ([]float64, Report, error) {
	return SolveContext(context.Background(), l, sets, weights)
}

// SolveContext is Solve, stopping with an error wrapping ctx.Err() once ctx
// is done: it checks ctx before every iteration, every line-search trial and
// every agent's share of a Hessian or of the normal equations, so that an
// interrupted run does not wait for a solve of minutes. The checks read ctx
// and change nothing else: a solve that is not interrupted returns exactly
// what Solve does.
func SolveContext(ctx context.Context, l loss.Loss, sets []*data.Set, weights []float64) ([]float64, Report, error) {
	return SolveSource(ctx, l, data.Sets(sets), weights)
}

// SolveSource is SolveContext on the datasets of src, with uniform weights
// 1/K when weights is nil. A generated source's datasets are drawn anew on
// every pass over them (data.Each), so that the solve holds one agent's data
// at a time: the closed form takes two passes (the normal equations, then
// the gradient at w^o for the report), Newton's method or L-BFGS a few per
// iteration. Its datasets are not checked one by one (generated datasets
// are never empty and share agent 0's dimension). The numbers are those of
// SolveContext on the same datasets in memory, bit for bit.
func SolveSource(ctx context.Context, l loss.Loss, src data.Source, weights []float64) ([]float64, Report, error) {
	p, err := newProblem(l, src, weights)
	if err != nil {
		return nil, Report{}, err
	}
	p.ctx = ctx
	if err := p.interrupted(); err != nil {
		return nil, Report{}, err
	}
	switch {
	case l.Kind == loss.LeastSquares:
		w, err := leastSquares(ctx, src, p.weight, l.Rho)
		if err != nil {
			return nil, Report{}, err
		}
		return w, Report{Method: "closed-form", GradNorm: p.gradNorm(w)}, nil
	case l.Kind == loss.Logistic && p.dim <= maxNewtonDim:
		return p.newton()
	case l.Kind == loss.Logistic || l.Kind == loss.Softmax:
		return p.lbfgs()
	case l.Kind == loss.MLP || l.Kind == loss.CNN:
		return nil, Report{}, fmt.Errorf("%w: the %v loss is not convex", ErrNoMinimizer, l.Kind)
	}
	return nil, Report{}, fmt.Errorf("optimum: no solver for loss %v", l.Kind)
}

// Local returns the minimizer w_k^o of one agent's risk J_k (thesis
// Assumption 2.2), computed as Solve does.
func Local(l loss.Loss, s *data.Set) ([]float64, error) {
	w, _, err := Solve(l, []*data.Set{s}, []float64{1})
	return w, err
}

// Drift returns ξ = max_k ‖w_k^o − w^o‖, the bound on the distance between the
// local and global minimizers of thesis Assumption 2.2, which sets the MSD
// plateau of federated learning on non-IID data (thesis §2.6.3, Fig. 2.5).
func Drift(l loss.Loss, sets []*data.Set, wOpt []float64) (xi float64, err error) {
	if len(sets) == 0 {
		return 0, errors.New("optimum: no datasets")
	}
	for k, s := range sets {
		if l.Dim(s.Dim) != len(wOpt) {
			return 0, fmt.Errorf("optimum: agent %d has model dimension %d, w^o has %d", k, l.Dim(s.Dim), len(wOpt))
		}
		wk, err := Local(l, s)
		if err != nil {
			return 0, fmt.Errorf("agent %d: %w", k, err)
		}
		xi = max(xi, floats.Distance(wk, wOpt, 2))
	}
	return xi, nil
}

// problem is the weighted aggregate risk F(w) = Σ_k π_k J_k(w).
type problem struct {
	l       loss.Loss
	sets    data.Source
	weight  func(k int) float64 // π_k
	dim     int
	scratch []float64
	ctx     context.Context // checked between iterations (interrupted)
}

// interrupted returns an error wrapping the context's error once it is done.
func (p *problem) interrupted() error {
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("optimum: interrupted: %w", err)
	}
	return nil
}

// newProblem validates the inputs of Solve: every dataset of a source held
// in memory, agent 0's of a generated one.
func newProblem(l loss.Loss, src data.Source, weights []float64) (*problem, error) {
	K := src.Agents()
	if K == 0 || weights != nil && K != len(weights) {
		return nil, fmt.Errorf("optimum: %d datasets but %d weights", K, len(weights))
	}
	if !(l.Rho >= 0) || math.IsInf(l.Rho, 1) {
		return nil, fmt.Errorf("optimum: ρ must be finite and non-negative, got %v", l.Rho)
	}
	if err := l.Validate(); err != nil && (l.Kind == loss.Softmax || l.Kind == loss.MLP || l.Kind == loss.CNN) {
		return nil, fmt.Errorf("optimum: loss %v", err)
	}
	first := src.Set(0)
	checked := K
	if data.Generated(src) {
		checked = 1
	}
	for k := range checked {
		s := src.Set(k)
		switch {
		case s.Len() == 0 || s.Dim < 1:
			return nil, fmt.Errorf("optimum: dataset %d is empty", k)
		case s.Dim != first.Dim:
			return nil, fmt.Errorf("optimum: dataset %d has dimension %d, dataset 0 has %d", k, s.Dim, first.Dim)
		}
	}
	uniform := 1 / float64(K)
	weight := func(int) float64 { return uniform }
	if weights != nil {
		var sum float64
		for k, v := range weights {
			if !(v >= 0) || math.IsInf(v, 1) {
				return nil, fmt.Errorf("optimum: weight %d is %v, not finite and non-negative", k, v)
			}
			sum += v
		}
		// A computed Perron vector sums to 1 within K·ε; 1e-9 only catches mistakes.
		if math.Abs(sum-1) > 1e-9 {
			return nil, fmt.Errorf("optimum: weights sum to %v, not 1", sum)
		}
		weight = func(k int) float64 { return weights[k] }
	}
	dim := l.Dim(first.Dim)
	return &problem{l: l, sets: src, weight: weight, dim: dim, scratch: make([]float64, dim), ctx: context.Background()}, nil
}

// value returns F(w).
func (p *problem) value(w []float64) float64 {
	var f float64
	data.Each(p.sets, func(k int, s *data.Set) error {
		f += p.weight(k) * p.l.Risk(w, s)
		return nil
	})
	return f
}

// grad sets dst to ∇F(w). dst must not alias w. The agents' gradients of a
// generated source are computed on every core, each into its own vector,
// and added in agent order; those of datasets in memory in turn, in one
// scratch vector. (Fold reuses the agents' vectors and the storage their
// datasets are drawn into.)
func (p *problem) grad(dst, w []float64) {
	clear(dst)
	if !data.Generated(p.sets) {
		for k := range p.sets.Agents() {
			p.l.FullGrad(p.scratch, w, p.sets.Set(k))
			floats.AddScaled(dst, p.weight(k), p.scratch)
		}
		return
	}
	data.Fold(p.sets, func(_ int, sets []*data.Set, out [][]float64) {
		for i, s := range sets {
			if len(out[i]) != len(w) {
				out[i] = make([]float64, len(w))
			}
			p.l.FullGrad(out[i], w, s)
		}
	}, func(k int, _ *data.Set, g *[]float64) error {
		floats.AddScaled(dst, p.weight(k), *g)
		return nil
	})
}

// gradNorm returns ‖∇F(w)‖.
func (p *problem) gradNorm(w []float64) float64 {
	g := make([]float64, p.dim)
	p.grad(g, w)
	return floats.Norm(g, 2)
}

// newton runs Newton's method from w = 0 (see Solve).
func (p *problem) newton() ([]float64, Report, error) {
	return p.descend("newton", "Newton's method", maxNewtonIterations, newtonSteps{p})
}

// newtonSteps are the search directions of Newton's method.
type newtonSteps struct{ p *problem }

func (n newtonSteps) direction(d, w, g []float64) error { return n.p.newtonDirection(d, w, g) }

func (newtonSteps) observe(s, y []float64) {}

// descentMethod supplies the search directions of a line-search descent.
type descentMethod interface {
	// direction sets d to a descent direction at w, where the gradient is g.
	direction(d, w, g []float64) error
	// observe learns from a step s = w′ − w with gradient change
	// y = ∇F(w′) − ∇F(w).
	observe(s, y []float64)
}

// descend minimizes F from w = 0 with m's directions and the backtracking
// line search, until ‖∇F‖ ≤ relGradTol·max(1, ‖∇F(0)‖) or maxIter
// iterations; method names the result's Report and what names the method in
// errors.
func (p *problem) descend(method, what string, maxIter int, m descentMethod) ([]float64, Report, error) {
	w := make([]float64, p.dim)
	g := make([]float64, p.dim)
	next := make([]float64, p.dim)
	d := make([]float64, p.dim)
	trial := make([]float64, p.dim)
	p.grad(g, w)
	tol := relGradTol * max(1, floats.Norm(g, 2))
	for it := 0; ; it++ {
		rep := Report{Method: method, Iterations: it, GradNorm: floats.Norm(g, 2)}
		if rep.GradNorm <= tol {
			return w, rep, nil
		}
		if it == maxIter {
			return nil, rep, fmt.Errorf("%w: %s left ‖∇F‖ = %g > %g after %d iterations",
				ErrNoConvergence, what, rep.GradNorm, tol, it)
		}
		if err := p.interrupted(); err != nil {
			return nil, rep, err
		}
		if err := m.direction(d, w, g); err != nil {
			return nil, rep, fmt.Errorf("optimum: %s, iteration %d: %w", what, it, err)
		}
		t, err := p.lineSearch(trial, w, d, g)
		if ctxErr := p.ctx.Err(); err != nil && ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, rep, err // interrupted, not a failure to converge
		}
		if err != nil {
			return nil, rep, fmt.Errorf("%w: %s, iteration %d: %w", ErrNoConvergence, what, it, err)
		}
		floats.AddScaled(w, t, d)
		p.grad(next, w)
		floats.Scale(t, d)       // d is now the step s
		floats.SubTo(g, next, g) // g is now y = ∇F(w′) − ∇F(w)
		m.observe(d, g)
		g, next = next, g
	}
}

// newtonDirection sets d = −H(w)⁻¹ g.
func (p *problem) newtonDirection(d, w, g []float64) error {
	h, err := p.hessian(w)
	if err != nil {
		return err
	}
	var chol mat.Cholesky
	if !chol.Factorize(h) {
		return errors.New("the Hessian is not positive definite (ρ = 0 with rank-deficient data?)")
	}
	dst := mat.NewVecDense(p.dim, d)
	if err := chol.SolveVecTo(dst, mat.NewVecDense(p.dim, g)); err != nil {
		return err
	}
	floats.Scale(-1, d)
	return nil
}

// hessian returns ∇²F(w) = Σ_k π_k (1/N_k) Σ_n ℓ″(x_nᵀw, y_n) x_n x_nᵀ + 2ρ(Σ_k π_k) I,
// the regularizer weighted as in loss.FullGrad, or the error of an
// interruption.
func (p *problem) hessian(w []float64) (*mat.SymDense, error) {
	h := make([]float64, p.dim*p.dim)
	var total float64
	err := data.Each(p.sets, func(k int, s *data.Set) error {
		if err := p.interrupted(); err != nil {
			return err
		}
		scale := p.weight(k) / float64(s.Len())
		total += p.weight(k)
		for n := 0; n < s.Len(); n++ {
			c := scale * p.l.Curvature(s.Dot(n, w), s.Y[n])
			addOuter(h, p.dim, s, n, c)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for j := 0; j < p.dim; j++ {
		h[j*p.dim+j] += 2 * p.l.Rho * total
	}
	return mat.NewSymDense(p.dim, h), nil
}

// addOuter adds c·x_n x_nᵀ to the upper triangle of the row-major dim×dim h,
// touching only the non-zeros of a sparse row.
func addOuter(h []float64, dim int, s *data.Set, n int, c float64) {
	if !s.Sparse() {
		x := s.Row(n)
		for i, xi := range x {
			if xi == 0 {
				continue
			}
			row, a := h[i*dim:(i+1)*dim], c*xi
			for j := i; j < dim; j++ {
				row[j] += a * x[j]
			}
		}
		return
	}
	lo, hi := s.RowPtr[n], s.RowPtr[n+1]
	cols, vals := s.Col[lo:hi], s.Val[lo:hi]
	for a, ca := range cols {
		v := c * vals[a]
		for b := a; b < len(cols); b++ {
			i, j := int(min(ca, cols[b])), int(max(ca, cols[b]))
			h[i*dim+j] += v * vals[b]
		}
	}
}

// lineSearch returns a step t satisfying the Armijo condition
// F(w + t d) ≤ F(w) + armijo·t·∇Fᵀd, halving from t = 1, or t = 1 at once when
// the Newton decrement is below F's rounding level (see fullStepDecrement).
// trial is scratch.
func (p *problem) lineSearch(trial, w, d, g []float64) (float64, error) {
	dec := -floats.Dot(g, d)
	f := p.value(w)
	if dec <= fullStepDecrement*(1+math.Abs(f)) {
		return 1, nil
	}
	for t := 1.0; t >= minStep; t /= 2 {
		if err := p.interrupted(); err != nil {
			return 0, err
		}
		floats.AddScaledTo(trial, w, t, d)
		if p.value(trial) <= f-armijo*t*dec {
			return t, nil
		}
	}
	return 0, fmt.Errorf("line search found no decrease down to step %g (Newton decrement %g)", minStep, dec)
}
